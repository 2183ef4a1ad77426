"""VS Code's workbench, live: code-server in headless Chromium, driven with
playwright-core, with the packaged nearsym extension installed. With a file
of `alpha/` open, Ctrl+T answers with nearsym's symbols, and the extension's
own quick pick lists alpha's `register` first; with `beta/` open, beta's."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.editors

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "polyglot"
RIG = HERE / "vscode"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_vsix(tmp: Path) -> Path:
    work = tmp / "extension"
    shutil.copytree(
        REPO / "editors" / "vscode",
        work,
        ignore=shutil.ignore_patterns("node_modules", "out", "*.vsix"),
    )
    for step in (
        ["npm", "ci", "--no-audit", "--no-fund"],
        ["npm", "run", "compile"],
        ["npm", "run", "package"],
    ):
        subprocess.run(step, cwd=work, check=True, capture_output=True, timeout=300)
    return next(work.glob("*.vsix"))


def test_workbench_keeps_nearsym_order(tmp_path: Path) -> None:
    needed = [shutil.which(p) for p in ("npm", "node", "rg")] + [shutil.which("chromium")]
    if not all(needed):
        if os.environ.get("CI"):
            pytest.fail("npm, node, rg and chromium are needed (.ci/run installs them)")
        pytest.skip("npm, node, rg or chromium missing")
    subprocess.run(["bash", str(RIG / "setup.sh")], check=True, timeout=900)
    vsix = build_vsix(tmp_path)
    entry = RIG / "node_modules" / "code-server" / "out" / "node" / "entry.js"
    user_data, extensions, ws = tmp_path / "ud", tmp_path / "ext", tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    (user_data / "User").mkdir(parents=True)
    (user_data / "User" / "settings.json").write_text(
        json.dumps(
            {
                "nearsym.command": [sys.executable, "-m", "nearsym", "serve"],
                "workbench.startupEditor": "none",
                "security.workspace.trust.enabled": False,
                "telemetry.telemetryLevel": "off",
            }
        )
    )
    dirs = ["--user-data-dir", str(user_data), "--extensions-dir", str(extensions)]
    subprocess.run(
        ["node", str(entry), *dirs, "--install-extension", str(vsix)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = free_port()
    server = subprocess.Popen(
        ["node", str(entry), "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", *dirs,
         "--disable-telemetry", "--disable-workspace-trust", str(ws)],
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
            ["node", str(RIG / "workbench.js"), f"http://127.0.0.1:{port}", str(ws)],
            env={**os.environ, "NODE_PATH": str(RIG / "node_modules")},
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        server.terminate()
        server.wait(timeout=20)
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert "error" not in report, report
    assert report["nearsymAlpha"][0].endswith("register, alpha/registry.py"), report
    assert report["nearsymAlpha"][1].endswith("register, beta/registry.py"), report
    assert report["nearsymBeta"][0].endswith("register, beta/registry.py"), report
    assert report["nearsymBeta"][1].endswith("register, alpha/registry.py"), report
    assert sorted(report["ctrlT"][:3]) == ["register", "register", "unregister"], report
