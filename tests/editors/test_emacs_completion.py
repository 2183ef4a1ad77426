"""Emacs 28 in a terminal (tmux, real keys): `nearsym-find-symbol` shows
nearsym's order, which follows the open file, and RET visits the chosen
definition's line and column, under vertico + orderless + marginalia
(Debian's packages, set up as their READMEs say) and under the default
completion UI (*Completions*). orderless would otherwise ask the table for
"" and filter the answer itself; vertico would sort it by length and
history."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import editor_workspace, require

pytestmark = pytest.mark.editors

HERE = Path(__file__).resolve().parent
ELPA = Path("/usr/share/emacs/site-lisp/elpa")


def order(screen: str, *needles: str) -> list[str]:
    """`needles` in the order they appear on `screen` (row by row)."""
    found = [(screen.find(n), n) for n in needles if n in screen]
    return [n for _, n in sorted(found)]


class TerminalEmacs:
    def __init__(self, tmp_path: Path, ui: str) -> None:
        emacs, tmux = shutil.which("emacs"), shutil.which("tmux")
        require(bool(emacs and tmux), "emacs or tmux")
        if ui != "default":
            stack = ("vertico", "orderless", "marginalia", "consult")
            present = all(any(ELPA.glob(f"{p}-*")) for p in stack)
            require(present, "Debian's elpa-vertico, -orderless, -marginalia and -consult")
        _, self.out, env = editor_workspace(tmp_path, "emacs", "out.txt")
        env.update(TERM="xterm-256color", HOME=str(tmp_path), NEARSYM_UI=ui)
        self.tmux = [str(tmux), "-L", f"nearsym-test-{os.getpid()}-{ui}"]
        command = f"{emacs} -nw -q -l {HERE / 'emacs_pick.el'}"
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", "t", "-x", "160", "-y", "40", command],
            env=env,
            check=True,
        )

    def keys(self, *sequence: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", "t", *sequence], check=True)
        time.sleep(0.5)

    def type(self, text: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", "t", "-l", text], check=True)
        time.sleep(0.5)

    def screen(self) -> str:
        return subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-t", "t"], capture_output=True, text=True
        ).stdout

    def wait_screen(self, ok: Callable[[str], bool], seconds: float = 15) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            screen = self.screen()
            if ok(screen):
                return screen
            time.sleep(0.2)
        return self.screen()

    def record(self, command: str, seconds: float = 60) -> str:
        """Run `command` (it appends a line to $OUT) and return that line."""
        before = len(self.out.read_text().splitlines()) if self.out.exists() else 0
        self.keys("M-x")
        self.type(command)
        self.keys("Enter")
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.out.exists() and len(lines := self.out.read_text().splitlines()) > before:
                return lines[-1]
            time.sleep(0.1)
        raise AssertionError(f"{command} recorded nothing; screen:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], check=False)


ALPHA, BETA = "register  alpha/registry.py:4", "register  beta/registry.py:4"


@pytest.mark.parametrize("ui", ["vertico", "default", "consult"])
def test_find_symbol_keeps_nearsym_order_and_visits_the_line(tmp_path: Path, ui: str) -> None:
    """vertico and default: `nearsym-find-symbol`; consult (under vertico):
    `nearsym-consult-symbol`."""
    emacs = TerminalEmacs(tmp_path, ui)
    command = "nearsym-consult-symbol" if ui == "consult" else "nearsym-find-symbol"
    try:
        assert emacs.record("nearsym-test-ready") == "ready"

        def ask(query: str) -> str:
            emacs.keys("M-x")
            emacs.type(command)
            emacs.keys("Enter")
            emacs.type(query)
            if ui == "default":
                emacs.keys("Tab")  # *Completions*
            return emacs.wait_screen(lambda s: ALPHA in s and BETA in s)

        def choose_second() -> None:
            if ui != "default":
                emacs.keys("C-n", "Enter")
            else:
                emacs.keys("M-v", "Tab", "Enter")  # into *Completions*, next, choose

        from_alpha = ask("register")
        assert order(from_alpha, ALPHA, BETA) == [ALPHA, BETA], from_alpha
        choose_second()
        assert emacs.record("nearsym-test-where") == "beta/registry.py 4 4"

        from_beta = ask("register")
        assert order(from_beta, ALPHA, BETA) == [BETA, ALPHA], from_beta
        emacs.keys("C-g")

        emacs.keys("M-x")
        emacs.type(command)
        emacs.keys("Enter")
        emacs.type("activate")
        if ui == "default":
            emacs.keys("Tab")  # the one candidate: completed in the minibuffer
        shown = emacs.wait_screen(lambda s: "AlphaPlugin.activate  alpha/registry.py:9" in s)
        emacs.keys("Enter")
        assert emacs.record("nearsym-test-where") == "alpha/registry.py 9 8", shown
    finally:
        emacs.close()
