"""Closeness of a definition's file to the file the person has open.

Design note
-----------
Many definitions share a name (`__init__`, `run`, `parse`, `Config`); what
decides between them in an editor is where the person is. The measure here is
the plain directory-tree distance: steps up from the open file's folder to the
nearest common folder, plus steps down to the candidate's folder. It knows
nothing about tests versus package code or about imports: those are rank
rules of their own (`rank.RankPolicy`), each measured on the golden sets
(`nearsym eval --policy`, one row per rule; docs/ranking.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

SAME_FILE_SCORE = 1.0
"""The open file's own definitions come first among equals."""
SAME_FOLDER_SCORE = 0.9
"""Then its folder's; every further step divides by (1 + distance), which
keeps each step clearly apart from the next. Measured as a whole: after the
other evidence, closeness adds 0.002 MRR on the DEV golden set (the last
row of `nearsym eval dev.jsonl`, docs/ranking.md); the decay's shape is
not tuned."""


def folder_parts(path: str) -> list[str]:
    """The folders of file `path`, outermost first (what
    `directory_distance` compares)."""
    parts = os.path.normpath(path).split(os.sep)
    return [p for p in parts[:-1] if p]


def parts_distance(fa: Sequence[str], fb: Sequence[str]) -> int:
    """`directory_distance` of two files' `folder_parts`."""
    common = 0
    for x, y in zip(fa, fb, strict=False):
        if x != y:
            break
        common += 1
    return (len(fa) - common) + (len(fb) - common)


def directory_distance(a: str, b: str) -> int:
    """Steps between the folders of files `a` and `b` (absolute paths).

    0 for the same folder, 1 for a file in the parent or a child folder, 2 for a
    sibling folder. Invariant: symmetric, and 0 only for the same folder.
    """
    return parts_distance(folder_parts(a), folder_parts(b))


def proximity_score(candidate: str, open_file: str | None) -> float:
    """How close `candidate` is to `open_file`, in [0, 1].

    0.0 when no open file is known (everything ties, so the rank falls through
    to the next key). Samples: same file 1.0, same folder 0.9, parent or child
    folder 0.45, sibling folder 0.3, three steps 0.225.
    """
    if not open_file:
        return 0.0
    if os.path.normpath(candidate) == os.path.normpath(open_file):
        return SAME_FILE_SCORE
    return folder_score(candidate, open_file)


def folder_score(candidate: str, open_file: str) -> float:
    """`proximity_score` of a file that is not the open one: its folder's
    closeness alone (so the same for every file of that folder)."""
    return folder_scorer(open_file)(candidate)


def folder_scorer(open_file: str) -> Callable[[str], float]:
    """`folder_score` against one open file, its folders split once (a
    rerank scores up to 500 folders against the same open file)."""
    mine = folder_parts(open_file)

    def score(candidate: str) -> float:
        return SAME_FOLDER_SCORE / (1 + parts_distance(folder_parts(candidate), mine))

    return score
