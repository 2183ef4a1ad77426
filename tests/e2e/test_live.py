"""The live workspace over stdio: buffers, disk changes, folders, partial
results, resolve, cancellation, configuration and errors."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from ..processes import children, running
from .conftest import FIXTURE
from .rawclient import RawClient

CAPABILITIES = FIXTURE.parent / "client-capabilities"

pytestmark = pytest.mark.e2e

WATCHING = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
NOT_WATCHING: dict[str, Any] = {}


async def session(root: Path, capabilities: dict[str, Any], **extra: Any) -> RawClient:
    client = await RawClient.start()
    params = {
        "processId": None,
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        "capabilities": {"window": {"workDoneProgress": True}, **capabilities},
        **extra,
    }
    client.initialize_result = await client.request("initialize", params)  # type: ignore[attr-defined]
    client.notify("initialized", {})
    await until(client, "HTTPServer", lambda names: "HTTPServer" in names)
    return client


async def names(client: RawClient, query: str, **extra: Any) -> list[str]:
    answer = await client.request("workspace/symbol", {"query": query, **extra})
    return [s["name"] for s in answer["result"]]


async def until(client: RawClient, query: str, check: Any, seconds: float = 10) -> list[str]:
    found: list[str] = []
    for _ in range(int(seconds / 0.05)):
        found = await names(client, query)
        if check(found):
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{query!r} never satisfied the check; last answer {found}")


def did_open(client: RawClient, path: Path, text: str) -> None:
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": path.as_uri(),
                "languageId": "python",
                "version": 1,
                "text": text,
            }
        },
    )


async def test_unsaved_new_file_is_found_until_closed(workspace: Path) -> None:
    client = await session(workspace, NOT_WATCHING)
    try:
        path = workspace / "app" / "draft.py"
        did_open(client, path, "")
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": path.as_uri(), "version": 2},
                "contentChanges": [{"text": "def never_saved_helper():\n    pass\n"}],
            },
        )
        assert await names(client, "never_saved_helper") == ["never_saved_helper"]
        client.notify("textDocument/didClose", {"textDocument": {"uri": path.as_uri()}})
        assert await names(client, "never_saved_helper") == []
    finally:
        assert await client.close() == 0


async def test_watched_files_notification_drops_a_deleted_file(workspace: Path) -> None:
    client = await session(workspace, WATCHING)
    try:
        target = workspace / "beta" / "registry.py"
        assert "unregister" in await names(client, "unregister")
        target.unlink()
        client.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": target.as_uri(), "type": 3}]}
        )
        assert await names(client, "unregister") == []
        added = workspace / "beta" / "fresh.py"
        added.write_text("def freshly_created():\n    pass\n")
        client.notify(
            "workspace/didChangeWatchedFiles", {"changes": [{"uri": added.as_uri(), "type": 1}]}
        )
        assert await names(client, "freshly_created") == ["freshly_created"]
    finally:
        assert await client.close() == 0


async def test_own_watcher_sees_files_created_and_deleted(workspace: Path) -> None:
    client = await session(workspace, NOT_WATCHING)
    try:
        added = workspace / "alpha" / "watched.py"
        added.write_text("def seen_by_the_watcher():\n    pass\n")
        await until(client, "seen_by_the_watcher", lambda n: n == ["seen_by_the_watcher"])
        shutil.rmtree(workspace / "alpha")
        await until(client, "AlphaPlugin", lambda n: n == [])
    finally:
        assert await client.close() == 0


async def test_own_watcher_is_no_process_and_a_killed_server_leaves_none(
    workspace: Path,
) -> None:
    """On Linux our watcher is inotify on a thread of the server: no helper
    process (`test_watcher_helper` has the helper, for other systems); a
    server killed outright leaves no process it started behind."""
    client = await session(workspace, NOT_WATCHING)
    started = children(client.process.pid)
    assert [c for c in started.values() if b"nearsym.workspace.watcher" in c] == []
    client.process.kill()
    await client.process.wait()
    for _ in range(200):
        if not any(running(pid) for pid in started):
            break
        await asyncio.sleep(0.05)
    assert [started[pid] for pid in started if running(pid)] == []


async def test_new_workspace_folder_is_indexed_and_a_removed_one_dropped(
    workspace: Path, tmp_path: Path
) -> None:
    client = await session(workspace, NOT_WATCHING)
    try:
        other = tmp_path / "other"
        other.mkdir()
        (other / "extra.go").write_text("package extra\n\nfunc OtherFolderFunc() {}\n")
        folder = {"uri": other.as_uri(), "name": "other"}
        client.notify(
            "workspace/didChangeWorkspaceFolders", {"event": {"added": [folder], "removed": []}}
        )
        await until(client, "OtherFolderFunc", lambda n: n == ["OtherFolderFunc"])
        client.notify(
            "workspace/didChangeWorkspaceFolders", {"event": {"added": [], "removed": [folder]}}
        )
        await until(client, "OtherFolderFunc", lambda n: n == [])
    finally:
        assert await client.close() == 0


async def test_partial_results_concatenate_to_the_unpaged_answer(workspace: Path) -> None:
    client = await session(workspace, NOT_WATCHING, initializationOptions={"maxResults": 30})
    try:
        whole = await client.request("workspace/symbol", {"query": ""})
        paged = await client.request("workspace/symbol", {"query": "", "partialResultToken": "pr"})
        assert paged["result"] == []
        parts = [
            n["params"]["value"]
            for n in client.notifications
            if n.get("method") == "$/progress" and n["params"]["token"] == "pr"
        ]
        assert len(parts) >= 2
        assert [s for part in parts for s in part] == whole["result"]
    finally:
        assert await client.close() == 0


async def test_superseded_queries_are_cancelled(workspace: Path) -> None:
    """Keystrokes faster than answers: each query is cancelled as the next one
    is sent, the way VS Code does. Queued ones answer RequestCancelled; the
    last one is answered; the server keeps serving."""
    for n in range(300):
        (workspace / "app" / f"bulk{n}.py").write_text(
            "".join(f"def entry_{n}_{k}():\n    pass\n" for k in range(40))
        )
    client = await session(workspace, NOT_WATCHING)
    try:
        await until(client, "entry_299_39", lambda n: n == ["entry_299_39"])
        loop = asyncio.get_running_loop()
        futures = []
        wire = b""
        for k in range(30):
            msg_id = 1000 + k
            futures.append(loop.create_future())
            client.pending[msg_id] = futures[-1]
            messages = [{"jsonrpc": "2.0", "id": msg_id, "method": "workspace/symbol",
                         "params": {"query": "entry"[: 1 + k % 5]}}]  # fmt: skip
            if k < 29:
                messages.append(
                    {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}}
                )
            for m in messages:
                body = json.dumps(m).encode()
                wire += b"Content-Length: %d\r\n\r\n" % len(body) + body
        assert client.process.stdin is not None
        client.process.stdin.write(wire)
        answers = [await asyncio.wait_for(f, 30) for f in futures]
        cancelled = [a for a in answers if a.get("error", {}).get("code") == -32800]
        assert cancelled, "no superseded query was cancelled"
        assert "result" in answers[-1] and answers[-1]["result"]
        assert all("result" in a or a["error"]["code"] == -32800 for a in answers)
        assert await names(client, "register")
    finally:
        assert await client.close() == 0


async def test_a_client_that_resolves_ranges_still_gets_them_at_once(workspace: Path) -> None:
    """VS Code's language client declares resolve support for
    `location.range`; a uri-only answer then opened at line 1 wherever the
    client did not resolve it (the extension's own picker). The range is
    always sent, and no resolve is offered."""
    recorded = CAPABILITIES / "vscode-1.100.3-languageclient-11.0.0.json"
    vscode = json.loads(recorded.read_text())["capabilities"]
    assert "location.range" in vscode["workspace"]["symbol"]["resolveSupport"]["properties"]
    client = await session(workspace, vscode)
    try:
        provider = client.initialize_result["result"]["capabilities"]["workspaceSymbolProvider"]  # type: ignore[attr-defined]
        assert provider in (True, {}) or not provider.get("resolveProvider")
        answer = await client.request("workspace/symbol", {"query": "HTTPServer"})
        assert answer["result"][0]["location"]["range"] == {
            "start": {"line": 6, "character": 5},
            "end": {"line": 6, "character": 15},
        }
        assert "data" not in answer["result"][0]
    finally:
        assert await client.close() == 0


async def test_configuration_change_applies_and_reports_bad_values(workspace: Path) -> None:
    client = await session(workspace, NOT_WATCHING)
    try:
        client.notify(
            "workspace/didChangeConfiguration",
            {"settings": {"nearsym": {"exclude": ["beta/"], "maxResults": "lots"}}},
        )
        await until(client, "unregister", lambda n: n == [])
        assert any(
            n.get("method") == "window/showMessage" and "maxResults" in n["params"]["message"]
            for n in client.notifications
        )
        client.notify(
            "workspace/didChangeConfiguration", {"settings": {"nearsym": {"languages": ["go"]}}}
        )
        await until(client, "register", lambda n: n == [])
        assert "HTTPServer" in await names(client, "HTTPServer")  # never dropped meanwhile
    finally:
        assert await client.close() == 0


async def test_protocol_errors_get_json_rpc_errors_and_the_server_keeps_serving(
    workspace: Path,
) -> None:
    client = await RawClient.start()
    try:
        early = await client.request("workspace/symbol", {"query": "x"})
        assert early["error"]["code"] == -32002  # ServerNotInitialized
        client.notify("initialize", None)  # a notification where a request belongs
        client.send_bytes(b"{not json")
        answer = await client.request(
            "initialize",
            {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}},
        )
        assert "capabilities" in answer["result"]
        client.notify("initialized", {})
        unknown = await client.request("nearsym/noSuchMethod", {})
        assert unknown["error"]["code"] == -32601
        malformed = await client.request("workspace/symbol", {"no_query": True})
        assert malformed["error"]["code"] in (-32602, -32603)  # invalid params
        await until(client, "HTTPServer", lambda n: "HTTPServer" in n)
        # Any query string gets an answer: a lone surrogate (JSON can carry
        # one), NUL, other scripts, punctuation alone, a huge one.
        for odd in ["\ud800", "Reg\udfffistry", "\x00", "é漢", ".", "::", "->", "   ", "a" * 5000]:
            reply = await client.request("workspace/symbol", {"query": odd})
            assert isinstance(reply.get("result"), list), (odd, reply)
        assert "HTTPServer" in await names(client, "HTTPServer")
    finally:
        assert await client.close() == 0


def test_fixture_is_untouched() -> None:
    assert (FIXTURE / "beta" / "registry.py").exists()


async def test_a_large_file_opened_as_on_disk_starts_no_parse_helper(workspace: Path) -> None:
    """An editor opens files unmodified: their symbols are the index's and
    nothing is parsed; a buffer over `IN_PROCESS_BYTES` would otherwise
    start a helper process (an interpreter and the grammars) on every open.
    The first edit makes it a buffer, parsed in a helper (one per parse,
    gone after it: the children are sampled meanwhile)."""
    big = workspace / "app" / "generated.py"
    big.write_text("".join(f"def generated_{n}(value):\n    return value\n\n" for n in range(3000)))
    assert big.stat().st_size > 64 * 1024
    client = await session(workspace, WATCHING)
    seen: list[bytes] = []

    async def sample() -> None:
        while True:
            seen.extend(children(client.process.pid).values())
            await asyncio.sleep(0.005)

    sampler = asyncio.ensure_future(sample())
    try:
        await until(client, "generated_2999", lambda found: found == ["generated_2999"])
        seen.clear()
        did_open(client, big, big.read_text())
        assert await names(client, "generated_1234") == ["generated_1234"]
        await asyncio.sleep(0.5)
        assert [c for c in seen if b"parsehelper" in c] == []
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": big.as_uri(), "version": 2},
                "contentChanges": [
                    {"text": big.read_text() + "def typed_at_the_end():\n    pass\n"}
                ],
            },
        )
        assert await until(client, "typed_at_the_end", lambda f: f == ["typed_at_the_end"])
        assert [c for c in seen if b"parsehelper" in c]
    finally:
        sampler.cancel()
        assert await client.close() == 0


async def test_what_the_open_file_says_is_read_ahead_of_the_first_query(workspace: Path) -> None:
    """Once the focus rests on a file (`WARM_DELAY`), its imports and
    classes are read on the search thread, so the first query after a
    switch finds them ready; a file the focus only passed through is not
    read (a session restored opens several at once)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nearsym", "--log-level", "DEBUG", "serve", "--stdio",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    client = RawClient(process)
    root = workspace
    await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {"window": {"workDoneProgress": True}, **WATCHING},
        },
    )
    client.notify("initialized", {})
    await until(client, "HTTPServer", lambda names: "HTTPServer" in names)
    passed, rested = sorted(p for p in root.rglob("*.py"))[:2]
    did_open(client, passed, passed.read_text())
    did_open(client, rested, rested.read_text())
    for _ in range(100):
        await asyncio.sleep(0.05)
    assert (await names(client, "HTTPServer"))[0] == "HTTPServer"
    assert await client.close() == 0
    log = await client.errors()
    assert f"read ahead what {rested} says" in log
    assert f"read ahead what {passed} says" not in log
