"""The warm-start cache through the real server: a restart loads instead of
parsing, and a damaged cache file is replaced, never fatal."""

from __future__ import annotations

import asyncio
import shutil
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from .rawclient import RawClient

FIXTURE = Path(__file__).parent.parent / "fixtures" / "polyglot"


def _initialize_params(root: Path, capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "processId": None,
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
        "capabilities": capabilities,
    }


async def _index_once(root: Path) -> tuple[str, list[Any]]:
    client = await RawClient.start()
    try:
        await client.request(
            "initialize", _initialize_params(root, {"window": {"workDoneProgress": True}})
        )
        client.notify("initialized", {})
        for _ in range(300):
            ends = [
                n["params"]["value"].get("message", "")
                for n in client.notifications
                if n.get("method") == "$/progress" and n["params"]["value"].get("kind") == "end"
            ]
            if ends:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("indexing never ended")
        reply = await client.request("workspace/symbol", {"query": "register"})
        rows = sorted(
            (r["name"], r["location"]["uri"], r["location"]["range"]["start"]["line"])
            for r in reply["result"]
        )
        return ends[0], rows
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_restart_loads_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    cache = tmp_path / "cache"
    monkeypatch.setenv("NEARSYM_CACHE_DIR", str(cache))
    first, rows = await _index_once(root)
    assert "(0 files from the cache)" in first
    assert rows
    for _ in range(100):  # the snapshot is written in the background
        await asyncio.sleep(0.05)
        second, again = await _index_once(root)
        if "(0 files from the cache)" not in second:
            break
    assert "(0 files from the cache)" not in second, second
    assert again == rows
    # A damaged cache is discarded with a log line; the server still answers.
    (database,) = cache.glob("*.sqlite")
    database.write_bytes(b"\x00garbage" * 1000)
    third, after = await _index_once(root)
    assert "(0 files from the cache)" in third
    assert after == rows


STDLIB_PACKAGES = ("asyncio", "email", "json", "logging", "concurrent", "xml", "http", "unittest")
"""Real code for a snapshot larger than a handful of files: the server
reads it in tens of milliseconds, far longer than a query on an empty
index takes."""


def _stdlib_tree(root: Path) -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for package in STDLIB_PACKAGES:
        shutil.copytree(
            stdlib / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "test*")
        )


async def _restarted_from_the_snapshot(root: Path) -> str:
    """Restart until a restart reads the snapshot (written in the
    background after the first index): that restart's summary."""
    for _ in range(100):
        await asyncio.sleep(0.05)
        second, _ = await _index_once(root)
        if "(0 files from the cache)" not in second:
            break
    return second


async def _restart_and_ask(root: Path, query: str, open_file: Path) -> list[str]:
    """A restarted server's answer to the query an editor sends right after
    `initialized` and `didOpen`, in the same write as them."""
    client = await RawClient.start()
    try:
        await client.request("initialize", _initialize_params(root, {}))
        client.notify("initialized", {})
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": open_file.as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": open_file.read_text(),
                }
            },
        )
        reply = await client.request("workspace/symbol", {"query": query})
        return [r["location"]["uri"] for r in reply["result"]]
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_restart_answers_its_first_query_from_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query that comes before the snapshot is read waits for it
    (`server.START_WAIT`), instead of answering from the empty index: an
    editor shows that empty list until the next keystroke."""
    root = tmp_path / "ws"
    _stdlib_tree(root)
    monkeypatch.setenv("NEARSYM_CACHE_DIR", str(tmp_path / "cache"))
    first, _ = await _index_once(root)
    assert "(0 files from the cache)" in first
    second = await _restarted_from_the_snapshot(root)
    assert "(0 files from the cache)" not in second, second
    open_file = root / "asyncio" / "tasks.py"
    for _ in range(3):
        uris = await _restart_and_ask(root, "BaseEventLoop", open_file)
        assert (root / "asyncio" / "base_events.py").as_uri() in uris


@pytest.mark.asyncio
async def test_a_query_before_initialized_is_answered(tmp_path: Path) -> None:
    """A client that never sends `initialized`: no index starts, and its
    queries are answered (from nothing) after the start's wait, not held
    for ever."""
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    client = await RawClient.start()
    try:
        await client.request(
            "initialize",
            {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
        )
        for _ in range(2):
            reply = await client.request("workspace/symbol", {"query": "register"})
            assert reply["result"] == []
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_client_slow_to_take_the_watchers_does_not_hold_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a client that watches files for us, the index reads its
    snapshot while the client has not yet answered the watchers'
    registration (an editor busy starting up): a query answers from it.
    Only the walk of the tree waits for the answer."""
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    monkeypatch.setenv("NEARSYM_CACHE_DIR", str(tmp_path / "cache"))
    _, rows = await _index_once(root)
    assert rows
    await _restarted_from_the_snapshot(root)
    client = await RawClient.start()
    client.held.add("client/registerCapability")
    try:
        watching = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
        await client.request("initialize", _initialize_params(root, watching))
        client.notify("initialized", {})
        reply = await client.request("workspace/symbol", {"query": "register"})
        assert client.held_requests, "the registration was answered already"
        found = sorted(
            (r["name"], r["location"]["uri"], r["location"]["range"]["start"]["line"])
            for r in reply["result"]
        )
        assert found == rows
        for request in client.held_requests:
            client.send({"id": request["id"], "result": None})
    finally:
        await client.close()
