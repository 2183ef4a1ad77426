"""The alignment of a query in names: one dynamic programme, many names.

Design note
-----------
A person typing in a symbol picker types the *beginnings* of the words of
the name they want: `reg` for `register_blueprint`, `rb` for its initials,
`hs` for `HTTPServer`. The alignment rewards a query for landing on those
beginnings and for running on from them, and charges it for scattering.

- The query must occur in the name as an ordered, case-insensitive
  subsequence; otherwise there is no alignment (and the name score is 0).
- Of the many ways a subsequence can be aligned, the best is scored
  (dynamic programming over every position each query character can take),
  not the first greedy one: greedy matching puts the `s` of `hs` on the `S`
  of `HTTPS` in `HTTPSServer` only by luck.
- Each matched character earns points by where it lands: the start of the
  name (`SCORE_START`), the start of a word (`SCORE_WORD`, see
  `words.word_starts`), continuing a run (`SCORE_RUN`, or the points of
  the word start the run began on, up to `RUN_CARRY`: a prefix of a word
  is as good evidence as the initials of several), and least when reached
  by skipping into the middle of a word (`SCORE_SKIP`). Characters skipped
  before a word start cost `GAP_TO_WORD` (nothing: typing the initials of a
  name, `CE` for `ConfigError`, is not scattering); skipped before the
  middle of a word, they cost a gap (`GAP_OPEN` plus `GAP_EXTEND` per
  further character); characters skipped before the first match are free
  (people start anywhere); every character the name has beyond the query
  costs `TAIL`, so a shorter name wins when all else is equal.

The names are laid out as rows of a code point matrix (`words.name_matrix`)
and the programme runs one query character at a time over all rows and
positions together, in numpy:

    level 0:  score[j] = landing(j)                     where name[j] == q[0]
    level i:  score[j] = max(run, gap)                  where name[j] == q[i]
              run = score'[j-1] + max(carry'[j-1], landing(j))
              gap = score'[k] + landing(j) - GAP_TO_WORD    (j a word start)
                    for the k <= j-2 maximising score'[k]
              gap = score'[k] + landing(j) - GAP_OPEN - GAP_EXTEND * (j-k-2)
                    for the k <= j-2 maximising score'[k] + GAP_EXTEND * k
              carry[j] = carry'[j-1] after a run, else
                         max(SCORE_RUN, min(landing(j), RUN_CARRY))
    raw      = max_j score[j] at the last level, less the tail

(`score'` is the level before.) Both gap costs are linear in the distance
(or flat), so the best gap predecessor is a running maximum, and a level
costs a few passes over the matrix instead of a quadratic search. Each
level holds only the columns its character can take in a whole alignment
(the band: `i` characters before it, `m - 1 - i` after), `width - m + 1`
of them. Ties are broken to the left: the leftmost best gap predecessor,
the gap over an equal run, the leftmost best end; the positions of
`explain()` follow the same choices.

One programme serves every caller: the rerank aligns its whole pool at
once; one name is a matrix of one row. A name longer than `WIDE` is
aligned in a matrix of its own kind, so that one long name does not widen
the pool's matrix. The slow reference implementation (one name at a time,
in Python, quadratic) lives in the tests, which hold this one to it.

The same programme is written in C (`_align.c`, an optional extension
built at install): name by name over its own length, in whole units as
64-bit integers. It serves the rerank (scores, no positions) for ASCII
queries and names, which is nearly every pool; numpy aligns the rest and
every `explain()`. On the Linux kernel's query mix it took the alignment
from 238 to 22 ms of the mix's 2.4 s. The tests hold both to the
reference, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from nearsym.core.words import SEPARATORS, name_matrix, word_starts

# Points per matched character, by where it lands. Only their order and
# rough ratios matter; the values follow fzf's scheme (a boundary is worth
# more than a run, a run more than a scattered hit). Chosen, not tuned: the
# golden sets (`nearsym eval`) measure them together, never one by one.
SCORE_START = 4.0
"""First character of the name: the strongest evidence of intent."""
SCORE_WORD = 3.0
"""Start of a word: camel humps, snake initials, acronym ends."""
SCORE_RUN = 2.0
"""Continues the previous matched character (a prefix of a word)."""
SCORE_SKIP = 1.0
"""Reached by skipping into the middle of a word: weak evidence."""

CASE_MISMATCH = 0.5
"""Smart case, as in fzf and Vim: when the query has a capital, each matched
character whose case differs from what was typed loses half a run's worth,
so `FLO` prefers `FLOAT` to `FloatRange` and `Con` prefers `Config` to
`context_processor`. An all-lower-case query matches any case for free.
Measured on the dev set (the `+smart case` row of `nearsym eval`)."""

GAP_OPEN = 1.0
"""Cost of skipping over characters between two matched ones: one
scattered hit should not be worth a boundary hit (SCORE_WORD - GAP_OPEN
> SCORE_SKIP)."""
GAP_EXTEND = 0.1
"""Each further skipped character: long gaps cost a little more than short."""
RUN_CARRY = SCORE_WORD
"""The most a run's later characters earn: the points of the word start it
began on (a run begun on the name's start earns a word's). With 2 (runs
earn `SCORE_RUN` whatever their start) prefixes lost to initials: DEVLARGE
prefix3 MRR 0.215 against 0.540 (`nearsym eval`)."""
GAP_TO_WORD = 0.0
"""Cost of skipping to the start of a word, whatever the distance: typing
the initials of a name (`CE` for `ConfigError`) is not scattering. Charged
`GAP_OPEN` like any gap (before), initials MRR was 0.397 on DEVLARGE, 0.686
on DEV; free, 0.700 and 0.814 (`nearsym eval`, with the initials tier)."""
TAIL = 0.03
"""Per character of name beyond the query's length. Small: it only separates
names whose alignments are equally good (`reg` -> `register` before
`register_blueprint`)."""
TAIL_CAP = 1.0
"""The tail never costs more than one scattered hit, so a long name whose
words the query hits cleanly still beats a short scattered one."""

WIDE = 128
"""Names longer than this are aligned apart from the rest (a pool's names
are nearly all shorter; one long name would widen every row)."""

_NEG = np.float32(-np.inf)

UNIT = 10
"""The programme adds points in tenths, as whole numbers: exact in float32
(every sum an alignment can reach is far below 2**24), so equal alignments
score exactly equal, whatever the order of their additions, and the
matrices take half the memory of float64. Every constant above is a whole
number of tenths (checked here)."""


def _whole(points: float) -> np.float32:
    scaled = points * UNIT
    if abs(scaled - round(scaled)) > 1e-9:
        raise ValueError(f"{points} is not a whole number of 1/{UNIT} points")
    return np.float32(round(scaled))


_START, _WORD, _RUN, _SKIP = (_whole(p) for p in (SCORE_START, SCORE_WORD, SCORE_RUN, SCORE_SKIP))
_CASE, _OPEN, _EXTEND = (_whole(p) for p in (CASE_MISMATCH, GAP_OPEN, GAP_EXTEND))
_TO_WORD, _CARRY = _whole(GAP_TO_WORD), _whole(RUN_CARRY)


NATIVE = 2
"""`_align.c`'s `VERSION`: raised with any change to what its programme
gives. A module built from another version (an editable install not built
again after a pull) is not used."""

NativePoints = tuple[int, int, int, int, int, int, int, int, int, float, float, float]

NATIVE_POINTS: NativePoints = (
    int(_START),
    int(_WORD),
    int(_RUN),
    int(_SKIP),
    int(_CASE),
    int(_OPEN),
    int(_EXTEND),
    int(_TO_WORD),
    int(_CARRY),
    TAIL,
    TAIL_CAP,
    float(UNIT),
)
"""The constants above as the C programme takes them (whole units)."""

NativeAlign = Callable[
    [str, Sequence[str], bool, NativePoints, bytes],
    tuple[bytearray, bytearray, bytearray, list[int]],
]
_SEPARATORS = SEPARATORS.encode()
_native: NativeAlign | None = None
"""`_align.align_ascii`, where the install built it from this source."""
try:
    from nearsym.core import _align
except ImportError:  # not built: numpy aligns every name
    pass
else:
    if getattr(_align, "VERSION", None) == NATIVE:
        _native = _align.align_ascii


def ceiling(m: int) -> float:
    """The most a query of `m` characters can earn: all hits on word starts
    after a name start."""
    return SCORE_START + max(SCORE_WORD, SCORE_RUN) * (m - 1)


@dataclass(frozen=True, slots=True)
class Alignments:
    """The best alignment of one query in each of several names."""

    raw: NDArray[np.float64]
    """Points less gaps and tail (0.0 where `ok` is False)."""
    tail: NDArray[np.float64]
    """The tail charged to each name."""
    ok: NDArray[np.bool_]
    """Whether the query is a subsequence of the name at all."""
    best: float
    """The most the query could earn (`ceiling`)."""
    positions: tuple[tuple[int, ...], ...] = ()
    """Per name, the positions the query's characters landed on (empty
    where `ok` is False); only when asked for."""


def fold(text: str) -> str:
    """`text` lower-cased character by character: `str.lower` where it keeps
    the length (so positions in the folded text are positions in `text`),
    otherwise each character alone (a character whose lower case is longer,
    like `İ`, stays as it is)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def align(
    typed: str, names: Sequence[str], smart_case: bool = True, positions: bool = False
) -> Alignments:
    """The best alignment of `typed` in each of `names` (see the module
    note). `smart_case`: a capital in `typed` asks for that case
    (`CASE_MISMATCH`); `positions`: also trace where each character landed
    (for `explain()`; the ranking needs only the scores)."""
    count = len(names)
    m = len(typed)
    traced: list[tuple[int, ...]] = [()] * count
    left: Sequence[int] = range(count)  # the names numpy aligns
    if m and count and not positions and _native is not None and typed.isascii():
        # The programme in C, name by name; numpy for the names it leaves.
        smart = smart_case and typed != fold(typed)  # as `_align_rows` decides it
        raw_b, tail_b, ok_b, left = _native(typed, names, smart, NATIVE_POINTS, _SEPARATORS)
        raw = np.frombuffer(raw_b, dtype=np.float64)
        tail = np.frombuffer(tail_b, dtype=np.float64)
        ok = np.frombuffer(ok_b, dtype=np.bool_)
    else:
        raw = np.zeros(count)
        tail = np.zeros(count)
        ok = np.zeros(count, dtype=np.bool_)
    if m and left:
        short = [i for i in left if 0 < len(names[i]) <= WIDE]  # "" holds nothing
        long = [i for i in left if len(names[i]) > WIDE]
        for chosen in (part for rows in (short, long) for part in _by_width(rows, names)):
            at = np.asarray(chosen, dtype=np.intp)
            r, t, k, where = _align_rows(typed, [names[i] for i in chosen], smart_case, positions)
            raw[at], tail[at], ok[at] = r, t, k
            for i, p in zip(chosen, where, strict=False):
                traced[i] = p
    return Alignments(raw, tail, ok, ceiling(m), tuple(traced) if positions else ())


SPLIT_ROWS = 64
"""Rows from which a matrix may be cut in two by width (`_by_width`)."""
SPLIT_SAVING = 0.7
"""A cut is made when the two matrices hold at most this share of the
one's cells: each costs the programme's fixed steps again (a guess; on
the Linux kernel's slowest queries' pools, 15% less time aligning)."""


def _by_width(rows: list[int], names: Sequence[str]) -> list[list[int]]:
    """`rows` (indices into `names`) as one matrix, or as two, the shorter
    names apart from the longer, where that saves enough cells: one long
    name otherwise widens every row of a pool."""
    if len(rows) < SPLIT_ROWS:
        return [rows] if rows else []
    lengths = np.fromiter((len(names[i]) for i in rows), dtype=np.int64, count=len(rows))
    order = np.argsort(lengths, kind="stable")
    ordered = lengths[order]
    n = len(rows)
    cut = np.arange(1, n)
    cells = cut * ordered[:-1] + (n - cut) * ordered[-1]
    best = int(np.argmin(cells))
    if cells[best] > SPLIT_SAVING * n * int(ordered[-1]):
        return [rows]
    at = np.asarray(rows, dtype=np.intp)[order]
    k = best + 1
    return [at[:k].tolist(), at[k:].tolist()]


def _leftmost_best_before(value: NDArray[np.float32]) -> NDArray[np.int64]:
    """Per cell t of each row, the leftmost t' < t with the greatest `value`
    (0 where there is none, as at t = 0, whose gap is -inf anyway). Only
    `explain()`'s positions need where the best lies; the scores need only
    its value, a running maximum."""
    running = np.maximum.accumulate(value, axis=1)
    before = np.full_like(running, _NEG)
    before[:, 1:] = running[:, :-1]
    columns = np.arange(value.shape[1], dtype=np.int64)
    lead = np.maximum.accumulate(np.where(value > before, columns, -1), axis=1)
    k = np.zeros_like(lead)
    k[:, 1:] = np.maximum(lead[:, :-1], 0)
    return k


def _running_max_before(value: NDArray[np.float32]) -> NDArray[np.float32]:
    """Per cell t of each row, the greatest `value` over t' < t (-inf where
    there is none)."""
    out = np.full_like(value, _NEG)
    if value.shape[1] > 1:
        np.maximum.accumulate(value[:, :-1], axis=1, out=out[:, 1:])
    return out


def _align_rows(
    typed: str, names: list[str], smart_case: bool, trace: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_], list[tuple[int, ...]]]:
    query = fold(typed)
    m = len(query)
    # A narrow matrix pads with 0: a query holding NUL needs a wide one.
    chars, lengths = name_matrix(names, narrow="\0" not in typed)
    narrow = chars.dtype == np.uint8
    width = chars.shape[1]
    tail = np.minimum(TAIL_CAP, TAIL * np.maximum(0, lengths - m))
    # Query character i can only land on columns i .. i + band - 1 of a
    # whole alignment (i characters before it, m - 1 - i after), so each
    # level holds only those: cell t of level i is column i + t. The run
    # predecessor of cell t is then cell t of the level before, and a gap's
    # (columns k <= j - 2) the cells t' < t.
    band = width - m + 1
    if band <= 0:  # no name is long enough to hold the query
        none = np.zeros(len(names))
        return none, tail, np.zeros(len(names), dtype=np.bool_), [()] * len(names)
    folded = np.where((chars >= 65) & (chars <= 90), chars + 32, chars).astype(chars.dtype)
    wide_rows = [] if narrow else np.flatnonzero((chars >= 128).any(axis=1)).tolist()
    if wide_rows:  # Unicode's lower case (`fold` keeps the length)
        wide, _ = name_matrix([fold(names[r]) for r in wide_rows], narrow=False)
        folded[wide_rows, : wide.shape[1]] = wide
    # (Cells past a name's end match no query character, so what they
    # would earn never counts.) Points are counted in `UNIT`s as whole
    # numbers in float32 (exact, and half the memory of float64).
    starts = word_starts(chars, lengths)
    bases = np.where(starts, _WORD, _SKIP).astype(np.float32)
    bases[:, 0] = _START
    smart = smart_case and typed != query

    def equal(matrix: NDArray[np.generic], i: int, char: str) -> NDArray[np.bool_]:
        """Where `char` is in level i's columns of `matrix`."""
        code = ord(char)
        if narrow and code > 127:  # no ASCII name holds it
            return np.zeros((len(names), band), dtype=np.bool_)
        found: NDArray[np.bool_] = matrix[:, i : i + band] == code
        return found

    columns = np.arange(width, dtype=np.int64)
    # A gap from k to j costs GAP_OPEN + GAP_EXTEND * (j - k - 2): the best
    # predecessor maximises score[k] + GAP_EXTEND * k, less the part of the
    # cost that depends on j alone.
    extend_at = (_EXTEND * columns).astype(np.float32)
    gap_cost = (_OPEN + _EXTEND * (columns - 2)).astype(np.float32)
    mismatched_bases = bases - _CASE
    # What the next character earns by continuing the run ending here: a
    # run begun on a word start keeps earning the word's points (`add` hits
    # `add_task` as well as the initials of `AttributeDocumenterDirective`).
    fresh = np.maximum(_RUN, np.minimum(bases, _CARRY))
    inside = ~starts  # cells a gap to a word start cannot land on

    def landing(i: int) -> tuple[NDArray[np.float32], NDArray[np.bool_] | None]:
        at = slice(i, i + band)
        if smart:
            mismatch = ~equal(chars, i, typed[i])
            return np.where(mismatch, mismatched_bases[:, at], bases[:, at]), mismatch
        return bases[:, at], None

    here, _ = landing(0)
    scores = np.where(equal(folded, 0, query[0]), here, _NEG)
    carry = fresh[:, :band]
    choices: list[tuple[NDArray[np.bool_], NDArray[np.int64]]] = []
    for i in range(1, m):
        at = slice(i, i + band)
        here, mismatch = landing(i)
        value = scores + extend_at[i - 1 : i - 1 + band]
        gap = _running_max_before(value)
        gap += here
        gap -= gap_cost[at]
        # A gap that lands on a word start costs `GAP_TO_WORD` whatever its
        # length: its predecessor is the best score over k <= j - 2.
        to_word = _running_max_before(scores)
        to_word += here
        if _TO_WORD:
            to_word -= _TO_WORD
        np.copyto(to_word, _NEG, where=inside[:, at])
        if trace:  # absolute columns: cell t' of level i - 1 is column i - 1 + t'
            better = to_word > gap
            kk = np.where(better, _leftmost_best_before(scores), _leftmost_best_before(value))
            kk += i - 1
            np.copyto(gap, to_word, where=better)
        else:  # the same values: where the two are equal, either is the gap
            np.maximum(gap, to_word, out=gap)
        # The run predecessor: the alignment ending at j - 1 (cell t of the
        # level before), which carries what its run earns.
        run_points = np.where(mismatch, carry - _CASE, carry) if mismatch is not None else carry
        run = scores + np.maximum(run_points, here)
        is_run = run > gap
        scores = np.where(equal(folded, i, query[i]), np.where(is_run, run, gap), _NEG)
        carry = np.where(is_run, carry, fresh[:, at])
        if trace:
            choices.append((is_run, kk))
    best_points = scores.max(axis=1)
    ok = best_points != _NEG
    best_raw = best_points.astype(np.float64) / UNIT
    where: list[tuple[int, ...]] = []
    if trace:
        ends = scores.argmax(axis=1).tolist()  # the leftmost best end
        for row, end in enumerate(ends):
            if not ok[row]:
                where.append(())
                continue
            path = [end + m - 1]
            for level, (is_run, kk) in zip(range(m - 1, 0, -1), reversed(choices), strict=True):
                j = path[-1]
                t = j - level
                path.append(j - 1 if is_run[row, t] else int(kk[row, t]))
            where.append(tuple(reversed(path)))
    return np.where(ok, best_raw - tail, 0.0), tail, ok, where
