"""What a server keeps running once its index is done: nothing but itself
(and our watcher's helper, for a client that does not watch files).

The process pool and multiprocessing's forkserver hold tens of MB each
while idle, the resource tracker 12 MB; they end with the cold index, and a
restart whose cache covers the workspace starts none."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest

from ..processes import children
from .rawclient import RawClient

pytestmark = pytest.mark.e2e

FIXTURE = Path(__file__).parent.parent / "fixtures" / "polyglot"
WATCHING = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}


async def _helpers_after_index(root: Path) -> tuple[list[bytes], list[bytes], str]:
    """(helpers while indexing, helpers a moment after the index ended, the
    server's stderr)."""
    client = await RawClient.start(stderr=True)
    seen: dict[int, bytes] = {}
    try:
        await client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                "capabilities": {"window": {"workDoneProgress": True}, **WATCHING},
            },
            timeout=60,
        )
        client.notify("initialized", {})
        for _ in range(400):
            seen.update(children(client.process.pid))
            if any(
                n.get("method") == "$/progress" and n["params"]["value"].get("kind") == "end"
                for n in client.notifications
            ):
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("indexing never ended")
        after: dict[int, bytes] = {}
        for _ in range(100):  # the pool is shut down just after the progress ends
            after = children(client.process.pid)
            if not after:
                break
            await asyncio.sleep(0.05)
        assert (await client.request("workspace/symbol", {"query": "register"}))["result"]
    finally:
        await client.close()
    return sorted(seen.values()), sorted(after.values()), await client.errors()


async def test_pool_and_multiprocessing_helpers_end_with_the_cold_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    monkeypatch.setenv("NEARSYM_CACHE_DIR", str(tmp_path / "cache"))
    during, after, errors = await _helpers_after_index(root)
    assert any(b"forkserver" in c for c in during)  # the cold index used the pool
    assert after == []  # the resource tracker too, once the workers are gone
    assert "Traceback" not in errors and "leaked" not in errors, errors
    # Restarted on a cache that covers every file: no pool at all. The one
    # helper is our watcher, started with the server before the client said
    # it watches files (`watcher.prestart`), and gone by the index's end.
    during, after, errors = await _helpers_after_index(root)
    assert [c for c in during if b"nearsym.workspace.watcher" not in c] == []
    assert after == []
    assert "Traceback" not in errors, errors


async def test_a_restart_starts_no_pool_for_the_files_the_index_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files indexing skips (binary here; too large or too broken alike)
    are in the snapshot with their stamps, so a restart does not read them
    again: the Linux kernel's restart started the pool, forkserver and
    workers, for its 87 alone."""
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    for n in range(40):  # more than one chunk of the pool's
        (root / f"blob{n}.py").write_bytes(b"\0 not source %d" % n)
    old = time.time() - 60  # older than the racy window: the snapshot trusts them
    for path in root.rglob("*"):
        os.utime(path, (old, old))
    monkeypatch.setenv("NEARSYM_CACHE_DIR", str(tmp_path / "cache"))
    during, _, _ = await _helpers_after_index(root)
    assert any(b"forkserver" in c for c in during)  # the cold index used the pool
    during, after, errors = await _helpers_after_index(root)
    assert [c for c in during if b"nearsym.workspace.watcher" not in c] == []
    assert after == []
    assert "Traceback" not in errors, errors
