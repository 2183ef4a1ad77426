"""The name alignment of `match._align`, for many names at once, in numpy.

Design note
-----------
The rerank scores one query against a pool of up to 500 names (and their
`container.name` readings). `match._align` walks each name in Python: fine
for one name, most of a query's time for a pool. Here the pool's names are
laid out as rows of a byte matrix and the same dynamic programme runs one
query character at a time over all rows and positions together:

- level 0: a position scores its landing points where it holds the query's
  first character;
- level i: a position holding query[i] extends either the best alignment
  ending two or more positions earlier (a gap: the running best of
  `score + GAP_EXTEND * end`, the leftmost on ties, as `_align` keeps it) or
  the one ending just before it (a run), whichever is strictly better, as
  `_align` decides;
- the raw score is the best at the last level.

Every sum is formed in the same order, from the same predecessor, as in
`_align`, so the scores are bit-for-bit equal (a property test holds them
to it). Positions `_align` prunes (no complete alignment passes there)
never feed a complete one, so computing them changes nothing. Names that
are not ASCII, or longer than `MAX_WIDTH`, are left to `_align`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from nearsym.core.match import (
    CASE_MISMATCH,
    GAP_EXTEND,
    GAP_OPEN,
    SCORE_RUN,
    SCORE_SKIP,
    SCORE_START,
    SCORE_WORD,
    TAIL,
    TAIL_CAP,
    ceiling,
)

MAX_WIDTH = 128
"""Longest name aligned here; longer ones go to `match._align`."""
MIN_NAMES = 8
"""Fewer names than this are not worth the matrix."""

Scored = tuple[float, float, float]
"""(raw score less the tail, the most the query could earn, the tail), as
`match.Alignment` holds them."""

_SEPARATOR_BYTES = np.zeros(256, dtype=np.bool_)
_SEPARATOR_BYTES[list(b"_-./:$ #\\")] = True
_NEG = -np.inf


def _matrix(names: list[bytes], width: int) -> NDArray[np.uint8]:
    out = np.zeros((len(names), width), dtype=np.uint8)
    flat = np.frombuffer(b"".join(names), dtype=np.uint8)
    lengths = np.fromiter((len(n) for n in names), dtype=np.int64, count=len(names))
    rows = np.repeat(np.arange(len(names)), lengths)
    starts = np.cumsum(lengths) - lengths
    cols = np.arange(len(flat)) - np.repeat(starts, lengths)
    out[rows, cols] = flat
    return out


def landing_bases(chars: NDArray[np.uint8], lengths: NDArray[np.int64]) -> NDArray[np.float64]:
    """`match._landing_bases` of each row (ASCII names, zero-padded)."""
    width = chars.shape[1]
    sep = _SEPARATOR_BYTES[chars]
    upper = (chars >= 65) & (chars <= 90)
    lower = (chars >= 97) & (chars <= 122)
    digit = (chars >= 48) & (chars <= 57)
    prev = np.zeros_like(sep)
    prev_sep = np.ones_like(sep)  # before the name: like a separator
    prev_sep[:, 1:] = sep[:, :-1]
    prev_low_digit = prev.copy()
    prev_low_digit[:, 1:] = (lower | digit)[:, :-1]
    prev_upper = prev.copy()
    prev_upper[:, 1:] = upper[:, :-1]
    next_lower = prev.copy()
    next_lower[:, :-1] = lower[:, 1:]
    starts = (prev_sep & ~sep) | (upper & prev_low_digit) | (upper & prev_upper & next_lower)
    bases = np.where(starts, SCORE_WORD, SCORE_SKIP)
    bases[:, 0] = SCORE_START
    inside = np.arange(width)[None, :] < lengths[:, None]
    return np.where(inside, bases, 0.0)


def align_many(
    typed: str, names: Iterable[str], smart_case: bool = True
) -> dict[str, Scored | None]:
    """`match._align(typed, name, smart_case)` for each name it can take
    (see the module note), as (raw, best, tail); None where `typed` is not a
    subsequence of the name. Names it leaves out are not in the result."""
    chosen = [n for n in dict.fromkeys(names) if takes(n)]
    found = align_arrays(typed, chosen, smart_case)
    if found is None:
        return {}
    raw, tail, ok = found
    best = ceiling(len(typed))
    return {
        name: (r, best, t) if k else None
        for name, r, t, k in zip(chosen, raw.tolist(), tail.tolist(), ok.tolist(), strict=True)
    }


def takes(name: str) -> bool:
    """Whether `align_arrays` can align `name`."""
    return 0 < len(name) <= MAX_WIDTH and name.isascii()


def align_arrays(
    typed: str, names: list[str], smart_case: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]] | None:
    """For names that `takes` (at least `MIN_NAMES` of them): the raw score
    less the tail, the tail, and whether `typed` is a subsequence at all;
    None for a query it cannot take (empty, not ASCII) or too few names."""
    query = typed.lower()
    m = len(query)
    if not m or not typed.isascii() or "\0" in typed or len(names) < MIN_NAMES:
        return None
    encoded = [n.encode("ascii") for n in names]
    width = max(len(b) for b in encoded)
    chars = _matrix(encoded, width)
    lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
    folded = np.where((chars >= 65) & (chars <= 90), chars + 32, chars).astype(np.uint8)
    bases = landing_bases(chars, lengths)
    smart = smart_case and typed != query
    positions = np.arange(width, dtype=np.int64)
    rows = np.arange(len(names))[:, None]

    def here(i: int) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        if smart:
            mismatch = chars != ord(typed[i])
            return np.where(mismatch, bases - CASE_MISMATCH, bases), mismatch
        return bases, np.zeros(chars.shape, dtype=np.bool_)

    landing, _ = here(0)
    scores = np.where(folded == ord(query[0]), landing, _NEG)
    for i in range(1, m):
        landing, mismatch = here(i)
        # The gap predecessor of j: the leftmost best `score + GAP_EXTEND * k`
        # over k <= j - 2.
        value = scores + GAP_EXTEND * positions
        running = np.maximum.accumulate(value, axis=1)
        before = np.full_like(running, _NEG)
        before[:, 1:] = running[:, :-1]
        lead = np.maximum.accumulate(np.where(value > before, positions, -1), axis=1)
        k = np.full_like(lead, -1)
        k[:, 2:] = lead[:, :-2]
        has_lead = k >= 0
        kk = np.where(has_lead, k, 0)
        gap = scores[rows, kk] + landing - GAP_OPEN - GAP_EXTEND * (positions - kk - 2)
        gap = np.where(has_lead, gap, _NEG)
        # The run predecessor: the alignment ending at j - 1.
        previous = np.full_like(scores, _NEG)
        previous[:, 1:] = scores[:, :-1]
        run_points = np.where(mismatch, SCORE_RUN - CASE_MISMATCH, SCORE_RUN)
        run = previous + np.maximum(run_points, landing)
        top = np.where(run > gap, run, gap)
        scores = np.where(folded == ord(query[i]), top, _NEG)
    best_raw = scores.max(axis=1)
    ok = best_raw != _NEG
    tail = np.minimum(TAIL_CAP, TAIL * np.maximum(0, lengths - m))
    return np.where(ok, best_raw - tail, 0.0), tail, ok
