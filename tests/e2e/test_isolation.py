"""Opening an untrusted repository never runs its code.

Editors start the server with the workspace as its current folder, and a
Python process started with `-c` or `-m` imports from its current folder
first: the multiprocessing forkserver and resource tracker, the watcher
helper and `python -m nearsym` itself would import a `json.py` or
`threading.py` lying at the repository's root. Each module below writes a
marker file when imported; none may appear through a cold index (which
starts the process pool), our own file watcher, a re-walk and a shutdown."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from .rawclient import RawClient

pytestmark = pytest.mark.e2e

SHADOWS = (
    "json", "logging", "threading", "select", "site", "sitecustomize", "usercustomize",
    "socket", "pickle", "selectors", "signal", "struct", "multiprocessing", "numpy",
    "pygls", "tree_sitter",
)  # fmt: skip
"""Not `nearsym` itself: `python -m nearsym` from a folder holding a
`nearsym.py` runs that file by Python's own rules, before any of ours (the
editors start the `nearsym` command, whose path starts at its own folder)."""


async def test_modules_in_the_workspace_are_never_imported(tmp_path: Path) -> None:
    root = tmp_path / "untrusted"
    markers = tmp_path / "markers"
    root.mkdir()
    markers.mkdir()
    for module in SHADOWS:
        (root / f"{module}.py").write_text(
            f"open({str(markers / module)!r}, 'w').write('imported')\n"
        )
    (root / "app.py").write_text("def untrusted_entry():\n    pass\n")
    client = await RawClient.start(cwd=str(root))
    try:
        params = {
            "processId": None,
            "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": {"window": {"workDoneProgress": True}},
            "initializationOptions": {"cache": False},
        }
        await client.request("initialize", params)
        client.notify("initialized", {})
        for _ in range(200):
            answer = await client.request("workspace/symbol", {"query": "untrusted_entry"})
            if answer["result"]:
                break
            await asyncio.sleep(0.05)
        assert [s["name"] for s in answer["result"]] == ["untrusted_entry"]
        # A re-walk: the ignore rules changed (our own watcher reports it).
        (root / ".gitignore").write_text("ignored/\n")
        (root / "later.py").write_text("def seen_after_the_rewalk():\n    pass\n")
        for _ in range(200):
            answer = await client.request("workspace/symbol", {"query": "seen_after_the_rewalk"})
            if answer["result"]:
                break
            await asyncio.sleep(0.05)
        assert answer["result"]
    finally:
        assert await client.close() == 0
    assert sorted(p.name for p in markers.iterdir()) == []
