"""The warm-start cache through the real server: a restart loads instead of
parsing, and a damaged cache file is replaced, never fatal."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from .rawclient import RawClient

FIXTURE = Path(__file__).parent.parent / "fixtures" / "polyglot"


async def _index_once(root: Path) -> tuple[str, list[Any]]:
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
