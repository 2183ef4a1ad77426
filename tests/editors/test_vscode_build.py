"""The VS Code extension builds from a clean `npm ci`: eslint and tsc are
clean, and `vsce package` (no `--skip-license`) makes a .vsix that carries
the license and nearsym's own wheel for "Install nearsym". The manifest
gives every server setting a type and a description. "Install nearsym"
finds a Python 3.11+ on PATH, or says what it found instead."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.editors

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
# The server's settings, as initializationOptions spells them (the README's
# Configuration table; nearsym's config module reads them).
SERVER_SETTINGS = (
    "maxResults",
    "languages",
    "maxFileBytes",
    "exclude",
    "followSymlinks",
    "cache",
    "sharedIndex",
    "sharedIndexBudgetMs",
)


def test_extension_lints_compiles_and_packages(vsix: Path) -> None:
    # (the `vsix` fixture fails unless npm ci, lint and package all pass)
    names = zipfile.ZipFile(vsix).namelist()
    assert "extension/out/extension.js" in names
    assert "extension/package.json" in names
    assert "extension/LICENSE.txt" in names
    assert [n for n in names if n.startswith("extension/server/nearsym-")], names
    assert not [n for n in names if n.startswith("extension/src/")], names


def test_license_is_mit_at_the_root_and_in_the_extension() -> None:
    root = (REPO / "LICENSE").read_text()
    assert root.startswith("MIT License")
    assert (EXTENSION / "LICENSE").read_text() == root


def test_manifest_describes_every_server_setting() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    assert "--skip-license" not in json.dumps(manifest["scripts"])
    assert "vscode:prepublish" in manifest["scripts"]
    properties = manifest["contributes"]["configuration"]["properties"]
    for key in SERVER_SETTINGS:
        setting = properties[f"nearsym.{key}"]
        assert setting.get("description") or setting.get("markdownDescription"), key
        assert setting["type"] in ("integer", "boolean", "array", "string"), key
        if setting["type"] == "integer":
            assert setting["minimum"] >= 1, key
    for command in manifest["contributes"]["commands"]:
        assert command["category"] == "nearsym", command
    (binding,) = manifest["contributes"]["keybindings"]
    # Ctrl+Alt+T opens a terminal on GNOME, Xfce and Cinnamon; Cmd+Alt+T is
    # VS Code's "Close Others" on macOS.
    assert binding["key"] != "ctrl+alt+t" and binding["mac"] != "cmd+alt+t", binding


def find_python(vsix: Path, path: Path) -> dict[str, str]:
    """The extension's own findPython (out/python.js), run by Node with
    PATH set to `path` only."""
    script = (
        f"require({json.dumps(str(vsix.parent / 'out' / 'python.js'))}).findPython()"
        ".then((p) => console.log(JSON.stringify({ python: p.join(' ') })),"
        " (e) => console.log(JSON.stringify({ error: e.message })))"
    )
    node = shutil.which("node")
    assert node
    run = subprocess.run(
        [node, "-e", script], env={"PATH": str(path)}, capture_output=True, text=True, timeout=60
    )
    return dict(json.loads(run.stdout))


def test_install_finds_python_311_or_says_what_is_missing(vsix: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = find_python(vsix, empty)["error"]
    assert "needs Python 3.11 or newer" in missing and "no python3 on PATH" in missing, missing
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "python3").symlink_to(shutil.which("false") or "/bin/false")
    found_only = find_python(vsix, broken)["error"]
    assert f"found only: {broken / 'python3'} (did not run)" in found_only, found_only
    good = tmp_path / "good"
    good.mkdir()
    (good / "python3").symlink_to(sys.executable)
    assert find_python(vsix, good) == {"python": str(good / "python3")}
