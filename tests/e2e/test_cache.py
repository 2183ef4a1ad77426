"""The warm-start cache through the real server: a restart loads instead of
parsing, and a damaged cache file is replaced, never fatal."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from .conftest import SERVER
from .rawclient import RawClient

FIXTURE = Path(__file__).parent.parent / "fixtures" / "polyglot"


async def _index_once(root: Path, client: RawClient | None = None) -> tuple[str, list[Any]]:
    if client is None:
        client = await RawClient.start()
    try:
        await client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                "capabilities": {"window": {"workDoneProgress": True}},
            },
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


@pytest.mark.asyncio
async def test_a_restart_reads_its_snapshot_while_the_server_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`initialize`, written as the server spawns, names the root whose
    snapshot is read during the server's imports (`lsp.early`); the index
    takes that read, and answers as it did."""
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    monkeypatch.setenv("NEARSYM_CACHE_DIR", str(tmp_path / "cache"))
    _, rows = await _index_once(root)
    for _ in range(100):  # the snapshot is written in the background
        await asyncio.sleep(0.05)
        with open(tmp_path / "log", "wb") as stderr:  # a file: a full pipe would stall it
            process = await asyncio.create_subprocess_exec(
                *SERVER[:3],
                "--log-level",
                "DEBUG",
                *SERVER[3:],
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
            )
        ended, again = await _index_once(root, RawClient(process))
        log = (tmp_path / "log").read_text("utf-8", "replace")
        if "(0 files from the cache)" not in ended:
            break
    assert "files from the cache" in ended and "(0 files from the cache)" not in ended, ended
    assert again == rows
    assert f"reading the snapshot of {root} ahead" in log
    assert f"the cache of {root} was opened as the server started" in log
    assert "could not read ahead" not in log
