"""A restart's first messages, answered before pygls and lsprotocol are
imported (`nearsym.lsp.opening`), through the real server over stdio: the
same answers as the started server gives, nothing sent twice, and the
cases where the opening must leave everything to pygls."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from ..processes import descendants
from .rawclient import RawClient
from .test_lifecycle import progress_kinds, wait_for

pytestmark = pytest.mark.e2e

PACKAGES = ("asyncio", "email", "json", "logging")
QUERIES = ("BaseEventLoop", "Message", "getLogger", "ldum", "Handler", "_decode")
OPEN = Path("asyncio") / "tasks.py"


def stdlib_tree(root: Path) -> Path:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for package in PACKAGES:
        shutil.copytree(
            stdlib / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "test*")
        )
    return root


async def start(cache: Path) -> RawClient:
    """The server with its log on stderr at INFO (the opening says what it did)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nearsym", "--log-level", "INFO", "serve",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, "NEARSYM_CACHE_DIR": str(cache)},
    )  # fmt: skip
    return RawClient(process)


def initialize_params(root: Path, capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "processId": None,
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
        "capabilities": {"window": {"workDoneProgress": True}, **capabilities},
    }


def opened(path: Path, text: str | None = None) -> dict[str, Any]:
    return {
        "textDocument": {
            "uri": path.as_uri(),
            "languageId": "python",
            "version": 1,
            "text": path.read_text() if text is None else text,
        }
    }


def rows(reply: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [
        (r["name"], r["location"]["uri"], r["location"]["range"]["start"]["line"])
        for r in reply["result"]
    ]


async def session(
    root: Path,
    cache: Path,
    capabilities: dict[str, Any] | None = None,
    text: str | None = None,
    queries: tuple[str, ...] = QUERIES,
) -> tuple[list[list[tuple[str, str, int]]], list[list[tuple[str, str, int]]], RawClient, str]:
    """A start whose queries come right after `initialized` and `didOpen`
    (in one write), then again once the index has ended: both answers,
    the client and the server's log."""
    client = await start(cache)
    try:
        await client.request("initialize", initialize_params(root, capabilities or {}), timeout=30)
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", opened(root / OPEN, text))
        asked = [
            asyncio.ensure_future(client.request("workspace/symbol", {"query": q}, timeout=30))
            for q in queries
        ]
        early = [rows(r) for r in await asyncio.gather(*asked)]
        await wait_for(lambda: "end" in progress_kinds(client))
        late = [
            rows(await client.request("workspace/symbol", {"query": q}, timeout=30))
            for q in queries
        ]
    finally:
        assert await client.close() == 0
    return early, late, client, await client.errors()


async def first_start(root: Path, cache: Path, capabilities: dict[str, Any] | None = None) -> None:
    """Index, and wait for the snapshot and the kept `initialize` reply."""
    await session(root, cache, capabilities, queries=())
    for _ in range(100):  # the snapshot is written in the background
        if list(cache.glob("opening-*.json")) and list(cache.glob("*.sqlite")):
            _early, _late, _client, log = await session(root, cache, capabilities, queries=())
            if "snapshot(s) installed" in log:
                return
        await asyncio.sleep(0.05)
    raise AssertionError("the restart never read its snapshot before pygls")


@pytest.mark.asyncio
async def test_a_restart_answers_before_pygls_as_the_started_server_does(tmp_path: Path) -> None:
    root = stdlib_tree(tmp_path / "ws")
    cache = tmp_path / "cache"
    await first_start(root, cache)
    early, late, client, log = await session(root, cache)
    assert f"{len(QUERIES)} queries answered" in log, log
    assert early == late
    assert all(early[:3])
    replies = [n for n in client.notifications if "id" in n and "method" not in n]
    assert replies == []  # nothing answered twice: the replayed initialize's reply is not sent
    assert "Traceback" not in log


@pytest.mark.asyncio
async def test_an_edited_buffer_is_left_to_the_started_server(tmp_path: Path) -> None:
    """A document whose text is not its file's (a restored unsaved edit)
    ends the opening: its answers come from the buffer, as always."""
    root = stdlib_tree(tmp_path / "ws")
    cache = tmp_path / "cache"
    await first_start(root, cache)
    text = (root / OPEN).read_text() + "\n\ndef only_in_the_buffer_xyz():\n    pass\n"
    early, late, _client, log = await session(
        root, cache, text=text, queries=("only_in_the_buffer_xyz",)
    )
    assert "0 queries answered" in log, log
    assert [name for name, _, _ in early[0]] == ["only_in_the_buffer_xyz"]
    assert early == late


@pytest.mark.asyncio
async def test_another_clients_start_is_left_to_pygls(tmp_path: Path) -> None:
    """The reply kept is one client's (its capabilities): another client
    is answered by pygls, and its reply kept in turn."""
    root = stdlib_tree(tmp_path / "ws")
    cache = tmp_path / "cache"
    await first_start(root, cache)
    other = {"workspace": {"symbol": {"symbolKind": {"valueSet": list(range(1, 27))}}}}
    early, late, _client, log = await session(root, cache, other)
    assert "snapshot(s) installed" not in log
    assert early == late and all(early[:3])
    early, late, _client, log = await session(root, cache, other)
    assert f"{len(QUERIES)} queries answered" in log
    assert early == late


def test_the_opening_imports_neither_pygls_nor_lsprotocol() -> None:
    """What runs before pygls is imported must not import it (nor what it
    brings): the opening is worth only what it does not import."""
    probe = (
        "import sys, json; import nearsym.lsp.opening; "
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('lsprotocol', 'cattrs', 'attr', 'attrs') "
        "or m.startswith(('pygls.protocol', 'pygls.lsp', 'pygls.server')))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == []


async def defined_at(client: RawClient, name: str) -> list[str]:
    """Where `name` is found, once it is (asked every 0.05 s, up to 10 s)."""
    found: list[str] = []
    for _ in range(200):
        reply = await client.request("workspace/symbol", {"query": name})
        found = [r["location"]["uri"] for r in reply["result"]]
        if found:
            break
        await asyncio.sleep(0.05)
    return found


async def restart_then_create(root: Path, cache: Path, touched: int) -> tuple[str, list[str]]:
    """A restart after `touched` files changed; once its index has ended,
    a new file is written: what the log says, and where the new file's
    definition is found (our watcher's inotify events, made before pygls
    when the opening indexed)."""
    for path in sorted(root.rglob("*.py"))[:touched]:
        path.write_text(path.read_text() + "\n\ndef touched_here():\n    pass\n")
    client = await start(cache)
    try:
        await client.request("initialize", initialize_params(root, {}), timeout=30)
        client.notify("initialized", {})
        await wait_for(lambda: "end" in progress_kinds(client))
        (root / "json" / "written_after.py").write_text(
            "def written_after_the_index():\n    pass\n"
        )
        found = await defined_at(client, "written_after_the_index")
    finally:
        assert await client.close() == 0
    return await client.errors(), found


@pytest.mark.asyncio
async def test_a_restart_indexes_before_pygls_and_keeps_watching(tmp_path: Path) -> None:
    """A client that does not watch files: the opening makes our inotify
    watches, walks, checks the files and ends the progress before pygls is
    imported; a file written after that is seen by the watcher the server
    takes over. With more changed files than `PARSE_LIMIT`, the started
    server indexes them (on its pool), and watches as well."""
    root = stdlib_tree(tmp_path / "ws")
    cache = tmp_path / "cache"
    await first_start(root, cache)
    log, found = await restart_then_create(root, cache, touched=2)
    assert ", before pygls" in log, log  # the opening's index summary
    assert found == [(root / "json" / "written_after.py").as_uri()]
    (root / "json" / "written_after.py").unlink()
    log, found = await restart_then_create(root, cache, touched=40)
    assert ", before pygls" not in log, log
    assert found == [(root / "json" / "written_after.py").as_uri()]
    assert "Traceback" not in log


@pytest.mark.asyncio
async def test_malformed_and_early_exit_messages_during_the_opening(tmp_path: Path) -> None:
    """What the opening does not read (a body that is not JSON, a request
    it does not answer) reaches pygls in order: the parse error is
    answered, the request too, and `exit` ends the process (code 1 without
    `shutdown`, as LSP says)."""
    root = stdlib_tree(tmp_path / "ws")
    cache = tmp_path / "cache"
    await first_start(root, cache)
    client = await start(cache)
    try:
        await client.request("initialize", initialize_params(root, {}), timeout=30)
        client.notify("initialized", {})
        client.send_bytes(b"{not json")
        symbols = asyncio.ensure_future(
            client.request("workspace/symbol", {"query": "getLogger"}, timeout=30)
        )
        hover = await client.request(
            "textDocument/hover",
            {
                "textDocument": {"uri": (root / OPEN).as_uri()},
                "position": {"line": 0, "character": 0},
            },
            timeout=30,
        )
        assert "error" in hover or hover.get("result") is None
        assert rows(await symbols)
        await wait_for(
            lambda: any(n.get("error", {}).get("code") == -32700 for n in client.notifications), 10
        )
        client.notify("exit", None)
        assert await asyncio.wait_for(client.process.wait(), 10) == 1
    finally:
        client.reader.cancel()
        if client.process.returncode is None:
            client.process.kill()
    log = await client.errors()
    assert "before pygls: initialize answered" in log, log  # the opening ran, then stopped
    assert "Traceback" not in log


@pytest.mark.asyncio
async def test_a_first_start_has_its_pool_starting_before_initialized(tmp_path: Path) -> None:
    """A folder with no cache (a cold index) has the pool's forkserver
    started by the opening, beside pygls's imports: it runs before the
    client has sent `initialized`, which is what starts the index. A
    restart on the folder's snapshot starts none."""
    root = stdlib_tree(tmp_path / "ws")
    cache = tmp_path / "cache"

    async def forkservers_before_initialized() -> int:
        client = await start(cache)
        try:
            await client.request("initialize", initialize_params(root, {}), timeout=30)
            for _ in range(100):
                found = descendants(client.process.pid).values()
                if any(b"forkserver" in command for command in found):
                    return 1
                await asyncio.sleep(0.05)
            return 0
        finally:
            assert await client.close() == 0

    assert await forkservers_before_initialized() == 1
    await first_start(root, cache)
    assert await forkservers_before_initialized() == 0


WATCHES = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}


async def restart_watched_by_the_client(
    root: Path, cache: Path, refuse: bool
) -> tuple[str, list[str], list[str]]:
    """A restart by a client that watches files (as VS Code): once its
    index has ended, a new file is written and, where the client took the
    registration, reported as VS Code does. What the log says, where the
    new file's definition is found, and what the server asked."""
    client = await start(cache)
    if refuse:
        client.held.add("client/registerCapability")
    try:
        await client.request("initialize", initialize_params(root, WATCHES), timeout=30)
        client.notify("initialized", {})
        if refuse:
            await wait_for(lambda: bool(client.held_requests))
            asked = client.held_requests.pop(0)
            client.send({"id": asked["id"], "error": {"code": -32603, "message": "no"}})
        await wait_for(lambda: "end" in progress_kinds(client))
        written = root / "json" / "written_after.py"
        written.write_text("def written_after_the_index():\n    pass\n")
        if not refuse:
            change = {"uri": written.as_uri(), "type": 1}
            client.notify("workspace/didChangeWatchedFiles", {"changes": [change]})
        found = await defined_at(client, "written_after_the_index")
    finally:
        assert await client.close() == 0
    written.unlink()
    return await client.errors(), found, client.asked


@pytest.mark.asyncio
async def test_a_client_that_watches_is_asked_before_pygls_and_indexed_there(
    tmp_path: Path,
) -> None:
    """VS Code's restart: the opening asks the client to watch the source
    files, and once it has taken them, walks, checks the files and ends the
    progress before pygls; the server asks nothing again, and the client's
    events keep the index fresh. A client that refuses: no index before
    pygls, and our own watcher sees the file written."""
    root = stdlib_tree(tmp_path / "ws")
    cache = tmp_path / "cache"
    await first_start(root, cache, WATCHES)
    log, found, asked = await restart_watched_by_the_client(root, cache, refuse=False)
    assert ", before pygls" in log, log
    assert found == [(root / "json" / "written_after.py").as_uri()]
    assert asked.count("client/registerCapability") == 1, asked
    log, found, asked = await restart_watched_by_the_client(root, cache, refuse=True)
    assert ", before pygls" not in log, log
    assert found == [(root / "json" / "written_after.py").as_uri()]
    assert asked.count("client/registerCapability") == 1, asked
    assert "Traceback" not in log
