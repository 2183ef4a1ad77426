"""A short smoke run of the soak (`tests/bench/soak.py`, run by hand for
10 minutes): queries and edits against the real server, 0 errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .conftest import FIXTURE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from soak import report, slowest, soak

pytestmark = pytest.mark.e2e


async def test_a_short_soak_has_no_errors() -> None:
    figures = await soak(FIXTURE, minutes=0.25, seed=3, every=5, quiet=True)
    print(report(figures))
    assert figures.latencies and figures.edits
    assert figures.errors == []
    print(slowest(figures, 5))
    assert len(figures.queries) == len(figures.latencies)
    assert any(kind for _, _, kind, _ in figures.queries)  # each edit is named after it
