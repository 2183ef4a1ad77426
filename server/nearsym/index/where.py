"""Retrieval for queries that name where, and for the query modifiers.

Design note
-----------
Retrieval proper (`retrieval`) finds names; this module widens and narrows
what it finds, the matching itself being `core.where`'s:

- the modifiers (`'exact`, `^prefix`, `suffix$`, `#types`) become a row
  filter that the tiers apply as they fill, so a filtered pool is still as
  wide as an unfiltered one, filled from the tiers further down
  (`admitting`): `Client$` finds the names ending in `Client` even when
  thousands of names start with it;
- a query with where-parts (`click.core.Command`) first gets the pool of
  its whole text (`Owner.member`'s, as before); when that is short of the
  width, the name part's pool follows, kept to the definitions all the
  where-parts locate, then to those some locate (`widen`). The whole
  text's pool comes first because every row of it outranks every located
  row (`core.where.WHERE_CAP`), so the order of the pool agrees with the
  order of the answer, and a pool the whole text fills costs nothing more.
"""

from __future__ import annotations

from collections.abc import Callable

from nearsym.core.model import Symbol
from nearsym.core.query import Query
from nearsym.core.where import located

RowFilter = Callable[[Symbol], bool]
Fill = Callable[[str, int, RowFilter | None], list[Symbol]]
"""`(lower-cased name text, width, row filter) -> pool`: retrieval's tiers."""


def admitting(query: Query, keep: RowFilter | None) -> RowFilter | None:
    """`keep`, narrowed by the query's modifiers (unchanged without any)."""
    if not query.filtered:
        return keep
    accepts = query.accepts
    if keep is None:
        return lambda s: accepts(s.name, s.kind)
    inner = keep
    return lambda s: accepts(s.name, s.kind) and inner(s)


def widen(query: Query, width: int, pool: list[Symbol], fill: Fill) -> list[Symbol]:
    """`pool` (the whole text's), with the located definitions after it
    while it is short of `width` (see the module note). Every row of `pool`
    stays (its exact matches may exceed the width)."""
    parts = [pool]
    where, name = query.where, query.name.lower()
    if where and name:
        wanted = len(where)

        def everywhere(s: Symbol) -> bool:
            return located(where, s.path, s.container) == wanted

        def somewhere(s: Symbol) -> bool:
            return 0 < located(where, s.path, s.container) < wanted

        for test in (everywhere, somewhere) if wanted > 1 else (everywhere,):
            if sum(len(p) for p in parts) >= width:
                break
            parts.append(fill(name, width, admitting(query, test)))
    return _joined(parts, max(width, len(pool)))


def _joined(parts: list[list[Symbol]], width: int) -> list[Symbol]:
    """The pools one after the other, each definition once, cut to `width`."""
    if len(parts) == 1:
        return parts[0]
    out: list[Symbol] = []
    taken: set[tuple[str, str, int, int, str]] = set()
    for part in parts:
        for s in part:
            key = (s.root, s.path, s.span.line, s.span.col, s.name)
            if key not in taken:
                taken.add(key)
                out.append(s)
    return out[:width]
