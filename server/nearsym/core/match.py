"""The name score: how well a query names a definition, in [0, 1].

Design note
-----------
The score of one string against a name is its alignment (`align`, where the
points a character earns by where it lands are explained), normalised by
the most the query could earn, with the exact name above everything else:

- the query is not an ordered, case-insensitive subsequence of the name:
  exactly 0 (there is no threshold to guess, and "no evidence" is never
  confused with "weak evidence");
- the exact name: 1.0 (0.98 when only the case differs and the query is
  all lower case; with a capital typed, smart case scores such a name as
  a non-exact match: `Float` finds `FloatRange` before `FLOAT`);
- anything else: mapped into [`NON_EXACT_FLOOR`, `NON_EXACT_CAP`].

A definition is read in the ways a person may have meant it:

- a qualified query (`App.register`, see `query`) is scored against the
  qualified name `container.name`, and is exact when it equals a dotted
  suffix of it (`Inner.m` is exact for `Outer.Inner.m`);
- otherwise the name is scored, whole (whitespace removed) and word by
  word (every word must match; the mean of the words' scores weighed by
  their lengths, so a one-letter word counts a little: `add_o` lands its
  `o` on the word `object` of `add_object_type`, inside `row` of
  `add_row`), the better reading winning; and the owner's reading
  `container.name` counts too, at `QUALIFIED_DISCOUNT` (`SyncQueue` finds
  `SyncQueue.push` at half weight).

`NameMatcher` is built once per query, like clangd's `FuzzyMatcher`, and
scores a whole pool at once (each string of a reading is one row of one
alignment); one definition is a pool of one. Each score comes with and
without the tail penalty (the length of the name): the rank compares the
shape of the match first and the length only later.

A name one edit from the query (`typos`) that is not a true match scores
`typos.TYPO_SCORE`, below every true match: the fallback retrieval adds
such names when true matches are few. Deliberately not handled here:
anything about paths or closeness (see `proximity` and `rank`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from nearsym.core.align import align
from nearsym.core.model import qualified
from nearsym.core.query import Query
from nearsym.core.typos import TYPO_MIN_LENGTH, TYPO_SCORE, one_edit
from nearsym.core.words import is_subsequence

EXACT_SCORE = 1.0
EXACT_IGNORING_CASE_SCORE = 0.98
NON_EXACT_CAP = 0.95
"""Every non-exact match scores at most this: the exact name always wins."""
NON_EXACT_FLOOR = 0.01
"""A match never scores 0, which is reserved for 'not a subsequence'."""

QUALIFIED_DISCOUNT = 0.5
"""A method found by its owner's name (`SyncQueue` -> `SyncQueue.push`) gets
half the evidence, so the type itself stays above its own methods."""

_Pair = tuple[NDArray[np.float64], NDArray[np.float64]]
"""Scores of many strings, with and without the tail penalty."""


@dataclass(frozen=True, slots=True)
class NameEvidence:
    """The components of a definition's name score, for `explain()`."""

    score: float
    """The name score, in [0, 1]."""
    shape: float
    """The score without the tail penalty: the shape of the match alone."""
    reading: str
    """Which reading gave the score: `name`, `owner (discounted)`,
    `qualified` or `qualified, exact`."""
    matched: str
    """The string the query was matched against."""
    positions: tuple[int, ...] = ()
    """Where in `matched` the query's characters landed (when asked)."""


def highlight(name: str, positions: tuple[int, ...]) -> str:
    """`register_blueprint` with positions (0, 9) -> `[r]egister_[b]lueprint`."""
    marks = set(positions)
    return "".join(f"[{c}]" if i in marks else c for i, c in enumerate(name))


def name_evidence(query: Query) -> Callable[[str, str], bool]:
    """Whether a definition's name score is above 0, without scoring, as
    `(name, container) -> bool`: the query (whitespace removed) must be an
    ordered subsequence of the name, or of `container.name` (the owner
    reading, or a qualified query)."""
    if query.qualified:
        wanted = query.target.lower()

        def in_order(name: str, container: str) -> bool:
            return bool(wanted) and is_subsequence(wanted, qualified(container, name).lower())

        return in_order
    joined = query.folded
    if not joined:
        return lambda name, container: False
    typos = len(joined) >= TYPO_MIN_LENGTH

    # A name answers alone, whatever its owner: decided once per name (an
    # exact pool holds thousands of rows of one name).
    by_name: dict[str, bool] = {}

    def plain(name: str, container: str) -> bool:
        alone = by_name.get(name)
        if alone is None:
            low = name.lower()
            alone = is_subsequence(joined, low) or (typos and one_edit(joined, low))
            by_name[name] = alone
        if alone:
            return True
        return bool(container) and is_subsequence(joined, f"{container}.{name}".lower())

    return plain


class NameMatcher:
    """The name score of one query for many definitions (see the module
    note): `(name, container)` pairs in, (score, score without the tail)
    out. `prime` scores a pool at once; `both` then reads it."""

    def __init__(self, query: Query, smart_case: bool = True, cased_exact: bool = True) -> None:
        self.query = query
        self.smart_case = smart_case
        self.cased_exact = cased_exact
        """Whether smart case applies to a name equal to the query but for
        case (`RankPolicy.case_in_exact`)."""
        self.low_target = query.target.lower()
        self._both: dict[tuple[str, str], tuple[float, float]] = {}

    def prime(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Score many (name, container) pairs at once; `both` looks them up."""
        distinct = [p for p in dict.fromkeys(pairs) if p not in self._both]
        if distinct:
            scored, shaped = self.scores(distinct)
            self._both.update(zip(distinct, zip(scored, shaped, strict=True), strict=True))

    def both(self, name: str, container: str) -> tuple[float, float]:
        """(score, score without the tail penalty) of a definition."""
        pair = (name, container)
        found = self._both.get(pair)
        if found is None:
            self.prime([pair])
            found = self._both[pair]
        return found

    def scores(self, pairs: Sequence[tuple[str, str]]) -> tuple[list[float], list[float]]:
        """(scores, scores without the tail penalty) of the definitions."""
        if self.query.qualified:
            full = [qualified(c, n) for n, c in pairs]
            with_tail, without = self._exact_qualified(full, *self._single(self.query.target, full))
            return with_tail.tolist(), without.tolist()
        plain, owner = self._readings(pairs)
        out = [plain[0].tolist(), plain[1].tolist()]
        for v in (0, 1):
            for k, i in enumerate(owner[0]):
                if out[v][i] < QUALIFIED_DISCOUNT * EXACT_SCORE:
                    discounted = QUALIFIED_DISCOUNT * float(owner[1 + v][k])
                    if discounted > out[v][i]:
                        out[v][i] = discounted
        for i, (name, _) in enumerate(pairs):
            if out[0][i] == 0.0 and self._typo(name):
                out[0][i] = out[1][i] = TYPO_SCORE
        return out[0], out[1]

    def _typo(self, name: str) -> bool:
        folded = self.query.folded
        return len(folded) >= TYPO_MIN_LENGTH and one_edit(folded, name.lower())

    def explain(self, name: str, container: str, positions: bool = False) -> NameEvidence:
        """The name score of one definition with the reading that produced
        it; `positions=True` also finds which characters matched."""
        query = self.query
        if query.qualified:
            full = qualified(container, name)
            score, shape = self.both(name, container)
            if self._is_exact_qualified(full):
                return NameEvidence(score, shape, "qualified, exact", full)
            return NameEvidence(score, shape, "qualified", full, self._where(query.target, full))
        plain, owner = self._readings([(name, container)])
        score, shape = float(plain[0][0]), float(plain[1][0])
        reading, matched = "name", name
        if len(owner[0]):
            discounted = [QUALIFIED_DISCOUNT * float(owner[1 + v][0]) for v in (0, 1)]
            if score < QUALIFIED_DISCOUNT * EXACT_SCORE and discounted[0] > score:
                score, reading, matched = discounted[0], "owner (discounted)", f"{container}.{name}"
            if shape < QUALIFIED_DISCOUNT * EXACT_SCORE and discounted[1] > shape:
                shape = discounted[1]
        if score == 0.0 and self._typo(name):
            return NameEvidence(TYPO_SCORE, TYPO_SCORE, "typo (one edit)", name)
        return NameEvidence(score, shape, reading, matched, self._where(query.compact, matched))

    def _where(self, typed: str, matched: str) -> tuple[int, ...]:
        found = align(typed, [matched], self.smart_case, positions=True)
        return found.positions[0] if found.positions else ()

    def _is_exact_qualified(self, full: str) -> bool:
        low = full.lower()
        return low == self.low_target or low.endswith("." + self.low_target)

    def _exact_qualified(
        self, full: list[str], with_tail: NDArray[np.float64], without: NDArray[np.float64]
    ) -> _Pair:
        target = self.query.target
        for i, f in enumerate(full):
            if self._is_exact_qualified(f):
                with_tail[i] = without[i] = (
                    EXACT_SCORE if f.endswith(target) else EXACT_IGNORING_CASE_SCORE
                )
        return with_tail, without

    def _readings(
        self, pairs: Sequence[tuple[str, str]]
    ) -> tuple[_Pair, tuple[list[int], NDArray[np.float64], NDArray[np.float64]]]:
        """The plain reading of each pair, and the owner reading of those
        it could improve: (which pairs, with the tail, without)."""
        names = list(dict.fromkeys(n for n, _ in pairs))
        by_name = self._plain(names)
        where = {n: i for i, n in enumerate(names)}
        index = [where[n] for n, _ in pairs]
        plain = (by_name[0][index], by_name[1][index])
        low = [
            i
            for i, (n, c) in enumerate(pairs)
            if c and min(plain[0][i], plain[1][i]) < QUALIFIED_DISCOUNT * EXACT_SCORE
        ]
        owner = self._plain([f"{pairs[i][1]}.{pairs[i][0]}" for i in low])
        return plain, (low, owner[0], owner[1])

    def _plain(self, strings: list[str]) -> _Pair:
        """The plain reading of each string: whole and word by word."""
        words = self.query.words
        whole_t, whole_n = self._single(self.query.compact, strings)
        if len(words) < 2:
            return whole_t, whole_n
        parts = [self._single(t, strings) for t in words]
        lowest = parts[0][0]
        for p in parts[1:]:
            lowest = np.minimum(lowest, p[0])
        weights = [float(len(t)) for t in words]
        out = []
        for v, whole in ((0, whole_t), (1, whole_n)):
            total = weights[0] * parts[0][v]
            for w, p in zip(weights[1:], parts[1:], strict=True):
                total = total + w * p[v]  # in order, as `sum` adds
            mean = total / sum(weights)
            joined = np.maximum(whole, np.minimum(NON_EXACT_CAP, mean))
            out.append(np.where((whole_t == 0.0) | (lowest == 0.0), whole, joined))
        return out[0], out[1]

    def _single(self, typed: str, strings: list[str]) -> _Pair:
        """The score of one string `typed` against each string."""
        n = len(strings)
        with_tail = np.zeros(n)
        without = np.zeros(n)
        if not typed or not n:
            return with_tail, without
        low = typed.lower()
        lowered = [s.lower() for s in strings]
        # Smart case: a typed capital asks for that case, so a name equal
        # but for case is no exact match (`Float` is not `FLOAT`), and it
        # is aligned as any other name (`CASE_MISMATCH`).
        cased = self.smart_case and self.cased_exact and typed != low
        chosen = [i for i, s in enumerate(lowered) if s != low or (cased and strings[i] != typed)]
        if chosen:
            found = align(typed, [strings[i] for i in chosen], self.smart_case)
            spread = NON_EXACT_CAP - NON_EXACT_FLOOR
            share_t = np.minimum(1.0, np.maximum(0.0, found.raw) / found.best)
            share_n = np.minimum(1.0, np.maximum(0.0, found.raw + found.tail) / found.best)
            at = np.asarray(chosen, dtype=np.intp)
            with_tail[at] = np.where(found.ok, NON_EXACT_FLOOR + spread * share_t, 0.0)
            without[at] = np.where(found.ok, NON_EXACT_FLOOR + spread * share_n, 0.0)
        for i, s in enumerate(strings):
            if s == typed:
                with_tail[i] = without[i] = EXACT_SCORE
            elif lowered[i] == low and not cased:
                with_tail[i] = without[i] = EXACT_IGNORING_CASE_SCORE
        return with_tail, without
