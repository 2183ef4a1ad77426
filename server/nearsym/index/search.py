"""The one query entry point: pool, rerank, cut.

The server, the CLI and the evaluation all answer through `search`, so the
order a person sees in an editor is the order that is measured.

A page is cut from a pool `pool_width(offset, limit)` rows wide per
namespace, ordered a block (`fetch_limit(limit)` rows) at a time: block k of
the answer is block k of every namespace's pool, merged by `rerank_groups`.
Widening the pool for a later page therefore only appends blocks, and a page
already delivered is never reshuffled.

The pool is sized for at least `STABLE_LIMIT` rows whatever the result
limit, so the best answers never depend on it: the first k answers at limit
k are the first k at any larger limit (a limit of 1 would otherwise rank a
pool of 50 rows, and its first answer need not be the first of 500).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nearsym.core.model import Symbol
from nearsym.core.query import Query
from nearsym.core.rank import (
    FETCH_FACTOR,
    FETCH_MAX,
    MentionLookup,
    RankContext,
    RankPolicy,
    WorkspaceHints,
    fetch_limit,
    pool_width,
    rerank_groups,
)
from nearsym.core.sortkey import ExplainedKey
from nearsym.core.where import evidence
from nearsym.index.namespace import Namespace
from nearsym.index.where import resolve


def _blocks(pool: list[Symbol], width: int, block: int) -> list[list[Symbol]]:
    # Exact matches may overflow the width; they all stay in the first block.
    extra = max(0, len(pool) - width)
    first = block + extra
    out = [pool[:first]]
    for start in range(first, len(pool), block):
        out.append(pool[start : start + block])
    return out


STABLE_LIMIT = FETCH_MAX // FETCH_FACTOR
"""The smallest limit whose pool is the widest (100 rows -> 500): every
smaller limit is answered from that pool's ranking. Costs a limit-1 query
(the evaluation's keystrokes; the server's default limit is already 100)
the rerank of 500 rows instead of 50."""


def search(
    namespaces: Sequence[Namespace],
    query: str,
    limit: int,
    offset: int = 0,
    open_file: str | None = None,
    policy: RankPolicy | None = None,
    related: frozenset[str] = frozenset(),
    extra: Callable[[], Sequence[Sequence[Symbol]]] | None = None,
    hints: WorkspaceHints | None = None,
    keys: dict[int, ExplainedKey] | None = None,
) -> list[Symbol]:
    """The ranked definitions for `query`: rows `offset` to `offset + limit`.

    - Empty query: the definitions nearest `open_file` (its own, then its
      folder's, then outward); in path order when no file is open.
    - Candidates whose name evidence is 0 (a qualified query whose owner does
      not match, where-parts that locate nothing of them) or that a modifier
      refuses (`'exact`, `^prefix`, `suffix$`, `#types`) are dropped before
      ranking.
    - `open_file` is an absolute path, or None: then only the name decides.
    - `related`: absolute paths of the files the open file imports
      (`relations.Relations.related_files`).
    - `extra`: called once the namespaces' pools are in, returns pools of
      other sources (each `pool_width` rows at most, in retrieval order):
      the shared index's, fetched meanwhile. Each is one more group.
    - Limits below `STABLE_LIMIT` are cut from its answer: the first k rows
      do not depend on the limit.
    - `hints`: the open file's classes and the packages' re-exports
      (`workspace.members`, `workspace.reexports`).
    - Dependency namespaces (`Namespace.dependency`) rank after the
      workspace's definitions of the same name-match shape; the caller
      decides whether they are asked (the setting, a query's `**`).
    - `keys`: when given, gets each ranked row's sort key (`core.sortkey`)
      by `id()` of the row, the very key it was ordered by (`explain`).
    """
    limit = max(0, limit)
    offset = max(0, offset)
    if limit == 0:
        return []
    ranking = max(limit, STABLE_LIMIT)
    width = pool_width(offset, ranking)
    ordered = ranked_pool(
        namespaces,
        query,
        ranking,
        width,
        open_file,
        policy,
        related,
        extra,
        hints,
        keys,
        offset + ranking,
    )
    return ordered[offset : offset + limit]


PAGE_SIZE = 25
"""Rows per partial result: 25 fills a picker's first screen."""


def answer(
    namespaces: Sequence[Namespace],
    query: str,
    limit: int,
    open_file: str | None = None,
    policy: RankPolicy | None = None,
    related: frozenset[str] = frozenset(),
    extra: Callable[[], Sequence[Sequence[Symbol]]] | None = None,
    hints: WorkspaceHints | None = None,
    keys: dict[int, ExplainedKey] | None = None,
) -> list[Symbol]:
    """The server's whole answer of `limit` rows (`search` at offset 0)."""
    return search(namespaces, query, limit, 0, open_file, policy, related, extra, hints, keys)


def pages(rows: Sequence[Symbol], size: int = PAGE_SIZE) -> list[list[Symbol]]:
    """An answer cut into partial results, best first.

    The pages are slices of one ranking of the answer's pool
    (`pool_width(0, limit)`), so they arrive in order, never reshuffle one
    another, and concatenate to the unpaged answer. (Ranking each page from
    a pool of its own, `search(page, offset)`, would start sooner but was
    measured worse: pools of 125 rows instead of 500 cost 0.005 MRR on the
    DEV set, most of it on initials.)
    """
    size = max(1, size)
    return [list(rows[i : i + size]) for i in range(0, len(rows), size)]


def mention_lookup(namespaces: Sequence[Namespace], policy: RankPolicy) -> MentionLookup | None:
    """How many files of each namespace mention a name (none for the rows of
    other sources, the shared index's)."""
    if not policy.mentions:
        return None
    indexes = {ns.root: ns.index for ns in namespaces}

    def lookup(root: str, names: Sequence[str]) -> Sequence[int]:
        index = indexes.get(root)
        return index.mention_counts(names) if index is not None else [0] * len(names)

    return lookup


def ranked_pool(
    namespaces: Sequence[Namespace],
    query: str,
    limit: int,
    width: int,
    open_file: str | None = None,
    policy: RankPolicy | None = None,
    related: frozenset[str] = frozenset(),
    extra: Callable[[], Sequence[Sequence[Symbol]]] | None = None,
    hints: WorkspaceHints | None = None,
    keys: dict[int, ExplainedKey] | None = None,
    shown: int | None = None,
) -> list[Symbol]:
    """Every namespace's pool of `width` rows, ordered a block at a time.
    `shown`: how many of the ordered rows can be shown (`where.widen`).

    The query text is parsed here, once (`Query`), and its owner's base
    classes resolved (`where.resolve`): retrieval, the name and path scores
    read the parsed query.

    Invariant: for the same `limit`, the result for a narrower width is a
    prefix of the result for a wider one (pages never reshuffle).
    """
    parsed = resolve(Query.parse(query), [ns.index for ns in namespaces], open_file)
    block = fetch_limit(limit)
    policy = policy or RankPolicy()
    context = RankContext(
        open_file,
        policy,
        related,
        mention_lookup(namespaces, policy),
        hints or WorkspaceHints(),
        frozenset(ns.root for ns in namespaces if ns.dependency),
    )
    mentioned = context.hints.mentioned if policy.open_mentions_pool else frozenset()
    pools = [ns.index.candidates(parsed, width, open_file, shown, mentioned) for ns in namespaces]
    if extra is not None:
        pools.extend(list(p) for p in extra())
    # Blocks are cut before dropping zero-evidence rows, so that a block's
    # rows do not depend on how wide the pool is.
    per_namespace = [_blocks(p, width, block) for p in pools]
    if not parsed.empty:
        evident = evidence(parsed)
        per_namespace = [[[s for s in b if evident(s)] for b in blocks] for blocks in per_namespace]
    ordered: list[Symbol] = []
    for k in range(max((len(b) for b in per_namespace), default=0)):
        groups = [b[k] for b in per_namespace if k < len(b)]
        ordered.extend(rerank_groups(parsed, groups, sum(len(g) for g in groups), context, keys))
    return ordered
