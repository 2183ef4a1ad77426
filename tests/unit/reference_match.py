"""The name score written the slow, obvious way: one name at a time, in
plain Python. The product (`nearsym.core.align`, `nearsym.core.match`)
aligns a whole pool at once in numpy; the properties in `test_match.py`
hold it to these, bit for bit.

- `word_starts`: each character's role read from its neighbours.
- `align`: the alignment programme over the positions each query character
  can take (pruned to those on a complete alignment), with its positions.
- `quadratic_align`: the same programme as first written, every
  predecessor tried (no running maximum): the check on `align` itself.
- `score_name` / `explain_name`: the readings of `match`'s design note.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nearsym.core import align as a
from nearsym.core import match as m
from nearsym.core.model import qualified
from nearsym.core.query import Query
from nearsym.core.words import SEPARATORS, is_subsequence, split_words


def word_starts(name: str) -> tuple[bool, ...]:
    """Which characters of `name` begin a word."""
    n = len(name)
    starts = [False] * n
    for i, ch in enumerate(name):
        if ch in SEPARATORS:
            continue
        if i == 0:
            starts[i] = True
            continue
        prev = name[i - 1]
        if prev in SEPARATORS or (ch.isupper() and (prev.islower() or prev.isdigit())):
            starts[i] = True
        elif ch.isupper() and prev.isupper() and i + 1 < n and name[i + 1].islower():
            starts[i] = True  # the S of HTTPServer
    return tuple(starts)


def whole(points: float) -> int:
    """`points` in the programme's units (`align.UNIT`): whole numbers, so
    sums are exact."""
    return round(points * a.UNIT)


START, WORD, RUN, SKIP = (
    whole(p) for p in (a.SCORE_START, a.SCORE_WORD, a.SCORE_RUN, a.SCORE_SKIP)
)
CASE, OPEN, EXTEND = (whole(p) for p in (a.CASE_MISMATCH, a.GAP_OPEN, a.GAP_EXTEND))
TO_WORD, CARRY = whole(a.GAP_TO_WORD), whole(a.RUN_CARRY)


def landing_bases(name: str) -> list[int]:
    bases = [WORD if s else SKIP for s in word_starts(name)]
    if bases:
        bases[0] = START
    return bases


@dataclass(frozen=True, slots=True)
class Alignment:
    positions: tuple[int, ...]
    raw: float
    """Less the tail."""
    best: float
    tail: float


def align(typed: str, name: str, smart_case: bool = True) -> Alignment | None:
    """Best alignment of `typed` in `name`; None when not a subsequence."""
    query = a.fold(typed)
    lower = a.fold(name)
    m_ = len(query)
    if not m_:
        return None
    # Where query[i] may land on an alignment that completes: no earlier
    # than the greedy leftmost match, no later than the greedy rightmost.
    earliest: list[int] = []
    at = -1
    for ch in query:
        at = lower.find(ch, at + 1)
        if at < 0:
            return None
        earliest.append(at)
    latest = [0] * m_
    at = len(lower)
    for i in range(m_ - 1, -1, -1):
        at = lower.rfind(query[i], 0, at)
        latest[i] = at
    smart = smart_case and typed != query
    bases = landing_bases(name)

    def landing(j: int, i: int) -> int:
        if smart and name[j] != typed[i]:
            return bases[j] - CASE
        return bases[j]

    def fresh(j: int) -> int:
        return max(RUN, min(bases[j], CARRY))

    ends = [j for j in range(earliest[0], latest[0] + 1) if lower[j] == query[0]]
    scores = [landing(j, 0) for j in ends]
    carries = [fresh(j) for j in ends]
    levels: list[tuple[list[int], list[int]]] = [(ends, [])]
    starts = word_starts(name)
    for i in range(1, m_):
        nxt_ends: list[int] = []
        nxt_scores: list[float] = []
        nxt_carries: list[float] = []
        backs: list[int] = []
        at, lead, lead_at = 0, -1e18, -1
        flat, flat_at = -1e18, -1
        for j in range(earliest[i], latest[i] + 1):
            if lower[j] != query[i]:
                continue
            while at < len(ends) and ends[at] < j - 1:
                value = scores[at] + EXTEND * ends[at]
                if value > lead:
                    lead, lead_at = value, at
                if scores[at] > flat:
                    flat, flat_at = scores[at], at
                at += 1
            top, back = -1e9, -1
            here = landing(j, i)
            if lead_at >= 0:
                k = ends[lead_at]
                top = scores[lead_at] + here - OPEN - EXTEND * (j - k - 2)
                back = lead_at
            if flat_at >= 0 and starts[j]:
                cand = scores[flat_at] + here - TO_WORD
                if cand > top:
                    top, back = cand, flat_at
            carry = fresh(j)
            if at < len(ends) and ends[at] == j - 1:
                case = CASE if smart and name[j] != typed[i] else 0
                cand = scores[at] + max(carries[at] - case, here)
                if cand > top:
                    top, back, carry = cand, at, carries[at]
            if back >= 0:
                nxt_ends.append(j)
                nxt_scores.append(top)
                nxt_carries.append(carry)
                backs.append(back)
        if not nxt_ends:
            return None
        ends, scores, carries = nxt_ends, nxt_scores, nxt_carries
        levels.append((ends, backs))
    top_at = max(range(len(ends)), key=lambda n: (scores[n], -n))
    positions = [ends[top_at]]
    index = top_at
    for level in range(m_ - 1, 0, -1):
        index = levels[level][1][index]
        positions.append(levels[level - 1][0][index])
    positions.reverse()
    tail = min(a.TAIL_CAP, a.TAIL * max(0, len(name) - m_))
    return Alignment(tuple(positions), scores[top_at] / a.UNIT - tail, a.ceiling(m_), tail)


def quadratic_align(
    typed: str, name: str, smart_case: bool = True
) -> tuple[tuple[int, ...], float, float, float] | None:
    """The alignment as first written: every predecessor tried. Equal to
    `align` in positions and (to rounding) in score."""
    query, lower = typed.lower(), name.lower()
    if not query or not is_subsequence(query, lower):
        return None
    smart_case = smart_case and typed != query
    starts = word_starts(name)
    occurs: dict[str, list[int]] = {}
    for j, ch in enumerate(lower):
        occurs.setdefault(ch, []).append(j)

    def landing(j: int, i: int) -> int:
        case = CASE if smart_case and name[j] != typed[i] else 0
        if j == 0:
            return START - case
        return (WORD if starts[j] else SKIP) - case

    def fresh(j: int) -> int:
        base = START if j == 0 else (WORD if starts[j] else SKIP)
        return max(RUN, min(base, CARRY))

    best = {j: (landing(j, 0), -1, fresh(j)) for j in occurs[query[0]]}
    trail = [best]
    for i in range(1, len(query)):
        nxt: dict[int, tuple[float, int, float]] = {}
        for j in occurs.get(query[i], ()):
            top, back, carry = -1e9, -1, fresh(j)
            for k, (score, _, carried) in best.items():
                if k >= j:
                    continue
                if k == j - 1:
                    case = CASE if smart_case and name[j] != typed[i] else 0
                    cand = score + max(carried - case, landing(j, i))
                    if cand > top:
                        top, back, carry = cand, k, carried
                    continue
                cost = TO_WORD if starts[j] else OPEN + EXTEND * (j - k - 2)
                cand = score + landing(j, i) - cost
                if cand > top:
                    top, back, carry = cand, k, fresh(j)
            if back >= 0:
                nxt[j] = (top, back, carry)
        if not nxt:
            return None
        best = nxt
        trail.append(best)
    end = max(best, key=lambda j: (best[j][0], -j))
    positions = [end]
    for level in range(len(trail) - 1, 0, -1):
        positions.append(trail[level][positions[-1]][1])
    positions.reverse()
    tail = min(a.TAIL_CAP, a.TAIL * max(0, len(name) - len(query)))
    return (tuple(positions), round(best[end][0] / a.UNIT - tail, 9), a.ceiling(len(query)), tail)


def _normalise(alignment: Alignment, tail: bool) -> float:
    raw = alignment.raw if tail else alignment.raw + alignment.tail
    share = max(0.0, raw) / alignment.best
    return m.NON_EXACT_FLOOR + (m.NON_EXACT_CAP - m.NON_EXACT_FLOOR) * min(1.0, share)


def score_single(query: str, name: str, tail: bool = True, smart_case: bool = True) -> float:
    """One string (no whitespace) against one name."""
    if not query:
        return 0.0
    if query == name:
        return m.EXACT_SCORE
    if query.lower() == name.lower() and not (smart_case and query != query.lower()):
        return m.EXACT_IGNORING_CASE_SCORE
    alignment = align(query, name, smart_case)
    return 0.0 if alignment is None else _normalise(alignment, tail)


def score_name(query: str, name: str, tail: bool = True, smart_case: bool = True) -> float:
    """The plain reading: whole, and word by word."""
    joined = "".join(query.split())
    whole = score_single(joined, name, tail, smart_case)
    tokens = split_words(query)
    if whole == 0.0 or len(tokens) < 2:
        return whole
    scores = [score_single(t, name, tail, smart_case) for t in tokens]
    if min(scores) == 0.0:
        return whole
    weights = [len(t) for t in tokens]
    mean = sum(w * sc for w, sc in zip(weights, scores, strict=True)) / sum(weights)
    return max(whole, min(m.NON_EXACT_CAP, mean))


@dataclass(slots=True)
class NameEvidence:
    score: float
    reading: str
    matched: str
    positions: tuple[int, ...] = field(default_factory=tuple)


def explain_name(
    query: str, name: str, container: str, tail: bool = True, smart_case: bool = True
) -> NameEvidence:
    """Every reading of a definition, the best one winning."""

    def where(q: str, n: str) -> tuple[int, ...]:
        found = align("".join(q.split()), n, smart_case)
        return found.positions if found else ()

    parsed = Query.parse(query)
    if parsed.qualified:
        wanted = parsed.target
        full = qualified(container, name)
        low_wanted, low_full = wanted.lower(), full.lower()
        if low_full == low_wanted or low_full.endswith("." + low_wanted):
            exact = full.endswith(wanted)
            score = m.EXACT_SCORE if exact else m.EXACT_IGNORING_CASE_SCORE
            return NameEvidence(score, "qualified, exact", full)
        score = score_single(wanted, full, tail, smart_case)
        return NameEvidence(score, "qualified", full, where(wanted, full))
    plain = score_name(query, name, tail, smart_case)
    evidence = NameEvidence(plain, "name", name, where(query, name))
    if container and plain < m.QUALIFIED_DISCOUNT * m.EXACT_SCORE:
        full = f"{container}.{name}"
        owner = m.QUALIFIED_DISCOUNT * score_name(query, full, tail, smart_case)
        if owner > plain:
            evidence = NameEvidence(owner, "owner (discounted)", full, where(query, full))
    return evidence
