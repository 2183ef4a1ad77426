"""Small builders shared by the unit tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from nearsym.core.filedefs import FileDefs
from nearsym.core.model import Kind, Span, Symbol
from nearsym.core.query import Query
from nearsym.core.rank import RankContext, rerank_groups
from nearsym.extract.languages import LanguageSpec

ROOT = "/ws"


def sym(
    name: str,
    path: str = "pkg/mod.py",
    kind: Kind = Kind.FUNCTION,
    container: str = "",
    line: int = 0,
    root: str = ROOT,
    language: str = "python",
) -> Symbol:
    return Symbol(name, kind, container, root, path, Span(line, 0, line, len(name)), language)


def rerank(
    query: str, nodes: Sequence[Symbol], limit: int, context: RankContext | None = None
) -> list[Symbol]:
    """The seed's Rerank: one retrieval-ordered pool (index == retrieval
    rank) ordered by structural evidence and cut to `limit`; an empty query
    keeps the pool's order. The product reranks through `rerank_groups`,
    of which this is the one-group case."""
    return rerank_groups(Query.parse(query), [nodes], limit, context)


def full(spec: LanguageSpec) -> LanguageSpec:
    """The same language parsed whole and walked whole (no skim)."""
    return dataclasses.replace(spec, skim=None)


def rows(defs: FileDefs) -> list[tuple[str, str, int, tuple[int, ...]]]:
    """Each definition as (name, container, kind byte, span)."""
    spans = list(defs.spans)
    return [
        (name, container, kind, tuple(spans[4 * i : 4 * i + 4]))
        for i, (name, container, kind) in enumerate(
            zip(defs.names, defs.containers, defs.kinds, strict=True)
        )
    ]
