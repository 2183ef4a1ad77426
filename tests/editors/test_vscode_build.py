"""The VS Code extension builds from a clean `npm ci`: eslint and tsc are
clean, and `vsce package` (no `--skip-license`) makes a .vsix that carries
the license and nearsym's own wheel for "Install nearsym". The manifest
gives every server setting a type and a description."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.editors

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
# The server's settings, as initializationOptions spells them (the README's
# Configuration table; nearsym's config module reads them).
SERVER_SETTINGS = ("maxResults", "languages", "maxFileBytes", "exclude", "followSymlinks", "cache")


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
        assert setting["type"] in ("integer", "boolean", "array"), key
        if setting["type"] == "integer":
            assert setting["minimum"] >= 1, key
    for command in manifest["contributes"]["commands"]:
        assert command["category"] == "nearsym", command
    (binding,) = manifest["contributes"]["keybindings"]
    # Ctrl+Alt+T opens a terminal on GNOME, Xfce and Cinnamon; Cmd+Alt+T is
    # VS Code's "Close Others" on macOS.
    assert binding["key"] != "ctrl+alt+t" and binding["mac"] != "cmd+alt+t", binding
