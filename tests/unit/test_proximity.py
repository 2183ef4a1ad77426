from __future__ import annotations

import pytest

from nearsym.core.proximity import directory_distance, proximity_score


@pytest.mark.parametrize(
    ("a", "b", "steps"),
    [
        ("/w/a/x.py", "/w/a/y.py", 0),
        ("/w/a/x.py", "/w/x.py", 1),
        ("/w/a/x.py", "/w/b/y.py", 2),
        ("/w/a/b/c/x.py", "/w/y.py", 3),
        ("/w/a/b/x.py", "/w/c/d/y.py", 4),
    ],
)
def test_directory_distance(a: str, b: str, steps: int) -> None:
    assert directory_distance(a, b) == steps == directory_distance(b, a)


def test_closeness_falls_with_each_step() -> None:
    open_file = "/w/a/b/open.py"
    ladder = ["/w/a/b/open.py", "/w/a/b/x.py", "/w/a/x.py", "/w/c/x.py", "/w/c/d/x.py"]
    scores = [proximity_score(p, open_file) for p in ladder]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) == len(scores)


def test_no_open_file_means_no_closeness() -> None:
    assert proximity_score("/w/a/x.py", None) == 0.0
