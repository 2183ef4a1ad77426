"""Shutdown and exit in every state, over stdio: the whole process tree
(server, forkserver, pool workers, watcher helper) is gone within a second,
the exit code is the spec's (0 after `shutdown`, 1 without), and stderr
holds no traceback."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from ..processes import descendants, running
from .rawclient import RawClient
from .trees import write_tree

pytestmark = pytest.mark.e2e

WATCHING = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
PROGRESS = {"window": {"workDoneProgress": True}}
NO_CACHE = {"cache": False}

TREE_GONE = 1.0
"""Seconds from `shutdown` sent to the last process of the tree gone."""


async def initialize(
    client: RawClient, root: Path, capabilities: dict[str, Any], options: Any = NO_CACHE
) -> None:
    await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {**PROGRESS, **capabilities},
            "initializationOptions": options,
        },
        timeout=30,
    )
    client.notify("initialized", {})


def progress_kinds(client: RawClient) -> list[str]:
    return [
        n["params"]["value"].get("kind")
        for n in client.notifications
        if n.get("method") == "$/progress" and isinstance(n["params"].get("value"), dict)
    ]


async def wait_for(check: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("never happened")
        await asyncio.sleep(0.02)


async def tree_gone(pids: set[int], seconds: float = 30) -> float:
    """Seconds until none of `pids` runs (up to `seconds`)."""
    started = time.monotonic()
    while any(running(pid) for pid in pids):
        if time.monotonic() - started > seconds:
            break
        await asyncio.sleep(0.005)
    return time.monotonic() - started


async def end(client: RawClient, shutdown: bool = True) -> tuple[int, float, str]:
    """Shutdown (unless not) and exit; the exit code, the seconds until the
    whole tree was gone, and stderr."""
    pids = {client.process.pid, *descendants(client.process.pid)}
    started = time.monotonic()
    if shutdown:
        reply = await client.request("shutdown", None, timeout=30)
        assert reply.get("result", "missing") is None, reply
    client.notify("exit", None)
    await tree_gone(pids)
    gone = time.monotonic() - started
    left = [pid for pid in pids if running(pid)]
    for pid in left:
        os.kill(pid, 9)
    code = await asyncio.wait_for(client.process.wait(), 10)
    assert left == [], f"still running {gone:.1f}s after shutdown: {left}"
    return code, gone, await client.errors()


async def cold_index(root: Path) -> RawClient:
    """A server in the middle of the cold index of 2,000 files, its pool
    running."""
    write_tree(root, 2000)
    client = await RawClient.start(stderr=True)
    await initialize(client, root, {})
    await wait_for(lambda: "begin" in progress_kinds(client))
    await wait_for(lambda: len(descendants(client.process.pid)) >= 3)  # forkserver, workers
    assert "end" not in progress_kinds(client), "indexed too fast to test"
    return client


async def before_initialize(root: Path) -> RawClient:
    client = await RawClient.start(stderr=True)
    early = await client.request("workspace/symbol", {"query": "x"}, timeout=30)
    assert early["error"]["code"] == -32002  # up, and not initialized
    return client


async def during_rewalk(root: Path) -> RawClient:
    """A `.gitignore` change re-walking 1,200 files it no longer ignores."""
    root.mkdir()
    (root / "kept.py").write_text("def kept_here():\n    pass\n")
    write_tree(root / "ignored", 1200)
    (root / ".git").mkdir()  # .gitignore applies in a repository
    (root / ".gitignore").write_text("ignored/\n")
    client = await RawClient.start(stderr=True)
    await initialize(client, root, WATCHING)
    await wait_for(lambda: "end" in progress_kinds(client))
    (root / ".gitignore").write_text("")
    client.notify(
        "workspace/didChangeWatchedFiles",
        {"changes": [{"uri": (root / ".gitignore").as_uri(), "type": 2}]},
    )
    await asyncio.sleep(0.3)
    return client


async def walk_stuck_on_fifo(root: Path) -> RawClient:
    """A FIFO where an ignore file belongs: reading it would block."""
    write_tree(root, 50)
    (root / "pkg000" / "sub").mkdir()
    os.mkfifo(root / "pkg000" / "sub" / ".gitignore")
    os.mkfifo(root / "pipe.py")
    client = await RawClient.start(stderr=True)
    await initialize(client, root, {})
    await asyncio.sleep(1.0)
    return client


async def query_running(root: Path) -> RawClient:
    write_tree(root, 600)
    client = await RawClient.start(stderr=True)
    await initialize(client, root, WATCHING)
    await wait_for(lambda: "end" in progress_kinds(client))
    for query in ("", "g", "gen_1_1", "Class"):
        client.send(
            {"id": 1000 + len(query), "method": "workspace/symbol", "params": {"query": query}}
        )
    return client


STATES: dict[str, Callable[[Path], Awaitable[RawClient]]] = {
    "before initialize": before_initialize,
    "during the cold index": cold_index,
    "during a re-walk": during_rewalk,
    "with the walk stuck on a FIFO": walk_stuck_on_fifo,
    "with a query running": query_running,
}


@pytest.mark.parametrize("state", list(STATES))
async def test_shutdown_and_exit_end_the_process_tree(tmp_path: Path, state: str) -> None:
    client = await STATES[state](tmp_path / "ws")
    code, gone, stderr = await end(client)
    print(f"{state}: process tree gone {gone * 1000:.0f} ms after shutdown")
    assert code == 0
    assert "Traceback" not in stderr, stderr
    assert gone < TREE_GONE


@pytest.mark.parametrize("state", ["before initialize", "during the cold index"])
async def test_exit_without_shutdown_exits_1(tmp_path: Path, state: str) -> None:
    client = await STATES[state](tmp_path / "ws")
    code, gone, stderr = await end(client, shutdown=False)
    print(f"{state}: process tree gone {gone * 1000:.0f} ms after exit")
    assert code == 1
    assert "Traceback" not in stderr, stderr
    assert gone < TREE_GONE


async def test_end_of_input_ends_the_server(tmp_path: Path) -> None:
    client = await cold_index(tmp_path / "ws")
    pids = {client.process.pid, *descendants(client.process.pid)}
    assert client.process.stdin is not None
    client.process.stdin.close()
    gone = await tree_gone(pids)
    print(f"stdin closed: process tree gone after {gone * 1000:.0f} ms")
    assert [pid for pid in pids if running(pid)] == []
    assert await asyncio.wait_for(client.process.wait(), 10) == 1  # no shutdown came
    assert "Traceback" not in await client.errors()


async def test_requests_after_shutdown_are_invalid(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", 20)
    client = await RawClient.start(stderr=True)
    await initialize(client, root, {})
    assert (await client.request("shutdown", None))["result"] is None
    again = await client.request("shutdown", None)
    assert again["error"]["code"] == -32600  # InvalidRequest
    query = await client.request("workspace/symbol", {"query": "gen"})
    assert query["error"]["code"] == -32600
    client.notify("textDocument/didOpen", {"bad": True})  # ignored, not answered
    client.notify("exit", None)
    assert await asyncio.wait_for(client.process.wait(), 10) == 0
    assert "Traceback" not in await client.errors()
