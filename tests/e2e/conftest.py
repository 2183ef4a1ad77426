"""Drive the real `nearsym serve` over stdio with pytest-lsp."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "polyglot"
SERVER = [sys.executable, "-m", "nearsym", "serve", "--stdio"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A private copy of the polyglot fixture, so a test may change it."""
    root = tmp_path / "polyglot"
    shutil.copytree(FIXTURE, root)
    return root
