"""The names of the rank's sort keys, in the order they are compared.

The rerank (`rank._order`) builds each candidate's key as a plain tuple,
the cheapest thing to sort; `SortKey` names the same positions so that an
explanation (`nearsym.explain` over LSP, the CLI's `--explain`) is the key
the order was decided by, not a second computation of it. Each value is
what is compared, smaller first: scores are negated and yes/no signals are
written so that `False` sorts first (`not_member` is False for a member).

Invariant: `SortKey` has one field per position of `RawSortKey`, of the
same type (`tests/unit/test_rank.py` checks it); the rerank builds the raw
key and an explanation is `SortKey._make` of that very tuple.
"""

from __future__ import annotations

from typing import NamedTuple

RawSortKey = tuple[
    float,
    bool,
    bool,
    int,
    float,
    bool,
    bool,
    bool,
    int,
    bool,
    bool,
    int,
    float,
    float,
    str,
    str,
    str,
    int,
    int,
    int,
]
"""What the rerank sorts by (see `SortKey` for each position)."""


class SortKey(NamedTuple):
    """A non-empty query's sort key, named."""

    name_shape: float
    """Minus the shape of the name match, where the typed characters land
    (the name score without the length penalty when `tail_late`)."""
    dependency: bool
    """From a dependency's namespace: after the workspace's own definitions."""
    not_member: bool
    """Not a member of a class the open file defines or imports."""
    receiver: int
    """Minus the receiver grade: 2 when the open file reaches the member
    through a variable named as its class, 1 as its last words."""
    path_share: float
    """Minus the share of query words that are segments of the path."""
    in_tests: bool
    """In test code (outside the open file)."""
    local: bool
    """Local to a function."""
    not_imported: bool
    """Not in a file the open file imports."""
    kind_rank: int
    """0 for types and callables, 1 for variables, fields and constants."""
    not_exported: bool
    """Not re-exported by its package's index file."""
    not_mentioned_here: bool
    """Not a name the open file's text mentions."""
    mentions: int
    """Minus the mention bucket: log2 of the files that mention the name, + 1."""
    closeness: float
    """Minus the closeness to the open file."""
    name_score: float
    """Minus the name score, length penalty included."""
    root: str
    path: str
    qualified_name: str
    line: int
    """Minus the 0-based line when the later definition comes first."""
    column: int
    retrieval_rank: int
    """The row's rank in its own pool's retrieval order."""


class EmptyQueryKey(NamedTuple):
    """An empty query's sort key: its pools are interleaved by rank."""

    retrieval_rank: int
    root: str
    path: str
    line: int
    column: int


ExplainedKey = SortKey | EmptyQueryKey
"""A recorded key (`rank.rerank_groups(keys=...)`)."""


def key_items(key: ExplainedKey) -> list[dict[str, object]]:
    """`[{"key": name, "value": value}, ...]` in comparison order: JSON-able."""
    return [
        {"key": name, "value": _plain(value)} for name, value in zip(key._fields, key, strict=True)
    ]


def format_keys(key: ExplainedKey) -> str:
    """The keys as `explain()`-style lines, numbered in comparison order."""
    lines = ["  sort keys, compared in this order (smaller first):"]
    for i, (name, value) in enumerate(zip(key._fields, key, strict=True), 1):
        shown = f"{_plain(value):.3f}" if isinstance(value, float) else str(value)
        lines.append(f"  {i:>3} {name:<15} {shown}")
    return "\n".join(lines)


def _plain(value: object) -> object:
    """-0.0 (a negated 0 score) as 0.0: equal when compared, plainer to read."""
    return value + 0.0 if isinstance(value, float) else value
