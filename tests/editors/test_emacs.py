"""Emacs 28 in a terminal (tmux, real keys), with the shipped nearsym.el:
switching windows with C-x o sends nearsym/didFocus through
window-selection-change-functions (batch Emacs never runs them), and
nearsym's first answer for `register` follows the selected window."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import editor_workspace, require

pytestmark = pytest.mark.editors

HERE = Path(__file__).resolve().parent


def test_window_switch_flips_the_order_in_terminal_emacs(tmp_path: Path) -> None:
    emacs, tmux = shutil.which("emacs"), shutil.which("tmux")
    require(bool(emacs and tmux), "emacs or tmux")
    assert emacs and tmux
    _, out, env = editor_workspace(tmp_path, "emacs", "out.txt")
    env.update(TERM="xterm-256color", HOME=str(tmp_path))
    socket = f"nearsym-test-{os.getpid()}"
    tmux_cmd = [tmux, "-L", socket]
    command = f"{emacs} -nw -q -l {HERE / 'emacs_setup.el'}"
    subprocess.run(
        [*tmux_cmd, "new-session", "-d", "-s", "t", "-x", "160", "-y", "40", command],
        env=env,
        check=True,
    )

    def keys(*sequence: str) -> None:
        subprocess.run([*tmux_cmd, "send-keys", "-t", "t", *sequence], check=True)
        time.sleep(0.5)

    def dump() -> None:
        before = len(out.read_text().splitlines()) if out.exists() else 0
        keys("M-x")
        keys("nearsym-test-dump", "Enter")
        for _ in range(
            600
        ):  # the first answer waits for the server's start (slow on a busy machine)
            if out.exists() and len(out.read_text().splitlines()) > before:
                return
            time.sleep(0.1)
        screen = subprocess.run(
            [*tmux_cmd, "capture-pane", "-p", "-t", "t"], capture_output=True, text=True
        ).stdout
        raise AssertionError(f"no answer recorded; screen:\n{screen}")

    try:
        time.sleep(4)  # emacs starts nearsym, which indexes the fixture
        dump()  # alpha's window is selected
        keys("C-x", "o")  # real keys: select beta's window
        dump()
        keys("C-x", "o")  # and back
        dump()
    finally:
        subprocess.run([*tmux_cmd, "kill-server"], check=False)
    answers = out.read_text().split()
    assert answers == ["alpha/registry.py", "beta/registry.py", "alpha/registry.py"], answers
