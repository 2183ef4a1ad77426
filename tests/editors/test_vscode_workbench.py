"""VS Code's workbench, live: code-server in headless Chromium, driven with
playwright-core (`vscode/workbench.js`), with the packaged nearsym extension
installed.

- With a file of `alpha/` open, Ctrl+T answers with nearsym's symbols and
  the extension's own pick lists alpha's `register` first (with `beta/`
  open, beta's); Enter on a result of Ctrl+T and of the pick puts the
  cursor on the definition's line and column.
- With no `nearsym` on PATH and no `nearsym.command`, the extension offers
  "Install nearsym"; clicked, it makes a venv in its global storage from
  the .vsix's wheel, starts the server, and the pick answers."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import require

pytestmark = pytest.mark.editors

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "polyglot"
RIG = HERE / "vscode"
ENTRY = RIG / "node_modules" / "code-server" / "out" / "node" / "entry.js"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def rig() -> None:
    """VS Code's workbench (code-server) and playwright-core, installed."""
    needed = [shutil.which(p) for p in ("npm", "node", "rg", "chromium")]
    require(all(needed), "npm, node, rg and chromium")
    subprocess.run(["bash", str(RIG / "setup.sh")], check=True, timeout=900)


def workbench(
    tmp_path: Path, vsix: Path, mode: str, settings: dict[str, Any], env: dict[str, str]
) -> dict[str, Any]:
    """Install `vsix` in a fresh code-server, open the fixture, run
    `workbench.js` in `mode`, and return its report."""
    user_data, extensions, ws = tmp_path / "ud", tmp_path / "ext", tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    (user_data / "User").mkdir(parents=True)
    (user_data / "User" / "settings.json").write_text(
        json.dumps(
            {
                **settings,
                "workbench.startupEditor": "none",
                "security.workspace.trust.enabled": False,
                "telemetry.telemetryLevel": "off",
            }
        )
    )
    dirs = ["--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    subprocess.run(
        ["node", str(ENTRY), *dirs, "--install-extension", str(vsix)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = free_port()
    server = subprocess.Popen(
        ["node", str(ENTRY), "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", *dirs,
         "--disable-telemetry", "--disable-workspace-trust", str(ws)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        run = subprocess.run(
            ["node", str(RIG / "workbench.js"), f"http://127.0.0.1:{port}", str(ws), mode],
            env={**os.environ, "NODE_PATH": str(RIG / "node_modules")},
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert run.stdout.strip(), run.stderr[-2000:]
    report: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    assert "error" not in report, report
    return report


def landed(where: dict[str, Any]) -> tuple[str, str]:
    """(the active editor's file in the workspace, "Ln L, Col C")."""
    return where["file"], where["cursor"]


@pytest.mark.usefixtures("rig")
def test_workbench_keeps_order_and_opens_at_the_definition(tmp_path: Path, vsix: Path) -> None:
    settings = {"nearsym.command": [sys.executable, "-m", "nearsym", "serve"]}
    report = workbench(tmp_path, vsix, "navigate", settings, dict(os.environ))
    assert report["nearsymAlpha"][0].endswith("register, alpha/registry.py:4"), report
    assert report["nearsymAlpha"][1].endswith("register, beta/registry.py:4"), report
    assert report["nearsymBeta"][0].endswith("register, beta/registry.py:4"), report
    assert report["nearsymBeta"][1].endswith("register, alpha/registry.py:4"), report
    assert sorted(report["ctrlT"][:3]) == ["register", "register", "unregister"], report
    # Enter on Ctrl+T's `unregister` (beta/registry.py line 8, column 5).
    assert report["ctrlTUnregister"][0] == "unregister", report
    assert landed(report["ctrlTLanded"]) == ("beta/registry.py", "Ln 8, Col 5"), report
    # The keybinding opens the pick; Enter on its second row, beta's `register`.
    assert landed(report["pickLanded"]) == ("beta/registry.py", "Ln 4, Col 5"), report
    # `activate` is a method of AlphaPlugin, line 9 column 9 of the open file.
    assert "activate  AlphaPlugin" in report["pickActivate"][0], report
    assert landed(report["activateLanded"]) == ("alpha/registry.py", "Ln 9, Col 9"), report
    assert any(text == "nearsym" for text in report["status"]), report


@pytest.mark.usefixtures("rig")
def test_workbench_installs_nearsym_when_there_is_none(tmp_path: Path, vsix: Path) -> None:
    # PATH without any `nearsym` (this venv's bin, where pip put one, included).
    path = os.pathsep.join(
        d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "nearsym").exists()
    )
    assert shutil.which("nearsym", path=path) is None
    assert shutil.which("python3", path=path), "the install needs a python3 on PATH"
    env = {**os.environ, "PATH": path}
    report = workbench(tmp_path, vsix, "install", {}, env)
    assert any("not installed" in text for text in report["offer"]), report
    assert any("not installed" in text for text in report["statusBefore"]), report
    assert any("installing" in text for text in report["statusSeen"]), report
    storage = tmp_path / "ud" / "User" / "globalStorage" / "nearsym.nearsym"
    assert (storage / "venv" / "bin" / "nearsym").exists(), report
    assert report["nearsymAlpha"][0].endswith("register, alpha/registry.py:4"), report
    assert report["nearsymAlpha"][1].endswith("register, beta/registry.py:4"), report
