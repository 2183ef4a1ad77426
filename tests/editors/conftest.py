"""What every real-editor test shares: a copy of the two-folder fixture,
the environment its editor script reads, and the rule that a missing
editor fails in CI (where .ci/run installs it) and skips elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "polyglot"


def require(present: bool, what: str) -> None:
    if not present:
        if os.environ.get("CI"):
            pytest.fail(f"{what} is not installed (.ci/run installs it)")
        pytest.skip(f"{what} is not installed")


def editor_workspace(
    tmp_path: Path, plugin: str, out_name: str
) -> tuple[Path, Path, dict[str, str]]:
    """(workspace, output file, environment) for a test of `editors/<plugin>`."""
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    (ws / ".git").mkdir()
    out = tmp_path / out_name
    env = {
        **os.environ,
        "WS": str(ws),
        "OUT": str(out),
        "PLUGIN": str(REPO / "editors" / plugin),
        "NEARSYM_CMD": json.dumps([sys.executable, "-m", "nearsym", "serve"]),
    }
    return ws, out, env


@pytest.fixture(scope="session")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """editors/vscode built as a person's .vsix is, once per test run: a
    clean `npm ci`, `npm run lint` (eslint, type-aware), `npm run package`
    (vsce, whose `vscode:prepublish` compiles with tsc, strict, and builds
    nearsym's wheel)."""
    npm = shutil.which("npm")
    require(npm is not None, "npm (to build editors/vscode)")
    assert npm
    work = tmp_path_factory.mktemp("vsix") / "extension"
    shutil.copytree(
        REPO / "editors" / "vscode",
        work,
        ignore=shutil.ignore_patterns("node_modules", "out", "server", "*.vsix"),
    )
    env = {**os.environ, "NEARSYM_SOURCE": str(REPO), "PYTHON": sys.executable}
    for step in (
        [npm, "ci", "--no-audit", "--no-fund"],
        [npm, "run", "lint"],
        [npm, "run", "package"],
    ):
        run = subprocess.run(step, cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"{step}: {run.stdout[-1500:]}{run.stderr[-1500:]}"
    return next(work.glob("*.vsix"))
