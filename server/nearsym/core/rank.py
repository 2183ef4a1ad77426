"""The rank rules: pool sizes, and the order of a candidate pool.

Design note
-----------
These follow the seed's rank rules (the `seed` row of `nearsym eval`),
adapted to an editor:

- `fetch_limit` / `pool_width` size the candidate pool: wide enough that
  reranking has more than `limit` rows to reorder (50 to 500), and cut in
  whole blocks so that paging never reshuffles a page already delivered.
- `rerank_groups` orders candidate pools by *name* evidence first, then
  *path* evidence (the share of query words that are path segments, then
  closeness to the open file), then identity (root, path, qualified name,
  position), and only then by retrieval rank. The retrieval rank is
  deliberately not fused into the score: the seed measured Reciprocal Rank
  Fusion against structure alone on its golden set, MRR 0.720 fused versus
  0.793 structure-only, because a position inside a 500-row pool says
  little about what the person meant.
- It merges several independently retrieved pools (one per workspace
  folder); each node keeps the retrieval rank it had in its own pool, so the
  answer does not depend on which group came first.

Which evidence the order reads is a `policy.RankPolicy` (one switch per
measured change; `policy.POLICIES` are the rows `nearsym eval` measures).

Everything here is a pure function of its arguments: no protocol, no
tree-sitter, no I/O.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from nearsym.core.match import NameEvidence, NameMatcher, highlight
from nearsym.core.model import Kind, Symbol, qualified
from nearsym.core.policy import POLICIES as POLICIES
from nearsym.core.policy import REBINDING_LANGUAGES as REBINDING_LANGUAGES
from nearsym.core.policy import SEED_POLICY as SEED_POLICY
from nearsym.core.policy import RankPolicy as RankPolicy
from nearsym.core.proximity import (
    SAME_FILE_SCORE,
    SAME_FOLDER_SCORE,
    directory_distance,
    folder_scorer,
    proximity_score,
)
from nearsym.core.query import Query
from nearsym.core.sortkey import EmptyQueryKey, ExplainedKey, RawSortKey, SortKey
from nearsym.core.where import clear_caches as clear_where_caches
from nearsym.core.where import where_reading
from nearsym.core.words import clear_caches as clear_word_caches
from nearsym.core.words import split_words

FETCH_FACTOR = 5
"""Pool rows per result row (the seed's)."""
FETCH_MIN = 50
"""The narrowest pool: even `limit=1` gets 50 rows to choose from."""
FETCH_MAX = 500
"""The widest pool: bounds the rerank's cost per keystroke."""


def fetch_limit(limit: int) -> int:
    """Rows to pull for an answer of `limit` rows: `clamp(5 * limit, 50, 500)`.

    Invariant: 50 <= fetch_limit(limit) <= 500 for every integer limit.
    """
    return min(max(FETCH_FACTOR * limit, FETCH_MIN), FETCH_MAX)


def pool_width(offset: int, limit: int) -> int:
    """Rows of pool the page at `offset` (of `limit` rows) is cut from.

    A block is `fetch_limit(limit)`. The pool is `fetch_limit(offset + limit)`
    rounded up to whole blocks, capped at as many whole blocks as fit in
    `FETCH_MAX` rows, and never less than one block.

    Invariant: a whole number of blocks, never narrower as offset grows (for
    the same limit).
    """
    block = fetch_limit(limit)
    need = fetch_limit(max(0, offset) + max(0, limit))
    blocks = -(-need // block)
    cap = max(1, FETCH_MAX // block)
    return max(1, min(blocks, cap)) * block


_TEST_FOLDERS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "testdata"})


def clear_caches() -> None:
    """Forget memoised scoring and path work (benchmarks measure each pass
    cold)."""
    clear_word_caches()
    clear_where_caches()
    is_test_path.cache_clear()
    path_segments.cache_clear()


PATH_CACHE = 2048
"""Paths whose test-ness and segments are kept. A query's pool names at
most a few hundred files, and the next keystroke's mostly the same; an
entry of `path_segments` holds a frozenset and its strings (about 800
bytes on the Linux kernel's paths), so 8,192 of them kept 6 MB of a
server after a long session, and their turnover scattered long-lived
objects across the allocator's arenas."""


@lru_cache(maxsize=PATH_CACHE)
def is_test_path(path: str) -> bool:
    """Whether a relative `/` path is test code, by the conventions of the
    languages nearsym reads (folder names and file-name patterns)."""
    parts = path.lower().split("/")
    if not _TEST_FOLDERS.isdisjoint(parts[:-1]):
        return True
    stem = parts[-1].split(".", 1)[0]
    rest = parts[-1][len(stem) :]
    return (
        stem.startswith("test_")
        or stem.endswith(("_test", "_tests", "_spec"))
        or stem in ("conftest", "test", "tests")
        or rest.startswith((".test.", ".spec."))
    )


@dataclass(frozen=True, slots=True)
class RankContext:
    """What the ranking knows besides the query: the file the person has open
    (absolute path), or None when no editor told us, and the policy."""

    open_file: str | None = None
    policy: RankPolicy = field(default_factory=RankPolicy)
    related: frozenset[str] = frozenset()
    """Absolute paths of the files the open file imports."""
    mentions: MentionLookup | None = None
    """How many files of a namespace mention each name, or None."""
    hints: WorkspaceHints = field(default_factory=lambda: WorkspaceHints())
    dependencies: frozenset[str] = frozenset()
    """The roots of the dependencies' namespaces: their definitions rank
    after the workspace's of the same name-match shape, whatever else they
    have (a dependency's better-shaped match still ranks first: gopls halves
    a dependency's score, rust-analyzer lists libraries after the crate)."""


@dataclass(frozen=True, slots=True)
class WorkspaceHints:
    """What the workspace says about the open file's context, read by the
    workspace layer (`workspace.members`, `workspace.reexports`)."""

    members: frozenset[tuple[str, str]] = frozenset()
    """(file or folder, class): the classes whose members are the open
    file's to use, as (absolute path of the class's file, qualified name)
    or, where a class's members may be defined in other files of its
    folder (Go, C, C++), (absolute path of that folder, qualified name)."""
    exported: frozenset[tuple[str, str]] = frozenset()
    """(absolute path, name): top-level names a package's index file
    re-exports from the file that defines them; `*` for all of a file's."""
    receivers: frozenset[tuple[str, str]] = frozenset()
    """(member name, receiver key): each `x.member` of the open file, `x`
    as `workspace.members.receiver_key` writes it (`_query_cache` ->
    `querycache`)."""
    mentioned: frozenset[str] = frozenset()
    """The identifiers the open file's text mentions."""

    def is_member(self, file: str, folder: str, container: str) -> bool:
        return bool(container) and (
            (file, container) in self.members or (folder, container) in self.members
        )

    def is_exported(self, file: str, name: str, container: str) -> bool:
        return not container and ((file, name) in self.exported or (file, "*") in self.exported)

    def receiver_grade(self, name: str, container: str) -> int:
        """2 when the open file reaches `name` through a variable named
        as the owner class (`headers.update` for `Headers.update`), 1
        when named as its last words (`client.get` for
        `AsyncClient.get`), else 0."""
        if not (container and self.receivers):
            return 0
        words = split_words(container.rsplit(".", 1)[-1].lstrip("_$#"))
        for i in range(len(words)):
            if (name, "".join(words[i:]).lower()) in self.receivers:
                return 2 if i == 0 else 1
        return 0


MentionLookup = Callable[[str, Sequence[str]], Sequence[int]]
"""(namespace root, names) -> how many files of that namespace mention each."""


def mention_bucket(count: int) -> int:
    """A mention count, log-quantised: 0 for none, then 1, 2 for 2-3, 3 for
    4-7, ... (`floor(log2(count)) + 1`)."""
    return max(0, count).bit_length()


@dataclass(frozen=True, slots=True)
class Evidence:
    """One candidate's score components, in the order they are compared."""

    name: NameEvidence
    shape: float
    path_share: float
    proximity: float
    distance: int | None
    in_tests: bool
    local: bool
    kind_rank: int
    imported: bool
    mentions: int
    member: bool
    exported: bool
    receiver: int = 0
    mentioned_here: bool = False

    @property
    def name_score(self) -> float:
        return self.name.score


@lru_cache(maxsize=PATH_CACHE)
def path_segments(path: str) -> frozenset[str]:
    """The folder names and the file's stem of a relative path, lower-cased."""
    parts = path.lower().split("/")
    stem = parts[-1].split(".", 1)[0]
    return frozenset((*parts[:-1], stem))


def path_score(query: Query, path: str) -> float:
    """Share of the query's words that are whole segments of `path`, in [0, 1].

    `syncqueue push` on `internal/syncqueue/queue.go` is 0.5; 0.0 when no word
    is a segment (or the query is empty).
    """
    return _path_share(query.path_words, path)


def _path_share(words: Sequence[str], path: str) -> float:
    if not words:
        return 0.0
    low = path.lower()
    if not any(w in low for w in words):  # no segment can be a word
        return 0.0
    segments = path_segments(path)
    return sum(1 for w in words if w in segments) / len(words)


def evidence(
    query: Query, symbol: Symbol, context: RankContext, positions: bool = False
) -> Evidence:
    """Every component the order of `symbol` depends on, from scratch (the
    rerank computes the same per file and per name; `explain()` prints it)."""
    policy = context.policy
    matcher = NameMatcher(query, policy.smart_case, policy.case_in_exact)
    name = matcher.explain(symbol.name, symbol.container, positions)
    if (reading := where_reading(query, policy.smart_case)) is not None:
        name = reading.explain(symbol, name)
    shape = name.shape if policy.tail_late else name.score
    file = symbol.file
    open_file = context.open_file if context.policy.closeness else None
    distance = directory_distance(file, open_file) if open_file else None
    in_tests = (
        context.policy.test_prior
        and is_test_path(symbol.path)
        and not (
            context.open_file and os.path.normpath(file) == os.path.normpath(context.open_file)
        )
    )
    proximity = proximity_score(file, open_file)
    if not policy.same_file_first and proximity == SAME_FILE_SCORE:
        proximity = SAME_FOLDER_SCORE
    return Evidence(
        name=name,
        shape=shape,
        path_share=path_score(query, symbol.path),
        proximity=proximity,
        distance=distance,
        in_tests=bool(in_tests),
        local=policy.local_prior and symbol.local,
        kind_rank=_KIND_RANK.get(symbol.kind, 1) if policy.kind_prior else 0,
        imported=policy.imports and file in context.related,
        mentions=_mentions_of(context, symbol.root, [symbol.name])[0],
        member=policy.members
        and context.hints.is_member(file, os.path.dirname(file), symbol.container),
        exported=policy.exported and context.hints.is_exported(file, symbol.name, symbol.container),
        receiver=context.hints.receiver_grade(symbol.name, symbol.container)
        if policy.receivers
        else 0,
        mentioned_here=policy.open_mentions and symbol.name in context.hints.mentioned,
    )


def _mentions_of(context: RankContext, root: str, names: Sequence[str]) -> list[int]:
    """The mention bucket of each of `names` (all 0 when the policy or the
    context has none)."""
    if not (context.policy.mentions and context.mentions and names):
        return [0] * len(names)
    return [mention_bucket(c) for c in context.mentions(root, names)]


_KIND_RANK = {
    Kind.CLASS: 0,
    Kind.INTERFACE: 0,
    Kind.STRUCT: 0,
    Kind.ENUM: 0,
    Kind.FUNCTION: 0,
    Kind.METHOD: 0,
    Kind.CONSTRUCTOR: 0,
    Kind.MODULE: 0,
    Kind.NAMESPACE: 0,
}
"""Types and callables 0, everything else (variables, fields, constants) 1."""

_SortKey = RawSortKey
"""What the rerank sorts by, each position named in `sortkey.SortKey`."""


def _order(
    query: Query,
    ranked: Iterable[tuple[int, Symbol]],
    limit: int,
    context: RankContext,
    keys: dict[int, ExplainedKey] | None = None,
) -> list[Symbol]:
    """The best `limit` of (retrieval rank, definition) pairs, by `_SortKey`;
    the evidence that depends only on a file (or only on a name) is computed
    once per file (per name), the name scores for the whole pool at once.
    `keys`, when given, gets each row's key by `id()` of its definition."""
    policy = context.policy
    case = policy.smart_case
    open_file = context.open_file if policy.closeness else None
    open_norm = os.path.normpath(context.open_file) if context.open_file else None
    by_file: dict[tuple[str, str], tuple[float, bool, bool, float, tuple[str, str] | None]] = {}
    by_name: dict[tuple[str, str], tuple[float, float, str]] = {}
    scorer = NameMatcher(query, case, policy.case_in_exact)
    ranked = list(ranked)
    scorer.prime((s.name, s.container) for _, s in ranked)
    mentioned: dict[tuple[str, str], int] = {}
    if policy.mentions and context.mentions is not None:
        per_root: dict[str, dict[str, None]] = {}
        for _, s in ranked:
            per_root.setdefault(s.root, {})[s.name] = None
        for root, names in per_root.items():
            listed = list(names)
            for name, bucket in zip(listed, _mentions_of(context, root, listed), strict=True):
                mentioned[root, name] = -bucket
    mention = mentioned.get
    hints = context.hints
    use_members = policy.members and bool(hints.members)
    use_exported = policy.exported and bool(hints.exported)
    use_receivers = policy.receivers and bool(hints.receivers)
    use_open = policy.open_mentions and bool(hints.mentioned)
    open_names = hints.mentioned
    graded: dict[tuple[str, str], int] = {}
    words = query.path_words
    need_file = bool(open_norm or open_file or (policy.imports and context.related))
    keyed: list[tuple[_SortKey, Symbol]] = []
    # Per-row work is what a large pool (every exact `id` of the kernel)
    # costs: the policy's switches and the tables are read once.
    test_prior, use_imports = policy.test_prior, policy.imports
    local_prior, kind_prior = policy.local_prior, policy.kind_prior
    tail_late, last_first = policy.tail_late, policy.last_definition_first
    rebinding = REBINDING_LANGUAGES if policy.rebinding_only else None
    same_file_first, related = policy.same_file_first, context.related
    dependencies = context.dependencies
    kind_rank = _KIND_RANK.get
    both = scorer.both
    where = where_reading(query, case, tail_late, (s for _, s in ranked))  # None: one part
    need_place = use_members or use_exported
    # The open file's own rows: only a file of the same base name can be
    # it (so most files are never joined and normalised).
    open_base = os.path.basename(open_norm) if open_norm else None
    receiver_names = frozenset(n for n, _ in hints.receivers) if use_receivers else frozenset()
    folders: dict[tuple[str, str], tuple[str, float]] = {}
    folder_near = folder_scorer(open_file) if open_file else None
    for r, symbol in ranked:
        fk = (symbol.root, symbol.path)
        f = by_file.get(fk)
        if f is None:
            path = symbol.path
            share = _path_share(words, path)
            in_tests = test_prior and is_test_path(path)
            imported = False
            proximity = 0.0
            place: tuple[str, str] | None = None
            if need_file or need_place:
                file = symbol.file
                same = (
                    open_base is not None
                    and path.endswith(open_base)
                    and os.path.normpath(file) == open_norm
                )
                in_tests = in_tests and not same
                imported = use_imports and file in related
                # A folder's closeness and absolute path, once per folder.
                gk = (symbol.root, path.rpartition("/")[0])
                g = folders.get(gk)
                if g is None:
                    near = folder_near(file) if folder_near is not None else 0.0
                    g = folders[gk] = (os.path.dirname(file), near)
                place = (file, g[0])
                if open_file:
                    proximity = SAME_FILE_SCORE if same else g[1]
                    if not same_file_first and proximity == SAME_FILE_SCORE:
                        proximity = SAME_FOLDER_SCORE
            f = by_file[fk] = (share, bool(in_tests), bool(imported), proximity, place)
        name, container = symbol.name, symbol.container
        nk = (name, container)
        n = by_name.get(nk)
        if n is None:
            score, shape = both(name, container)
            n = by_name[nk] = (score, shape if tail_late else score, qualified(container, name))
        if where is not None:
            n = where.better(symbol, n)
        unmentioned = not (use_open and name in open_names)
        receiver = 0
        if use_receivers and name in receiver_names:
            got_grade = graded.get(nk)
            if got_grade is None:
                got_grade = graded[nk] = hints.receiver_grade(name, container)
            receiver = got_grade
        member = exported = False
        if need_place:
            place = f[4]
            assert place is not None
            member = use_members and hints.is_member(place[0], place[1], container)
            exported = use_exported and hints.is_exported(place[0], name, container)
        span = symbol.span
        key: _SortKey = (
            -n[1],
            symbol.root in dependencies,
            not member,
            -receiver,
            -f[0],
            f[1],
            local_prior and symbol.local,
            not f[2],
            kind_rank(symbol.kind, 1) if kind_prior else 0,
            not exported,
            unmentioned,
            mention((symbol.root, name), 0),
            -f[3],
            -n[0],
            symbol.root,
            symbol.path,
            n[2],
            -span.line
            if last_first and (rebinding is None or symbol.language in rebinding)
            else span.line,
            span.col,
            r,
        )
        keyed.append((key, symbol))
        if keys is not None:
            keys[id(symbol)] = SortKey._make(key)
    if len(keyed) > 4 * limit:  # the best `limit` without sorting the rest
        return [s for _, s in heapq.nsmallest(max(0, limit), keyed, key=lambda pair: pair[0])]
    keyed.sort(key=lambda pair: pair[0])
    return [s for _, s in keyed[: max(0, limit)]]


def rerank_groups(
    query: Query,
    groups: Sequence[Sequence[Symbol]],
    limit: int,
    context: RankContext | None = None,
    keys: dict[int, ExplainedKey] | None = None,
) -> list[Symbol]:
    """Merge several independently retrieved pools into one order.

    Each group is a pool in retrieval order (index == retrieval rank). Order:
    name score (descending), then path evidence (query words in the path,
    then closeness to the open file), then identity (root, path, qualified
    name, line, column), then retrieval rank; cut to `limit`.

    Each node keeps the retrieval rank it had inside its own group, so a
    group's top hit is not charged the length of the groups before it.
    Invariant: the result does not depend on the order of `groups`; empty
    groups contribute nothing. With an empty query, nodes are interleaved by
    their in-group rank (then identity), which is also order-independent.
    `keys`, when given, gets every row's sort key (`sortkey`) by `id()`.
    """
    ranked = [(rank, s) for group in groups for rank, s in enumerate(group)]
    if not ranked:
        return []
    if query.empty:
        empty = [(EmptyQueryKey(r, s.root, s.path, s.span.line, s.span.col), s) for r, s in ranked]
        empty.sort(key=lambda p: p[0])
        if keys is not None:
            keys.update((id(s), key) for key, s in empty)
        return [s for _, s in empty[: max(0, limit)]]
    return _order(query, ranked, limit, context or RankContext(), keys)


def _flag(label: str, on: bool, meaning: str) -> str:
    """One yes/no line of `explain()`: `label` padded to the value column."""
    return f"  {label}{'yes' if on else 'no '}    {meaning}"


def explain(query: Query, symbol: Symbol, context: RankContext | None = None) -> str:
    """One line per score component of `symbol` for `query`, in rank order."""
    ctx = context or RankContext()
    ev = evidence(query, symbol, ctx, positions=True)
    lines = [
        f"{symbol.qualified_name}  ({symbol.kind.label}, {symbol.path}:{symbol.span.line + 1})",
        f"  name      {ev.name_score:.3f}  {ev.name.reading}: "
        f"{highlight(ev.name.matched, ev.name.positions)}",
        f"  path      {ev.path_share:.3f}  query words that are segments of {symbol.path}",
    ]
    if ctx.policy.imports:
        lines.append(_flag("imported  ", ev.imported, "in a file the open file imports"))
    if ctx.policy.receivers:
        lines.append(
            f"  receiver  {ev.receiver}        2: the open file reaches it through a variable"
            " named as its class, 1: as its last words"
        )
    if ctx.policy.members:
        lines.append(
            _flag(
                "member    ",
                ev.member,
                "of a class the open file defines or imports, or of its bases",
            )
        )
    if ctx.policy.exported:
        lines.append(_flag("exported  ", ev.exported, "re-exported by its package's index file"))
    if ctx.policy.open_mentions:
        lines.append(_flag("here      ", ev.mentioned_here, "a name the open file mentions"))
    if ctx.policy.mentions:
        lines.append(
            f"  mentions  {ev.mentions}        log2 of the files that mention the name, + 1"
        )
    if ctx.policy.test_prior:
        lines.append(_flag("tests     ", ev.in_tests, "test code ranks after the rest"))
    if ctx.open_file is None:
        lines.append("  closeness 0.000  no open file known: ranked by name alone")
    elif not ctx.policy.closeness:
        lines.append("  closeness 0.000  not used by this policy")
    else:
        lines.append(
            f"  closeness {ev.proximity:.3f}  {ev.distance} folder steps from {ctx.open_file}"
        )
    return "\n".join(lines)
