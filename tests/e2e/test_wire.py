"""A `workspace/symbol` answer's rows, written as JSON text on the search
thread (`lsp.encoded`), are what lsprotocol's objects give on the wire:
the same answer as partial results (`$/progress` pages, still built as
`WorkspaceSymbol` objects and unstructured by pygls) has the same rows,
keys in the same order, the same values, the same escapes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from ..unit.test_deprecation import FIXTURES
from .rawclient import RawClient
from .test_lifecycle import initialize, progress_kinds, wait_for

pytestmark = pytest.mark.e2e

SOURCES = {
    "café/naïve.py": "class Crème:\n    def brûlée(self):\n        pass\n\ndef café_au_lait():\n    pass\n",
    "with space/100% sure.js": "const 𝒳value = 1;\nclass Quote { 'odd'() {} \"dq\"() {} }\n",
    "plain/shapes.go": "package shapes\n\ntype Shape struct{ Area int }\n\nfunc (s Shape) Grow() {}\n",
}
"""Non-ASCII names and paths (escaped to \\uXXXX, astral characters as
surrogate pairs, percent-encoded URIs), containers, Go fields and methods."""

QUERIES = ["", "e", "Shape.", "cafe", "value", "Legacy", "deprecated", "grow"]


def write_workspace(root: Path) -> None:
    shutil.copytree(FIXTURES, root / "legacy")  # tagged Deprecated rows
    for rel, text in SOURCES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / os.fsdecode(b"bytes\xff")).mkdir()  # a folder name that is not UTF-8
    (root / os.fsdecode(b"bytes\xff") / "raw.py").write_text("def undecodable_path():\n    pass\n")


async def pages_of(client: RawClient, query: str, token: str) -> tuple[dict[str, Any], list[Any]]:
    response = await client.request(
        "workspace/symbol", {"query": query, "partialResultToken": token}
    )
    rows = [
        row
        for n in client.notifications
        if n.get("method") == "$/progress" and n["params"]["token"] == token
        for row in n["params"]["value"]
    ]
    return response, rows


@pytest.mark.parametrize(
    "kinds",
    [None, list(range(1, 19))],  # the client's own kinds, or File..Array: fallbacks
    ids=["all-kinds", "base-kinds"],
)
async def test_rows_on_the_wire_are_lsprotocols(tmp_path: Path, kinds: list[int] | None) -> None:
    root = tmp_path / "ws"
    write_workspace(root)
    symbol: dict[str, Any] = {"tagSupport": {"valueSet": [1]}}
    if kinds is None:
        symbol["symbolKind"] = {"valueSet": list(range(1, 27))}
    else:
        symbol["symbolKind"] = {"valueSet": kinds}
    client = await RawClient.start()
    try:
        await initialize(
            client, root, {"workspace": {"symbol": symbol}}, {"cache": False, "maxResults": 500}
        )
        await wait_for(lambda: "end" in progress_kinds(client))
        seen: set[str] = set()
        uris: set[str] = set()
        for n, query in enumerate(QUERIES):
            whole = await client.request("workspace/symbol", {"query": query})
            paged, rows = await pages_of(client, query, f"t{n}")
            assert paged["result"] == []
            assert json.dumps(whole["result"]) == json.dumps(rows), query
            assert list(whole) == ["id", "jsonrpc", "result"]  # pygls' envelope, in its order
            for row in whole["result"]:
                uris.add(row["location"]["uri"])
                seen.update(row)
                seen.update(f"{k}={v}" for k, v in row.items() if k in ("kind", "tags"))
        # the answers held every shape of row the encoder writes
        assert {"containerName", "tags", "tags=[1]"} <= seen
        assert "kind=23" in seen if kinds is None else "kind=23" not in seen  # Go's struct
        assert any("%FF" in u for u in uris) and any("%20" in u for u in uris)
    finally:
        assert await client.close() == 0


async def test_an_empty_answer_and_a_query_too_long(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write_workspace(root)
    client = await RawClient.start()
    try:
        await initialize(client, root, {})
        await wait_for(lambda: "end" in progress_kinds(client))
        for query in ["zzqqxxnothing", "x" * 2000]:
            whole = await client.request("workspace/symbol", {"query": query})
            assert whole["result"] == []
    finally:
        assert await client.close() == 0
