"""The in-repo golden set: a ranking regression fails CI.

`tests/fixtures/golden/cases.jsonl` (made by `make_cases.py` from situations
written for this repo) runs through `nearsym.tools.evaluate`, the same path as
`nearsym eval`, and its figures must equal the stored baseline. A change that
moves them, up or down, updates the baseline on purpose:

    NEARSYM_UPDATE_GOLDEN=1 python -m pytest tests/golden

The DEV set (shared/golden) is the real measure; it runs as a benchmark
(`nearsym eval`), not here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from nearsym.core.rank import POLICIES
from nearsym.tools.evaluate import Corpora, evaluate, failures, load_cases

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "golden"
BASELINE = HERE / "baseline.json"
ROWS = ["seed", "nearsym"]


def figures(policy_name: str) -> tuple[dict[str, Any], str]:
    cases = load_cases(HERE.joinpath("cases.jsonl").read_text().splitlines())
    corpora = Corpora(str(HERE))
    report = evaluate(cases, corpora, POLICIES[policy_name])
    summary = report.summary()
    rounded = {
        key: {k: round(v, 3) for k, v in row.items()}
        for key, row in summary.items()
        if isinstance(row, dict)
    }
    return rounded, failures(report, corpora, POLICIES[policy_name])


@pytest.mark.parametrize("row", ROWS)
def test_figures_match_the_baseline(row: str) -> None:
    got, why = figures(row)
    stored = json.loads(BASELINE.read_text()) if BASELINE.exists() else {}
    if os.environ.get("NEARSYM_UPDATE_GOLDEN"):
        stored[row] = got
        BASELINE.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
        pytest.skip("baseline updated")
    assert row in stored, "no baseline: run with NEARSYM_UPDATE_GOLDEN=1"
    if got != stored[row]:
        print(why)  # every case not ranked first, with explain()
    assert got["overall"] == stored[row]["overall"]
    assert got == stored[row]


def test_nearsym_beats_the_seed_order_here() -> None:
    stored = json.loads(BASELINE.read_text())
    assert stored["nearsym"]["overall"]["mrr"] > stored["seed"]["overall"]["mrr"]
