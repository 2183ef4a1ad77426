"""What every real-editor test shares: a copy of the two-folder fixture,
the environment its editor script reads, and the rule that a missing
editor fails in CI (where .ci/run installs it) and skips elsewhere."""

from __future__ import annotations

import json
import os
import shutil
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
