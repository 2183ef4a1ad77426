"""The project's dependencies as opt-in namespaces, against the real server
over stdio: a workspace whose `.venv` (made by `python -m venv`) holds a
real installed package, platformdirs, copied from the test's own
environment (nearsym depends on it, so it is there offline)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import platformdirs
import pytest
from lsprotocol import types

from .test_server import indexed, query, start

pytestmark = pytest.mark.e2e

WORKSPACE = {
    "app/paths.py": """
        def user_cache_dir(app):
            return "/tmp/" + app

        class PlatformDirsABCWrapper:
            pass
        """,
    "app/main.py": """
        from .paths import user_cache_dir

        def main():
            return user_cache_dir("demo")
        """,
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with a virtualenv holding platformdirs."""
    monkeypatch.setenv("NEARSYM_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "project"
    for rel, text in WORKSPACE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    venv = root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    shutil.copytree(Path(platformdirs.__file__).parent, site / "platformdirs")
    declarations = root / "node_modules" / "left-pad" / "index.d.ts"
    declarations.parent.mkdir(parents=True)
    declarations.write_text("export declare function leftPadOnlyHere(s: string): string;\n")
    return root


def in_venv(symbol: types.WorkspaceSymbol | types.SymbolInformation) -> bool:
    location = symbol.location
    return "/.venv/lib/" in location.uri


def described(found: list[types.WorkspaceSymbol]) -> list[tuple[str, bool]]:
    return [(s.name, in_venv(s)) for s in found]


async def until_found(client: Any, text: str, name: str) -> list[types.WorkspaceSymbol]:
    """Ask `text` until a dependency's `name` answers (the dependencies are
    indexed in the background, after the workspace)."""
    for _ in range(300):
        found = await query(client, text)
        if any(s.name == name and in_venv(s) for s in found):
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} of the dependencies never answered {text!r}: {found}")


@pytest.mark.asyncio
async def test_dependencies_on_answer_after_the_workspace(project: Path) -> None:
    client = await start(project, options={"dependencies": "on"})
    try:
        await indexed(client)
        # A name defined only in the package is answered.
        found = await until_found(client, "PlatformDirsABC", "PlatformDirsABC")
        # A much better match of the package's (the exact name) comes before
        # the workspace's weaker one (a prefix of its name).
        assert described(found)[:2] == [
            ("PlatformDirsABC", True),
            ("PlatformDirsABCWrapper", False),
        ], described(found)
        # Of the same name quality, the workspace's own definition first.
        found = await query(client, "user_cache_dir")
        exact = [(n, dep) for n, dep in described(found) if n == "user_cache_dir"]
        assert exact[0] == ("user_cache_dir", False), described(found)
        assert ("user_cache_dir", True) in exact, described(found)
        # node_modules too (a dependency root of its own, indexed in the
        # background like the venv: on a loaded machine it may answer later).
        for _ in range(300):
            if found := await query(client, "leftPadOnlyHere"):
                break
            await asyncio.sleep(0.05)
        assert [s.location.uri.rsplit("/project/", 1)[1] for s in found] == [
            "node_modules/left-pad/index.d.ts"
        ]
        # An empty query lists the workspace, never the dependencies.
        assert not any(in_venv(s) for s in await query(client, ""))
    finally:
        await client.shutdown_session()


@pytest.mark.asyncio
async def test_dependencies_off_answer_only_a_query_ending_in_two_stars(project: Path) -> None:
    client = await start(project)
    try:
        await indexed(client)
        assert not any(in_venv(s) for s in await query(client, "PlatformDirsABC"))
        # `**` asks the dependencies (indexing them on first use)...
        found = await until_found(client, "PlatformDirsABC**", "PlatformDirsABC")
        assert described(found)[0] == ("PlatformDirsABC", True)
        # ...and, indexed now, they still answer no query without it.
        for text in ("PlatformDirsABC", "user_cache_dir", "PlatformDirsABC*"):
            assert not any(in_venv(s) for s in await query(client, text)), text
    finally:
        await client.shutdown_session()


@pytest.mark.asyncio
async def test_a_list_of_folders_is_indexed_as_dependencies(project: Path, tmp_path: Path) -> None:
    vendored = tmp_path / "vendored"
    vendored.mkdir()
    (vendored / "lib.py").write_text("def vendored_only_helper():\n    pass\n")
    client = await start(project, options={"dependencies": [str(vendored)]})
    try:
        await indexed(client)
        for _ in range(300):
            names = [s.name for s in await query(client, "vendored_only_helper")]
            if names:
                break
            await asyncio.sleep(0.05)
        assert names == ["vendored_only_helper"]
        # The list is exactly those folders: the virtualenv is not asked.
        assert not any(in_venv(s) for s in await query(client, "PlatformDirsABC"))
    finally:
        await client.shutdown_session()


def test_bad_dependencies_setting_is_refused() -> None:
    from nearsym.workspace.config import config_from_options

    config, problems = config_from_options({"dependencies": "sometimes"})
    assert config.dependencies == "off" and problems
    config, problems = config_from_options({"dependencies": ["a", "b"]})
    assert config.dependencies == ("a", "b") and not problems
