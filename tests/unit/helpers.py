"""Small builders shared by the unit tests."""

from __future__ import annotations

from collections.abc import Sequence

from nearsym.core.model import Kind, Span, Symbol
from nearsym.core.query import Query
from nearsym.core.rank import RankContext, rerank_groups

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
