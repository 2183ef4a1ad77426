"""Broken framing, malformed and out-of-order messages over stdio: each
gets the error JSON-RPC and LSP name where they name one, and the server
keeps serving the next message."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from .rawclient import RawClient
from .test_lifecycle import initialize, progress_kinds, wait_for
from .trees import write_tree

pytestmark = pytest.mark.e2e

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


async def serving(tmp_path: Path) -> RawClient:
    root = write_tree(tmp_path / "ws", 10)
    client = await RawClient.start(stderr=True)
    await initialize(client, root, {})
    await wait_for(lambda: "end" in progress_kinds(client))
    return client


async def still_answers(client: RawClient) -> None:
    reply = await client.request("workspace/symbol", {"query": "gen_3_4"})
    assert reply["result"][0]["name"] == "gen_3_4", reply


def errors_about_nothing(client: RawClient) -> list[int]:
    """The codes of the errors answering raw messages (a null id, or one
    the client did not send as a request)."""
    return [n["error"]["code"] for n in client.notifications if "error" in n]


def request_body(msg_id: int, query: str = "gen_1_2") -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": msg_id, "method": "workspace/symbol", "params": {"query": query}}
    ).encode()


async def test_the_index_does_not_wait_for_the_client_to_take_a_progress_token(
    tmp_path: Path,
) -> None:
    """A client that offers work-done progress and is slow to answer
    `window/workDoneProgress/create` (or never does) still gets its folder
    indexed and answered; the progress is shown once it answers, begun
    before it ends."""
    root = write_tree(tmp_path / "ws", 10)
    client = await RawClient.start(stderr=True)
    client.held.add("window/workDoneProgress/create")
    await initialize(client, root, {})
    await wait_for(lambda: bool(client.held_requests))
    found: list[str] = []

    async def answered() -> bool:
        reply = await client.request("workspace/symbol", {"query": "gen_9_39"})
        found[:] = [row["name"] for row in reply["result"]]
        return "gen_9_39" in found

    for _ in range(500):
        if await answered():
            break
        await asyncio.sleep(0.02)
    assert "gen_9_39" in found
    assert progress_kinds(client) == []  # no progress on a token not yet taken
    client.send({"id": client.held_requests[0]["id"], "result": None})
    await wait_for(lambda: "end" in progress_kinds(client))
    assert progress_kinds(client)[0] == "begin"
    await client.close()


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: 1000000000000\r\n\r\n",
        b"Content-Length: 1e12\r\n\r\n",
        b"Content-Length: -5\r\n\r\n",
        b"Content-Length: lots\r\n\r\n",
        b"Content-Type: application/vscode-jsonrpc\r\n\r\n",  # no length at all
        b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n",
    ],
)
async def test_a_bad_header_is_a_parse_error_and_the_next_message_is_served(
    tmp_path: Path, header: bytes
) -> None:
    client = await serving(tmp_path)
    try:
        client.process.stdin.write(header + b'{"jsonrpc": "2.0", "id": 99, "method": "x"}')  # type: ignore[union-attr]
        await still_answers(client)
        await wait_for(lambda: PARSE_ERROR in errors_about_nothing(client), 10)
    finally:
        assert await client.close() == 0
    assert "Traceback" not in await client.errors()


async def test_lenient_headers_are_read(tmp_path: Path) -> None:
    """A lowercase header name, LF-only line ends, an extra header."""
    client = await serving(tmp_path)
    try:
        stdin = client.process.stdin
        assert stdin is not None
        for n, frame in enumerate(
            [
                b"content-length: %d\r\n\r\n",
                b"Content-Length: %d\n\n",
                b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n",
            ]
        ):
            body = request_body(500 + n)
            future = asyncio.get_running_loop().create_future()
            client.pending[500 + n] = future
            stdin.write(frame % len(body) + body)
            reply = await asyncio.wait_for(future, 10)
            assert reply["result"][0]["name"] == "gen_1_2"
        assert errors_about_nothing(client) == []
    finally:
        assert await client.close() == 0


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", PARSE_ERROR),
        (
            b'{"jsonrpc": "2.0", "id": 7, "method": "workspace/symbol", "params": {"query": ',
            PARSE_ERROR,
        ),
        (b"\xff\xfe garbage", PARSE_ERROR),
        (b"[1, 2, 3]", INVALID_REQUEST),
        (b"42", INVALID_REQUEST),
        (b'{"id": 8, "method": "workspace/symbol", "params": {"query": "x"}}', INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "params": {}}', INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 9, "method": 17}', INVALID_REQUEST),
    ],
)
async def test_a_malformed_body_gets_its_error(tmp_path: Path, body: bytes, code: int) -> None:
    client = await serving(tmp_path)
    try:
        client.send_bytes(body)
        await wait_for(lambda: code in errors_about_nothing(client), 10)
        await still_answers(client)
    finally:
        assert await client.close() == 0
    assert "Traceback" not in await client.errors()


async def test_out_of_order_messages(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", 10)
    client = await RawClient.start(stderr=True)
    try:
        client.notify("initialized", {})  # before initialize: ignored
        client.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///x.py"}})
        early = await client.request("workspace/symbol", {"query": "gen"})
        assert early["error"]["code"] == -32002  # ServerNotInitialized
        client.send({"id": 4242, "result": {"unasked": True}})  # a response nobody asked for
        await initialize(client, root, {})
        await wait_for(lambda: "end" in progress_kinds(client))
        again = await client.request(
            "initialize", {"processId": None, "rootUri": None, "capabilities": {}}
        )
        assert "error" in again or "result" in again  # answered, either way
        await still_answers(client)
    finally:
        assert await client.close() == 0
    assert "Traceback" not in await client.errors()
