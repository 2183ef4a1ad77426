"""Identifier segmentation and the name score.

Design note
-----------
A person typing in a symbol picker types the *beginnings* of the words of the
name they want: `reg` for `register_blueprint`, `rb` for its initials, `hs` for
`HTTPServer`. The score rewards a query for landing on those beginnings and
for running on from them, and charges it for scattering.

- The query must occur in the name as an ordered, case-insensitive
  subsequence. Otherwise the score is exactly 0: there is no threshold to
  guess, and "no evidence" is never confused with "weak evidence".
- Among the many ways a subsequence can be aligned, the best one is scored
  (dynamic programming over the positions each query character can take), not
  the first greedy one: greedy matching puts the `s` of `hs` on the `S` of
  `HTTPS` in `HTTPSServer` only by luck.
- Each matched character earns points by where it lands: the start of the
  name (`SCORE_START`), the start of a sub-word (`SCORE_WORD`: after `_ - . /`,
  at a lower-to-upper change, and at the capital that ends an acronym run, the
  `S` of `HTTPServer`), continuing a run (`SCORE_RUN`), and least when reached
  by skipping into the middle of a word (`SCORE_SKIP`). Characters skipped
  between two matched characters cost a gap (`GAP_OPEN` plus `GAP_EXTEND` per
  further character); characters skipped before the first match are free
  (people start anywhere); every character the name has beyond the query
  costs `TAIL`, so a shorter name wins when all else is equal.
- An exact name (case-insensitive) scores above any name that merely contains
  the query: exact names score 1.0 (0.98 when only the case differs), every
  other match is mapped into (0, `NON_EXACT_CAP`].

The alignment is computed over the positions where each query character
occurs, so its cost is the number of (previous, next) position pairs: a few
dozen for typical identifiers, far below the full query x name table.

Deliberately not handled here: typo tolerance (a name that does not contain
the query scores 0), and anything about paths or closeness (see `proximity`
and `rank`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from nearsym.core.model import qualified

# Points per matched character, by where it lands. Only their order and
# rough ratios matter; the values follow fzf's scheme (a boundary is worth more
# than a run, a run more than a scattered hit) and are guesses awaiting
# measurement on the golden set (issue 7).
SCORE_START = 4.0
"""First character of the name: the strongest evidence of intent."""
SCORE_WORD = 3.0
"""Start of a sub-word: camel humps, snake initials, acronym ends."""
SCORE_RUN = 2.0
"""Continues the previous matched character (a prefix of a word)."""
SCORE_SKIP = 1.0
"""Reached by skipping into the middle of a word: weak evidence."""

CASE_MISMATCH = 0.5
"""Smart case, as in fzf and Vim: when the query has a capital, each matched
character whose case differs from what was typed loses half a run's worth,
so `FLO` prefers `FLOAT` to `FloatRange` and `Con` prefers `Config` to
`context_processor`. An all-lower-case query matches any case for free.
Measured on the dev set (see README)."""

GAP_OPEN = 1.0
"""Cost of skipping over characters between two matched ones: one
scattered hit should not be worth a boundary hit (SCORE_WORD - GAP_OPEN
> SCORE_SKIP)."""
GAP_EXTEND = 0.1
"""Each further skipped character: long gaps cost a little more than short."""
TAIL = 0.03
"""Per character of name beyond the query's length. Small: it only separates
names whose alignments are equally good (`reg` -> `register` before
`register_blueprint`)."""
TAIL_CAP = 1.0
"""The tail never costs more than one scattered hit, so a long name whose
words the query hits cleanly still beats a short scattered one."""

EXACT_SCORE = 1.0
EXACT_IGNORING_CASE_SCORE = 0.98
NON_EXACT_CAP = 0.95
"""Every non-exact match scores at most this: the exact name always wins."""
NON_EXACT_FLOOR = 0.01
"""A match never scores 0, which is reserved for 'not a subsequence'."""

QUALIFIED_DISCOUNT = 0.5
"""A method found by its owner's name (`SyncQueue` -> `SyncQueue.push`) gets
half the evidence, so the type itself stays above its own methods."""

CACHE_NAMES = 8192
"""Names whose scoring work is memoised: a few queries' pools. (Larger
caches cost memory on millions of names and slow the garbage collector.)"""

_SEPARATORS = frozenset("_-./:$ #\\")
_QUALIFIER = re.compile(r"::|\.|#|->")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def word_starts(name: str) -> list[bool]:
    return list(_word_starts(name))


_SEP_CLASS = r"_\-./:$ #\\"
_ASCII_STARTS = re.compile(
    rf"(?:^|(?<=[{_SEP_CLASS}]))[^{_SEP_CLASS}]"  # a name's or a separator's first
    r"|(?<=[a-z0-9])[A-Z]"  # camel hump
    r"|(?<=[A-Z])[A-Z](?=[a-z])"  # the S of HTTPServer
)


@lru_cache(maxsize=CACHE_NAMES)
def _word_starts(name: str) -> tuple[bool, ...]:
    if name.isascii():
        starts = [False] * len(name)
        for m in _ASCII_STARTS.finditer(name):
            starts[m.start()] = True
        return tuple(starts)
    return _word_starts_slow(name)


def _word_starts_slow(name: str) -> tuple[bool, ...]:
    """Which characters of `name` begin a sub-word.

    >>> [c for c, s in zip("HTTPServer", word_starts("HTTPServer")) if s]
    ['H', 'S']
    >>> [c for c, s in zip("register_blueprint", word_starts("register_blueprint")) if s]
    ['r', 'b']
    """
    n = len(name)
    starts = [False] * n
    for i, ch in enumerate(name):
        if ch in _SEPARATORS:
            continue
        if i == 0:
            starts[i] = True
            continue
        prev = name[i - 1]
        if prev in _SEPARATORS or (ch.isupper() and (prev.islower() or prev.isdigit())):
            starts[i] = True
        elif ch.isupper() and prev.isupper() and i + 1 < n and name[i + 1].islower():
            starts[i] = True  # the S of HTTPServer
    return tuple(starts)


def split_words(text: str) -> list[str]:
    """Split an identifier or query into words: `getUserId` -> get, User, Id;
    `search document` -> search, document; `HTTPServer` -> HTTP, Server."""
    return list(_split_words(text))


@lru_cache(maxsize=4096)
def _split_words(text: str) -> tuple[str, ...]:
    words: list[str] = []
    for chunk in re.split(r"[\s_\-./:#]+", text):
        if chunk:
            words.extend(_CAMEL.findall(chunk) or [chunk])
    return tuple(words)


def is_subsequence(query: str, name: str) -> bool:
    """Whether `query` occurs in `name` in order (both already lower-cased)."""
    it = iter(name)
    return all(ch in it for ch in query)


@dataclass(frozen=True, slots=True)
class Alignment:
    """The best alignment of a query in a name, for `explain()`."""

    positions: tuple[int, ...]
    raw: float
    best: float
    tail: float


@lru_cache(maxsize=CACHE_NAMES)
def _align(typed: str, name: str, smart_case: bool = True) -> Alignment | None:
    """Best alignment of `typed` in `name`, both in their original case.

    Returns None when `query` is not a subsequence. Raw score is the sum of
    per-character points minus gaps and tail; `best` is the most that query
    length could earn (all hits on word starts after a name start).
    """
    query = typed.lower()
    lower = name.lower()
    m = len(query)
    if not m:
        return None
    # Where query[i] may land on an alignment that completes: no earlier
    # than the greedy leftmost match, no later than the greedy rightmost.
    # (Positions outside never lie on a complete alignment, so skipping
    # them changes no score.)
    earliest: list[int] = []
    at = -1
    for ch in query:
        at = lower.find(ch, at + 1)
        if at < 0:
            return None  # not a subsequence
        earliest.append(at)
    latest = [0] * m
    at = len(lower)
    for i in range(m - 1, -1, -1):
        at = lower.rfind(query[i], 0, at)
        latest[i] = at
    smart = smart_case and typed != query
    bases = _landing_bases(name)

    def landing(j: int, i: int) -> float:
        if smart and name[j] != typed[i]:
            return bases[j] - CASE_MISMATCH
        return bases[j]

    # One level per query character: the ends j (ascending) of the best
    # alignments of query[:i+1], their scores, and the index of the end they
    # extend on the level before.
    ends: list[int] = []
    ch = query[0]
    j = lower.find(ch, earliest[0], latest[0] + 1)
    while j >= 0:
        ends.append(j)
        j = lower.find(ch, j + 1, latest[0] + 1)
    scores = [landing(j, 0) for j in ends]
    levels: list[tuple[list[int], list[int]]] = [(ends, [])]
    for i in range(1, m):
        ch = query[i]
        nxt_ends: list[int] = []
        nxt_scores: list[float] = []
        backs: list[int] = []
        # The gap cost is linear in the distance, so the best earlier end
        # k < j - 1 is the one maximising score + GAP_EXTEND * k: a running
        # maximum over the ascending ends, linear instead of quadratic.
        at, lead, lead_at = 0, -1e18, -1
        count = len(ends)
        stop = latest[i] + 1
        j = lower.find(ch, earliest[i], stop)
        while j >= 0:
            while at < count and ends[at] < j - 1:
                value = scores[at] + GAP_EXTEND * ends[at]
                if value > lead:
                    lead, lead_at = value, at
                at += 1
            top = -1e9
            back = -1
            here = landing(j, i)
            if lead_at >= 0:
                k = ends[lead_at]
                top = scores[lead_at] + here - GAP_OPEN - GAP_EXTEND * (j - k - 2)
                back = lead_at
            if at < count and ends[at] == j - 1:
                case = CASE_MISMATCH if smart and name[j] != typed[i] else 0.0
                cand = scores[at] + max(SCORE_RUN - case, here)
                if cand > top:
                    top, back = cand, at
            if back >= 0:
                nxt_ends.append(j)
                nxt_scores.append(top)
                backs.append(back)
            j = lower.find(ch, j + 1, stop)
        if not nxt_ends:
            return None
        ends, scores = nxt_ends, nxt_scores
        levels.append((ends, backs))
    # The best end; among equal scores the leftmost.
    top_at = 0
    for n in range(1, len(ends)):
        if scores[n] > scores[top_at]:
            top_at = n
    raw = scores[top_at]
    positions = [ends[top_at]]
    index = top_at
    for level in range(m - 1, 0, -1):
        index = levels[level][1][index]
        positions.append(levels[level - 1][0][index])
    positions.reverse()
    tail = min(TAIL_CAP, TAIL * max(0, len(name) - m))
    return Alignment(tuple(positions), raw - tail, ceiling(m), tail)


def ceiling(m: int) -> float:
    """The most a query of `m` characters can earn: all hits on word starts
    after a name start."""
    return SCORE_START + max(SCORE_WORD, SCORE_RUN) * (m - 1)


@lru_cache(maxsize=CACHE_NAMES)
def _landing_bases(name: str) -> tuple[float, ...]:
    """Points for landing a query character on each position of `name`."""
    starts = _word_starts(name)
    bases = [SCORE_SKIP] * len(name)
    for j, start in enumerate(starts):
        if start:
            bases[j] = SCORE_WORD
    if bases:
        bases[0] = SCORE_START
    return tuple(bases)


def name_evidence(query: str) -> Callable[[str, str], bool]:
    """Whether `explain_name(query, name, container).score > 0`, without
    scoring, as `(name, container) -> bool` with the query's work done once:
    the query (whitespace removed) must be an ordered subsequence of the
    name, or of `container.name` (the owner reading, or a qualified
    query)."""
    if is_qualified(query):
        wanted = normalise_qualified(query).strip(".").lower()

        def in_order(name: str, container: str) -> bool:
            return bool(wanted) and is_subsequence(wanted, qualified(container, name).lower())

        return in_order
    joined = "".join(query.split()).lower()
    if not joined:
        return lambda name, container: False

    # A name answers alone, whatever its owner: decided once per name (an
    # exact pool holds thousands of rows of one name).
    by_name: dict[str, bool] = {}

    def plain(name: str, container: str) -> bool:
        alone = by_name.get(name)
        if alone is None:
            alone = by_name[name] = is_subsequence(joined, name.lower())
        if alone:
            return True
        return bool(container) and is_subsequence(joined, f"{container}.{name}".lower())

    return plain


def _normalise(alignment: Alignment, tail: bool = True) -> float:
    raw = alignment.raw if tail else alignment.raw + alignment.tail
    share = max(0.0, raw) / alignment.best
    return NON_EXACT_FLOOR + (NON_EXACT_CAP - NON_EXACT_FLOOR) * min(1.0, share)


@lru_cache(maxsize=CACHE_NAMES)
def _score_single(query: str, name: str, tail: bool = True, smart_case: bool = True) -> float:
    """Score one query string (no whitespace) against one name."""
    if not query:
        return 0.0
    if query == name:
        return EXACT_SCORE
    if query.lower() == name.lower():
        return EXACT_IGNORING_CASE_SCORE
    alignment = _align(query, name, smart_case)
    return 0.0 if alignment is None else _normalise(alignment, tail)


def score_name(query: str, name: str, tail: bool = True, smart_case: bool = True) -> float:
    """How well `query` matches the identifier `name`, in [0, 1].

    0 when the query is not an ordered subsequence of the name in any reading;
    1.0 for the exact name. Samples (see the constants for why):
    `reg` -> `register` 0.66, `reg` -> `register_blueprint` 0.63,
    `rb` -> `register_blueprint` 0.66, `hs` -> `HTTPServer` 0.76,
    `hs` -> `hashes` 0.53, `xyz` -> `register` 0.0.

    A query of several words (`search document`, `getUserId`) must occur
    whole (whitespace removed) as a subsequence; it is then scored whole and
    word by word (every word must match; the mean of
    the words' scores, where one-character words must match but count only
    when every word is one character), and the better reading wins.
    """
    joined = "".join(query.split())
    whole = _score_single(joined, name, tail, smart_case)
    tokens = split_words(query)
    if whole == 0.0 or len(tokens) < 2:
        return whole
    scores = [_score_single(t, name, tail, smart_case) for t in tokens]
    if min(scores) == 0.0:
        return whole
    counted = [sc for t, sc in zip(tokens, scores, strict=True) if len(t) >= 2] or scores
    return max(whole, min(NON_EXACT_CAP, sum(counted) / len(counted)))


def is_qualified(query: str) -> bool:
    """Whether the query names an owner: `Class.method`, `pkg::name`, `A#b`."""
    return _QUALIFIER.search(query.strip()) is not None


def normalise_qualified(query: str) -> str:
    """`A::b`, `A#b`, `A->b` all mean `A.b`."""
    return _QUALIFIER.sub(".", "".join(query.split()))


@dataclass(slots=True)
class NameEvidence:
    """The components of a symbol's name score, for `explain()`."""

    score: float
    reading: str
    matched: str
    positions: tuple[int, ...] = field(default_factory=tuple)


def score_symbol_name(query: str, name: str, container: str) -> float:
    """Name evidence for a definition with an owner, in [0, 1].

    - A qualified query (`App.register`) is scored against the qualified name
      `container.name`; it is exact when it equals a dotted suffix of it
      (`Inner.m` is exact for `Outer.Inner.m`).
    - Otherwise the plain name is scored, and the qualified name too at
      `QUALIFIED_DISCOUNT` (`SyncQueue` finds `SyncQueue.push` at half weight).
    """
    return explain_name(query, name, container).score


def explain_name(
    query: str,
    name: str,
    container: str,
    tail: bool = True,
    smart_case: bool = True,
    positions: bool = False,
) -> NameEvidence:
    """The name score with the reading that produced it. `tail=False` leaves
    out the length penalty: the shape of the match alone. `positions=True`
    also finds which characters matched (for `explain()`; the ranking does
    not need them)."""

    def where(q: str, n: str) -> tuple[int, ...]:
        return _positions(q, n) if positions else ()

    if is_qualified(query):
        wanted = normalise_qualified(query).strip(".")
        full = qualified(container, name)
        low_wanted, low_full = wanted.lower(), full.lower()
        if low_full == low_wanted or low_full.endswith("." + low_wanted):
            exact = full.endswith(wanted)
            score = EXACT_SCORE if exact else EXACT_IGNORING_CASE_SCORE
            return NameEvidence(score, "qualified, exact", full)
        score = _score_single(wanted, full, tail, smart_case)
        return NameEvidence(score, "qualified", full, where(wanted, full))
    plain = score_name(query, name, tail, smart_case)
    evidence = NameEvidence(plain, "name", name, where(query, name))
    if container and plain < QUALIFIED_DISCOUNT * EXACT_SCORE:
        # (At or above the discount's ceiling the owner reading cannot win.)
        full = f"{container}.{name}"
        owner = QUALIFIED_DISCOUNT * score_name(query, full, tail, smart_case)
        if owner > plain:
            evidence = NameEvidence(owner, "owner (discounted)", full, where(query, full))
    return evidence


def _positions(query: str, name: str) -> tuple[int, ...]:
    alignment = _align("".join(query.split()), name)
    return alignment.positions if alignment else ()


def highlight(name: str, positions: tuple[int, ...]) -> str:
    """`register_blueprint` with positions (0, 9) -> `[r]egister_[b]lueprint`."""
    marks = set(positions)
    return "".join(f"[{c}]" if i in marks else c for i, c in enumerate(name))


def clear_caches() -> None:
    """Forget memoised scoring work (benchmarks measure each pass cold)."""
    for cached in (_align, _score_single, _word_starts, _landing_bases, _split_words):
        cached.cache_clear()


class QueryScorer:
    """`explain_name(...).score` with and without the tail penalty, for one
    query and many names: the query is read once, each alignment serves
    both readings, and no evidence objects are built (the rerank's hot
    path; `explain_name` stays the reference it must equal)."""

    def __init__(self, query: str, smart_case: bool = True) -> None:
        self.smart_case = smart_case
        self.qualified = is_qualified(query)
        self.wanted = normalise_qualified(query).strip(".") if self.qualified else ""
        self.low_wanted = self.wanted.lower()
        self.joined = "".join(query.split())
        self.tokens = split_words(query)
        self.counted = [len(t) >= 2 for t in self.tokens]
        self._both: dict[tuple[str, str], tuple[float, float]] = {}

    def prime(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Score many (name, container) pairs at once (`both` then looks
        them up): alignments with `batchalign`, the readings with numpy in
        the same arithmetic as `both`, so the scores are equal bit for bit."""
        distinct = list(dict.fromkeys(pairs))
        if len(distinct) < 8:
            return
        if self.qualified:
            full = [qualified(c, n) for n, c in distinct]
            with_tail, without = self._single_many(self.wanted, full)
            for i, pair in enumerate(distinct):
                lowered = full[i].lower()
                wanted = self.low_wanted
                if not (lowered == wanted or lowered.endswith("." + wanted)):
                    self._both[pair] = (float(with_tail[i]), float(without[i]))
            return
        names = list(dict.fromkeys(n for n, _ in distinct))
        by_name = self._name_many(names)
        where = {n: i for i, n in enumerate(names)}
        index = [where[n] for n, _ in distinct]
        plain = (by_name[0][index], by_name[1][index])
        low = [
            i
            for i, (n, c) in enumerate(distinct)
            if c and min(plain[0][i], plain[1][i]) < QUALIFIED_DISCOUNT * EXACT_SCORE
        ]
        owner = self._name_many([f"{distinct[i][1]}.{distinct[i][0]}" for i in low])
        out = [plain[0].tolist(), plain[1].tolist()]
        for v in (0, 1):
            for k, i in enumerate(low):
                if out[v][i] < QUALIFIED_DISCOUNT * EXACT_SCORE:
                    discounted = QUALIFIED_DISCOUNT * float(owner[v][k])
                    if discounted > out[v][i]:
                        out[v][i] = discounted
        for i, pair in enumerate(distinct):
            self._both[pair] = (out[0][i], out[1][i])

    def _name_many(self, strings: list[str]) -> tuple[Any, Any]:
        """`_name` of each string, as two arrays (with and without the tail)."""
        import numpy as np

        whole_t, whole_n = self._single_many(self.joined, strings)
        if len(self.tokens) < 2:
            return whole_t, whole_n
        parts = [self._single_many(t, strings) for t in self.tokens]
        lowest = parts[0][0]
        for p in parts[1:]:
            lowest = np.minimum(lowest, p[0])
        counted = [p for p, c in zip(parts, self.counted, strict=True) if c] or parts
        out = []
        for v, whole in ((0, whole_t), (1, whole_n)):
            total = counted[0][v]
            for p in counted[1:]:
                total = total + p[v]  # in order, as `sum` adds
            mean = total / len(counted)
            joined = np.maximum(whole, np.minimum(NON_EXACT_CAP, mean))
            out.append(np.where((whole_t == 0.0) | (lowest == 0.0), whole, joined))
        return out[0], out[1]

    def _single_many(self, q: str, strings: list[str]) -> tuple[Any, Any]:
        """`_single(q, s)` of each string, as two arrays."""
        import numpy as np

        from nearsym.core.batchalign import align_arrays, takes

        n = len(strings)
        scored_t = np.zeros(n)
        scored_n = np.zeros(n)
        if not q:
            return scored_t, scored_n
        low = q.lower()
        chosen = [i for i, s in enumerate(strings) if takes(s) and s.lower() != low]
        found = align_arrays(q, [strings[i] for i in chosen], self.smart_case)
        if found is None:
            chosen = []
        else:
            raw, tail, ok = found
            best = ceiling(len(q))
            spread = NON_EXACT_CAP - NON_EXACT_FLOOR
            with_tail = NON_EXACT_FLOOR + spread * np.minimum(1.0, np.maximum(0.0, raw) / best)
            untailed = raw + tail
            without = NON_EXACT_FLOOR + spread * np.minimum(1.0, np.maximum(0.0, untailed) / best)
            at = np.asarray(chosen, dtype=np.intp)
            scored_t[at] = np.where(ok, with_tail, 0.0)
            scored_n[at] = np.where(ok, without, 0.0)
        done = set(chosen)
        for i, s in enumerate(strings):
            if s == q:
                scored_t[i] = scored_n[i] = EXACT_SCORE
            elif s.lower() == low:
                scored_t[i] = scored_n[i] = EXACT_IGNORING_CASE_SCORE
            elif i not in done:
                scored_t[i], scored_n[i] = self._single(q, s)
        return scored_t, scored_n

    def _single(self, q: str, name: str) -> tuple[float, float]:
        if not q:
            return (0.0, 0.0)
        if q == name:
            return (EXACT_SCORE, EXACT_SCORE)
        if q.lower() == name.lower():
            return (EXACT_IGNORING_CASE_SCORE, EXACT_IGNORING_CASE_SCORE)
        alignment = _align(q, name, self.smart_case)
        if alignment is None:
            return (0.0, 0.0)
        return (_normalise(alignment, True), _normalise(alignment, False))

    def _name(self, name: str) -> tuple[float, float]:
        whole = self._single(self.joined, name)
        if whole[0] == 0.0 or len(self.tokens) < 2:
            return whole
        parts = [self._single(t, name) for t in self.tokens]
        if min(p[0] for p in parts) == 0.0:
            return whole
        out = []
        for v in (0, 1):
            counted = [p[v] for p, c in zip(parts, self.counted, strict=True) if c] or [
                p[v] for p in parts
            ]
            out.append(max(whole[v], min(NON_EXACT_CAP, sum(counted) / len(counted))))
        return (out[0], out[1])

    def both(self, name: str, container: str) -> tuple[float, float]:
        """(score, score without the tail penalty) of a definition."""
        primed = self._both.get((name, container))
        if primed is not None:
            return primed
        if self.qualified:
            full = qualified(container, name)
            low = full.lower()
            if low == self.low_wanted or low.endswith("." + self.low_wanted):
                score = EXACT_SCORE if full.endswith(self.wanted) else EXACT_IGNORING_CASE_SCORE
                return (score, score)
            return self._single(self.wanted, full)
        plain = self._name(name)
        if not container or min(plain) >= QUALIFIED_DISCOUNT * EXACT_SCORE:
            return plain
        owner = self._name(f"{container}.{name}")
        out = list(plain)
        for v in (0, 1):
            if plain[v] < QUALIFIED_DISCOUNT * EXACT_SCORE:
                discounted = QUALIFIED_DISCOUNT * owner[v]
                if discounted > plain[v]:
                    out[v] = discounted
        return (out[0], out[1])
