"""Files opened outside every workspace folder, over stdio.

Neovim and eglot often start a server with no workspace folder, and people
open scratch files beside their project: each still gets answers, and no
root is ever `/` or the home folder."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from .rawclient import RawClient

pytestmark = pytest.mark.e2e


async def start(home: Path, folders: list[Path]) -> RawClient:
    env = {**os.environ, "HOME": str(home), "NEARSYM_CACHE_DIR": str(home / ".cache-ns")}
    client = await RawClient.start(env=env)
    await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": folders[0].as_uri() if folders else None,
            "workspaceFolders": [{"uri": f.as_uri(), "name": f.name} for f in folders] or None,
            "capabilities": {"window": {"workDoneProgress": True}},
        },
        timeout=60,
    )
    client.notify("initialized", {})
    return client


def did_open(client: RawClient, path: Path) -> None:
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": path.as_uri(),
                "languageId": "python",
                "version": 1,
                "text": path.read_text(),
            }
        },
    )


async def names(client: RawClient, query: str) -> list[str]:
    answer = await client.request("workspace/symbol", {"query": query})
    return [s["name"] for s in answer["result"]]


async def eventually(client: RawClient, query: str, want: str, seconds: float = 20) -> list[str]:
    found: list[str] = []
    for _ in range(int(seconds / 0.05)):
        found = await names(client, query)
        if want in found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{want!r} never answered {query!r}; last {found}")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)  # a dotfiles repository: still never a root
    return home


async def test_no_folder_indexes_the_project_of_the_opened_file(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "work" / "project"
    (project / ".git").mkdir(parents=True)
    opened = write(project / "pkg" / "mod.py", "def opened_here():\n    pass\n")
    write(project / "other" / "lib.py", "def elsewhere_in_the_project():\n    pass\n")
    client = await start(home, [])
    try:
        did_open(client, opened)
        assert await names(client, "opened_here") == ["opened_here"]
        await eventually(client, "elsewhere_in_the_project", "elsewhere_in_the_project")
    finally:
        assert await client.close() == 0


async def test_a_scratch_file_answers_its_own_and_its_folders_symbols(
    tmp_path: Path, home: Path
) -> None:
    scratch = tmp_path / "scratch"
    opened = write(scratch / "note.py", "def scratch_function():\n    pass\n")
    write(scratch / "beside.py", "def beside_the_scratch():\n    pass\n")
    write(scratch / "deeper" / "below.py", "def below_the_scratch():\n    pass\n")
    client = await start(home, [])
    try:
        did_open(client, opened)
        assert await names(client, "scratch_function") == ["scratch_function"]
        await eventually(client, "beside_the_scratch", "beside_the_scratch")
        assert await names(client, "below_the_scratch") == []  # one level only
    finally:
        assert await client.close() == 0


async def test_a_file_beside_the_workspace_folder_is_answered(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "ws"
    write(folder / "app.py", "def inside_the_folder():\n    pass\n")
    opened = write(tmp_path / "notes" / "todo.py", "def beside_the_folder():\n    pass\n")
    client = await start(home, [folder])
    try:
        await eventually(client, "inside_the_folder", "inside_the_folder")
        did_open(client, opened)
        assert await names(client, "beside_the_folder") == ["beside_the_folder"]
    finally:
        assert await client.close() == 0


async def test_home_is_never_a_root(home: Path) -> None:
    opened = write(home / "scratch.py", "def in_home_directly():\n    pass\n")
    write(home / "dotfile_tool.py", "def elsewhere_in_home():\n    pass\n")
    write(home / "projects" / "x" / "deep.py", "def deep_in_home():\n    pass\n")
    client = await start(home, [])
    try:
        did_open(client, opened)
        assert await names(client, "in_home_directly") == ["in_home_directly"]
        await asyncio.sleep(1.0)  # anything walked would be answerable by now
        found: dict[str, Any] = {}
        for query in ("elsewhere_in_home", "deep_in_home"):
            found[query] = await names(client, query)
        assert found == {"elsewhere_in_home": [], "deep_in_home": []}
        ends = [
            n["params"]["value"].get("message", "")
            for n in client.notifications
            if n.get("method") == "$/progress" and n["params"]["value"].get("kind") == "end"
        ]
        assert all(" 0 files" in m for m in ends), ends  # nothing was ever walked
    finally:
        assert await client.close() == 0


async def test_max_results_above_the_pool_is_said_once(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / "ws"
    write(folder / "app.py", "def inside_the_folder():\n    pass\n")
    env = {**os.environ, "HOME": str(home), "NEARSYM_CACHE_DIR": str(home / ".cache-ns")}
    client = await RawClient.start(env=env)
    try:
        await client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": folder.as_uri(),
                "capabilities": {},
                "initializationOptions": {"maxResults": 2000},
            },
            timeout=60,
        )
        client.notify("initialized", {})
        client.notify(
            "workspace/didChangeConfiguration", {"settings": {"nearsym": {"maxResults": 2000}}}
        )
        await eventually(client, "inside_the_folder", "inside_the_folder")
        said = [
            n["params"]["message"]
            for n in client.notifications
            if n.get("method") == "window/logMessage" and "maxResults" in n["params"]["message"]
        ]
        assert len(said) == 1 and "2000" in said[0] and "500" in said[0]
    finally:
        assert await client.close() == 0
