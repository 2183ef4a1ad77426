"""Over LSP, a definition its language marks deprecated carries
`tags: [Deprecated]` (editors draw it struck through); no other does."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from ..unit.test_deprecation import EXPECTED, FIXTURES
from .rawclient import RawClient

pytestmark = pytest.mark.e2e


async def test_deprecated_symbols_are_tagged(tmp_path: Path) -> None:
    root = tmp_path / "legacy"
    shutil.copytree(FIXTURES, root)
    client = await RawClient.start()
    try:
        await client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": "legacy"}],
                "capabilities": {
                    "workspace": {"symbol": {"tagSupport": {"valueSet": [1]}}},
                },
                "initializationOptions": {"cache": False},
            },
            timeout=60,
        )
        client.notify("initialized", {})
        wanted = set().union(*EXPECTED.values())
        tagged: dict[str, list[int]] = {}
        for _ in range(200):
            answer = await client.request("workspace/symbol", {"query": ""})
            tagged = {s["name"]: s.get("tags") or [] for s in answer["result"]}
            if wanted <= set(tagged):
                break
            await asyncio.sleep(0.05)
        assert {name for name, tags in tagged.items() if tags == [1]} == wanted
        assert tagged["FreshGo"] == [] and tagged["deprecated"] == []
        assert all(tags in ([], [1]) for tags in tagged.values())
    finally:
        assert await client.close() == 0
