"""Retrieval for the query modifiers.

Design note
-----------
Retrieval proper (`retrieval`) finds names; this module narrows what it
finds: the modifiers (`'exact`, `^prefix`, `suffix$`, `#types`) become a row
filter that the tiers apply as they fill, so a filtered pool is still as
wide as an unfiltered one, filled from the tiers further down
(`admitting`): `Client$` finds the names ending in `Client` even when
thousands of names start with it.
"""

from __future__ import annotations

from collections.abc import Callable

from nearsym.core.model import Symbol
from nearsym.core.query import Query

RowFilter = Callable[[Symbol], bool]


def admitting(query: Query, keep: RowFilter | None) -> RowFilter | None:
    """`keep`, narrowed by the query's modifiers (unchanged without any)."""
    if not query.filtered:
        return keep
    accepts = query.accepts
    if keep is None:
        return lambda s: accepts(s.name, s.kind)
    inner = keep
    return lambda s: accepts(s.name, s.kind) and inner(s)
