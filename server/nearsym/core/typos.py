"""Typos: names one edit away from the query.

Design note
-----------
A query that is not an ordered subsequence of a name has no name evidence
(`match`), so a slip of the keyboard (`Sphnix`, `AsyncCleint`, `Flaks`)
finds nothing it meant. When the true matches are few, retrieval adds the
names within one edit of the query, case-insensitively: a transposition of
two neighbouring characters, a substitution, an insertion or a deletion
(Damerau's four slips, which account for most typing errors). They score
`TYPO_SCORE`, below every true match (whose floor is
`match.NON_EXACT_FLOOR`), so they come after all of them, and `explain()`
names their reading.

Only whole queries of `TYPO_MIN_LENGTH` characters or more: under that,
one edit reaches a large share of all short names.
"""

from __future__ import annotations

from collections.abc import Iterator

TYPO_SCORE = 0.005
"""A typo's name score: half the floor of a true match, above 0 (which
means no evidence at all)."""

TYPO_MIN_LENGTH = 4
"""Queries shorter than this get no typo fallback: one edit of a
three-letter query is most three-letter names."""

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"
"""What a substitution or an insertion may put in: the characters of nearly
every identifier, lower-cased (a query's own characters are added)."""


def one_edit(a: str, b: str) -> bool:
    """Whether `b` is `a` with one transposition of neighbours, substitution,
    insertion or deletion (not equal). Both already lower-cased."""
    if a == b:
        return False
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    i = 0
    while i < min(la, lb) and a[i] == b[i]:
        i += 1
    if la == lb:
        if a[i + 1 :] == b[i + 1 :]:
            return True  # substitution
        return i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]
    if la > lb:
        return a[i + 1 :] == b[i:]  # a deletion from a
    return a[i:] == b[i + 1 :]  # an insertion into a


def variants(query: str) -> Iterator[str]:
    """Every string one edit from `query` (lower-cased), each once, in a
    fixed order."""
    q = query.lower()
    seen = {q}
    letters = sorted(set(ALPHABET) | set(q))
    out: list[str] = []
    for i in range(len(q)):
        out.append(q[:i] + q[i + 1 :])
        if i + 1 < len(q):
            out.append(q[:i] + q[i + 1] + q[i] + q[i + 2 :])
        out.extend(q[:i] + c + q[i + 1 :] for c in letters)
    for i in range(len(q) + 1):
        out.extend(q[:i] + c + q[i:] for c in letters)
    for v in out:
        if v and v not in seen:
            seen.add(v)
            yield v
