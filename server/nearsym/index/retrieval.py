"""Candidate retrieval: the pool of definitions a query is ranked from.

Design note
-----------
Retrieval returns a *pool* in the index's own order, the retrieval rank,
in tiers that mirror how strongly a name answers the query:

1. exact names (all of them, even past the pool width: an exact match is
   never lost),
   then the names the open file mentions that start with the query, up to
   `MENTIONED_FIRST` rows (clangd's Dex boosts the open file's context
   before it cuts; here the cut is by name length, and on a large
   repository a three-letter prefix's own tier holds thousands of names),
2. names whose word initials are the query (`CE` -> `ConfigError`, `gfs`
   -> `get_file_size`; names of two words or more, from the segments'
   initials index), up to `INITIALS_FIRST` rows,
3. names starting with the query,
4. the rest of tier 2, then names whose initials start with the query
   (`CE` -> `CExprRole`),
5. names containing it,
6. names containing it as an ordered subsequence (`spnlk`),
7. when the pool is still short, definitions whose owner holds the query in
   order (a class's name reaches its members).

Tier 2 comes before the prefixes and shares the pool with them because a
short query's prefix tier alone fills any pool on a large repository: on
DEVLARGE (`nearsym eval`), with the initials after the prefixes the target
of 67 of 189 initials queries was not in the pool at all; with this order,
of none.

Inside a tier names come shortest first, then alphabetical, merged lazily
across segments, so a tier is read only as far as the pool needs. A name's
definitions come in path then position order. A qualified query
(`Cart.add`) runs the tiers on its member (`add`) and keeps the definitions
whose `container.name` holds the whole query in order; those whose
qualified name ends with it come first, all of them. The empty query
returns the definitions of the files nearest the open file.

Verification in tiers 5 and 6 stops after `VERIFY_BUDGET` names, so no
query walks millions of names; what it finds by then is what it returns
(exact matches are never subject to it).

A query whose rows are filtered by their owner (`Cart.add`) or by
where-parts (`sansio/app Flask`) often allows few rows at all: the rows of
a few containers or files. Then the tiers read only those rows' names
(`where.owned_entries`, `PlaceStarts.entries`, `subset.Within`), in the
same order: the pool is the one the whole walk would give, the budget is
spent on names that can answer, and the walk's cost follows the rows
allowed rather than the index.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from nearsym.core.model import Symbol
from nearsym.core.query import Query
from nearsym.core.typos import TYPO_MIN_LENGTH, variants
from nearsym.core.words import is_subsequence
from nearsym.index import nearby, where
from nearsym.index.encoding import U32
from nearsym.index.keys import (
    KeyCheck,
    Subsequence,
    Substring,
    merged_keys,
    name_groups,
    owners_like,
)
from nearsym.index.segment import Segment
from nearsym.index.subset import Starting, Within, exact_many, shared_start

VERIFY_BUDGET = 8_000
"""Names a query may test in the substring and subsequence tiers."""

INITIALS_FIRST = 250
"""Rows of names whose initials are the query taken before the names it
starts (half the widest pool); the rest of them come after those. A fixed
number, so that a narrower pool is still a prefix of a wider one."""

MENTIONED_FIRST = 64
"""Rows of the names the open file mentions and the query starts taken
right after the exact names (`candidates(mentioned=...)`). A fixed number,
so that a narrower pool is still a prefix of a wider one."""

TYPOS_BELOW = 10
"""A pool of fewer rows than this (true matches), none of them the name
typed, gets the names one edit from the query after them (`core.typos`)."""

SMALL_GROUP = 64
"""Rows of a name's spellings (entries) up to which they are all built and
sorted as symbols: past it, only the rows a pool keeps are built (the
numpy calls that choose them cost more than building a few)."""

QUALIFIED_BUDGET = 4_000
"""Names a query whose rows are filtered (a qualified query's owner, a
modifier, a where-part) may visit in its name tiers (most rows are
dropped by the filter, so this bounds the work, not the verification)."""

RowFilter = Callable[[Symbol], bool]
Lookup = Callable[[Segment, Within | None], Iterable[NDArray[np.uint32]]]
"""A tier's entries of a segment (of a subset, when given), shortest first."""


class Rows(Protocol):
    """What retrieval reads of an index (`store.SymbolIndex`)."""

    root: str
    files_generation: int

    @property
    def segments(self) -> list[Segment]: ...

    @property
    def files(self) -> list[str]: ...

    def file_path(self, fid: int) -> str: ...

    def file_paths(self, fids: NDArray[np.uint32]) -> list[str]: ...

    def file_paths_bytes(self, fids: NDArray[np.uint32]) -> bytes | None: ...

    def symbols_of(self, path: str) -> tuple[Symbol, ...]: ...

    def materialize(self, seg: Segment, rows: NDArray[np.uint32]) -> list[Symbol]: ...


def candidates(
    index: Rows,
    query: Query,
    width: int,
    open_file: str | None,
    shown: int | None = None,
    mentioned: frozenset[str] = frozenset(),
) -> list[Symbol]:
    """The candidate pool for `query` in `index`, in retrieval order.

    At most `width` rows, except that every exact name match is included
    whatever the width (they come first). An empty query returns the
    definitions of the files nearest `open_file` (absolute path), or of
    all files in path order when none is open. The query's modifiers
    filter the rows as the tiers fill; a query with where-parts or an
    owner's base classes gets the rows `where.widen` adds; `shown`, when
    given, is how many rows of the answer can be shown (offset and limit),
    which bounds what the located rows must fill (see `where.widen`).
    `mentioned`: the identifiers the open file mentions; those the query
    starts come right after the exact names (see the module note).
    """
    retrieval = _Retrieval(index)
    if query.empty:
        return nearby.nearest(index, open_file, width)
    text = query.folded
    keep: RowFilter | None = None
    first: RowFilter | None = None
    allowed: list[NDArray[np.bool_]] | None = None
    if query.qualified:
        wanted = query.target.lower()
        if not wanted:
            return []
        owner, text = query.owner, query.member
        if owner:

            def keep(s: Symbol) -> bool:
                return is_subsequence(wanted, f"{s.container}.{s.name}".lower())

            def first(s: Symbol) -> bool:
                container = s.container.lower()
                return container == owner or container.endswith("." + owner)

            allowed = [owners_like(seg, _bytes(owner)) for seg in retrieval.segs]
    keep = where.admitting(query, keep)
    context = nearby.starting_with(mentioned, text) if mentioned else []
    pool = retrieval.fill(_bytes(text), width, keep, first, allowed, context=context)
    if (
        keep is None
        and len(pool) < TYPOS_BELOW
        and len(text) >= TYPO_MIN_LENGTH
        and not any(s.name.lower() == text for s in pool)  # it was no slip
    ):
        pool.extend(retrieval.typos(text, width - len(pool), pool))
    # Inherited members, and what the where-parts locate: see `where`.
    return where.widen(query, width, pool, retrieval, shown)


class _Retrieval:
    """One query's walk over the segments of an index, as they were when
    it began."""

    def __init__(self, index: Rows) -> None:
        self.index = index
        self.segs = index.segments

    def filling(
        self, text: str, width: int, keep: RowFilter | None, narrow: where.Narrow | None = None
    ) -> list[Symbol]:
        """`fill` for `where.widen`, of a text as a string."""
        return self.fill(_bytes(text), width, keep, None, narrow=narrow)

    def path_of(self, seg: Segment, pos: int) -> str:
        """The relative path of the `pos`-th file of `seg`."""
        return self.index.file_path(int(seg.file_ids[pos]))

    def paths_of(self, seg: Segment) -> bytes:
        """The relative paths of `seg`'s files, in its file order, as
        `where.paths_blob` joins them."""
        return where.paths_blob(
            lambda: self.index.file_paths(seg.file_ids),
            self.index.file_paths_bytes(seg.file_ids),
        )

    def members(self, owners: where.Owners) -> list[Symbol]:
        """Every definition whose container `owners` marks (per segment),
        container by container, a segment's built at once."""
        out: list[Symbol] = []
        for seg in self.segs:
            runs = [seg.rows_owned(c) for c in np.flatnonzero(owners(seg)).tolist()]
            if runs:
                out.extend(self.index.materialize(seg, np.concatenate(runs)))
        return out

    def _owned(self, groups: list[list[tuple[int, int]]]) -> list[list[Symbol]]:
        """Per group of containers (segment, id), the definitions they own
        by path and position; the rows of a segment are built in one call."""
        runs: dict[int, list[NDArray[np.uint32]]] = {}
        for s_no, c in itertools.chain.from_iterable(groups):
            runs.setdefault(s_no, []).append(self.segs[s_no].rows_owned(c))
        built = {
            s_no: iter(self.index.materialize(self.segs[s_no], np.concatenate(listed)))
            for s_no, listed in runs.items()
        }
        sizes = {s_no: iter([len(rows) for rows in listed]) for s_no, listed in runs.items()}
        out: list[list[Symbol]] = []
        for group in groups:
            owned = [
                symbol
                for s_no, _ in group
                for symbol in itertools.islice(built[s_no], next(sizes[s_no]))
            ]
            owned.sort(key=lambda s: (s.path, s.span.line, s.span.col))
            out.append(owned)
        return out

    def fill(
        self,
        q: bytes,
        width: int,
        keep: RowFilter | None,
        first: RowFilter | None,
        allowed: list[NDArray[np.bool_]] | None = None,
        narrow: where.Narrow | None = None,
        context: Sequence[bytes] = (),
    ) -> list[Symbol]:
        """The pool of `q`, tier by tier (see the module note). `keep` tests
        each row; `allowed` (per segment, per container) and `narrow` (per
        segment, per row: a test `keep` implies) drop rows before they are
        built; `context`: the keys (lower-case names) the open file
        mentions that start with `q`, taken after the exact names."""
        segs = self.segs
        seen: set[tuple[int, int]] = set()
        # The entries that can give a row at all, where the owners or the
        # places allow few: the tiers skip the rest before testing a name.
        only = [self._only(s_no, seg, allowed, narrow) for s_no, seg in enumerate(segs)]
        # Tier 1: every exact match.
        pool: list[Symbol] = []
        later: list[Symbol] = []  # exact names whose owner is not the query's
        exact = [
            (s_no, seg, [ids])
            for s_no, seg in enumerate(segs)
            if (r := seg.exact(q))
            and len(ids := _of(np.arange(r.start, r.stop, dtype=np.uint32), only[s_no]))
        ]
        for group in name_groups(merged_keys(exact)):
            seen.update(group)
            for s in self._group_rows(group, allowed, narrow):
                if keep is None or keep(s):
                    (pool if first is None or first(s) else later).append(s)
        exact_count = len(pool)
        pool.extend(later)
        # Rows tested one by one (an owner, a modifier, a where-part) bound
        # the names a query visits, or a common name part (`test`) would
        # build and test every row of tens of thousands of names.
        filtered = allowed is not None or keep is not None
        budget = [QUALIFIED_BUDGET if filtered else VERIFY_BUDGET]
        ordered = Subsequence(q)

        # Rows of the later tiers are gathered as (segment, rows) and turned
        # into symbols at the end, a segment's run at a time.
        pieces: list[tuple[int, NDArray[np.uint32]] | list[Symbol]] = []
        count = len(pool)
        every = KeyCheck() if filtered else None
        initials = len(q) >= 2
        tiers: list[tuple[Lookup, KeyCheck | None, int]] = []
        if context:
            # Names the open file mentions first: the prefix tier cuts by
            # length, which knows nothing of the person.
            tiers.append(
                (lambda seg, w: nearby.entries_of(seg, context, w), None, count + MENTIONED_FIRST)
            )
        if initials:
            # Names whose words' initials are the query (`CE` -> ConfigError)
            # share the pool with the names it starts: a short query's prefix
            # tier alone would fill the pool.
            tiers.append((lambda seg, w: seg.initials(q, True, w), every, count + INITIALS_FIRST))
        tiers.append((lambda seg, w: seg.prefix(q, w), every, width))
        if initials:
            tiers.append((lambda seg, w: seg.initials(q, True, w), every, width))
            tiers.append((lambda seg, w: seg.initials(q, False, w), every, width))
        tiers.append((lambda seg, w: seg.containing(q, w), Substring(q), width))
        tiers.append((lambda seg, w: seg.subsequence(q, w), ordered, width))
        for lookup, check, cap in tiers:
            if count >= width:
                break
            sources = [(s_no, seg, lookup(seg, only[s_no])) for s_no, seg in enumerate(segs)]
            keys = merged_keys(sources, False, check, budget)
            groups = name_groups(keys, seen=seen)
            cap = min(cap, width)
            while count < cap:
                # A batch of groups at a time: the rows of single-entry groups
                # (nearly all) are looked up together, per segment.
                batch = list(itertools.islice(groups, min(256, max(16, cap - count))))
                if not batch:
                    break
                count = self._take(
                    batch, keep, allowed, cap, count, seen, pieces, narrow, cap >= width
                )
        pool.extend(self._assemble(pieces))
        if len(pool) < width and keep is None:
            # Tier 7: definitions whose owner holds the query in order (a
            # class's name reaches its members).
            sources = [(s_no, seg, [seg.owners(q)]) for s_no, seg in enumerate(segs)]
            keys = merged_keys(sources, True, ordered, budget)
            taken = {(s.path, s.span, s.name) for s in pool}
            owners = name_groups(keys)
            while len(pool) < width:
                # Owners a batch at a time, their rows built together (a
                # query few names match reaches a hundred small classes;
                # built one by one, they were half of its time).
                batch = list(itertools.islice(owners, min(256, max(16, width - len(pool)))))
                if not batch:
                    break
                for owned in self._owned(batch):
                    for s in owned:
                        if (s.path, s.span, s.name) not in taken:
                            pool.append(s)
                    if len(pool) >= width:
                        break
        # Invariant: every exact match is kept; otherwise exactly `width` rows
        # at most, so that a narrower pool is a prefix of a wider one.
        return pool[: max(width, exact_count)]

    def _only(
        self,
        s_no: int,
        seg: Segment,
        allowed: list[NDArray[np.bool_]] | None,
        narrow: where.Narrow | None,
    ) -> Within | None:
        """The entries of `seg` that may give a row the owners (`allowed`)
        and `narrow` pass; None for every entry."""
        ids = where.owned_entries(seg, allowed[s_no]) if allowed is not None else None
        if narrow is not None:
            placed = narrow.entries(seg, self.paths_of)
            if placed is not None:
                ids = placed if ids is None else np.intersect1d(ids, placed, assume_unique=True)
        return None if ids is None else Within(ids, seg.lower, seg.lo_off)

    def typos(self, text: str, room: int, pool: list[Symbol]) -> list[Symbol]:
        """Up to `room` definitions whose names are one edit from `text`
        (`typos`), not already in `pool`, by name then path and position."""
        taken = {(s.path, s.span, s.name) for s in pool}
        typed = _bytes(text)
        # A variant shares its start with the query: it is searched among the
        # names starting so (a few, for an edit late in a long query).
        among: dict[tuple[int, int], Starting] = {}
        # Variants among long spans are bisected together, per segment.
        long: list[tuple[list[bytes], list[range]]] = [([], []) for _ in self.segs]
        hits: list[tuple[int, range]] = []
        for variant in variants(text):
            key = _bytes(variant)
            kept = shared_start(key, typed)
            for s_no, seg in enumerate(self.segs):
                span = among.get((s_no, kept))
                if span is None:
                    span = among[s_no, kept] = Starting(seg, seg.starting(typed[:kept]))
                if span.keys is None:
                    long[s_no][0].append(key)
                    long[s_no][1].append(span.span)
                else:
                    hits.append((s_no, span.exact(key)))
        for s_no, (keys, spans) in enumerate(long):
            hits.extend((s_no, r) for r in exact_many(self.segs[s_no], keys, spans))
        segs = self.segs
        found = [(s, segs[s], [np.arange(r.start, r.stop, dtype=U32)]) for s, r in hits if r]
        found.sort(key=lambda f: (f[1].key(int(f[2][0][0])), f[0]))
        out: list[Symbol] = []
        for group in name_groups(merged_keys(found)):
            for s in self._group_rows(group):
                if (s.path, s.span, s.name) not in taken:
                    out.append(s)
            if len(out) >= room:
                break
        return out[: max(0, room)]

    def _take(
        self,
        batch: list[list[tuple[int, int]]],
        keep: RowFilter | None,
        allowed: list[NDArray[np.bool_]] | None,
        width: int,
        count: int,
        seen: set[tuple[int, int]],
        pieces: list[tuple[int, NDArray[np.uint32]] | list[Symbol]],
        narrow: where.Narrow | None = None,
        last: bool = True,
    ) -> int:
        """Add `batch`'s rows to `pieces`, group by group, until `count`
        reaches `width` (the group that reaches it is whole); the new count.
        `last`: `width` is the pool's, so rows past it are not built (a
        tier's own cap short of the pool's takes its last group whole: the
        group is seen, and no later tier would give the rest of it)."""
        segs = self.segs
        singles: dict[int, tuple[list[int], list[int]]] = {}
        for at, group in enumerate(batch):
            if len(group) == 1:
                where, ids = singles.setdefault(group[0][0], ([], []))
                where.append(at)
                ids.append(group[0][1])
        # Per single-entry group: its segment's rows, and its slice of them.
        rows_by_seg: dict[int, NDArray[np.uint32]] = {}
        slot: dict[int, tuple[int, int, int]] = {}
        for s_no, (where, ids) in singles.items():
            seg = segs[s_no]
            rows, counts = seg.rows_of_many(np.asarray(ids, dtype=np.uint32))
            if allowed is not None and len(rows):
                owner = np.repeat(np.arange(len(ids)), counts)
                kept = allowed[s_no][seg.conts(rows)]
                rows = rows[kept]
                counts = np.bincount(owner[kept], minlength=len(ids)).tolist()
            if narrow is not None and len(rows):
                owner = np.repeat(np.arange(len(ids)), counts)
                kept = narrow(seg, rows, self.path_of)
                rows = rows[kept]
                counts = np.bincount(owner[kept], minlength=len(ids)).tolist()
            rows_by_seg[s_no] = rows
            end = 0
            for at, n in zip(where, counts, strict=True):
                slot[at] = (s_no, end, end + n)
                end += n
        built_by_seg: dict[int, list[Symbol]] = {}
        for at, group in enumerate(batch):
            seen.update(group)
            place = slot.get(at)
            if place is None and keep is None and allowed is None and last:
                # Rows past the width are cut from the pool: build only those
                # that can stay.
                listed = self._group_rows_first(group, width - count)
                pieces.append(listed)
                count += len(listed)
            elif place is None:
                listed = [
                    s for s in self._group_rows(group, allowed, narrow) if keep is None or keep(s)
                ]
                pieces.append(listed)
                count += len(listed)
            elif place[1] == place[2]:
                continue
            elif keep is not None:
                # The batch's rows of a segment are built at once (a filter
                # drops most of them).
                built = built_by_seg.get(place[0])
                if built is None:
                    built = self.index.materialize(segs[place[0]], rows_by_seg[place[0]])
                    built_by_seg[place[0]] = built
                listed = [s for s in built[place[1] : place[2]] if keep(s)]
                pieces.append(listed)
                count += len(listed)
            else:
                pieces.append((place[0], rows_by_seg[place[0]][place[1] : place[2]]))
                count += place[2] - place[1]
            if count >= width:
                break
        return count

    def _assemble(
        self, pieces: list[tuple[int, NDArray[np.uint32]] | list[Symbol]]
    ) -> list[Symbol]:
        out: list[Symbol] = []
        run: list[NDArray[np.uint32]] = []
        run_seg = -1

        def flush() -> None:
            if run:
                seg = self.segs[run_seg]
                out.extend(
                    self.index.materialize(seg, np.concatenate(run) if len(run) > 1 else run[0])
                )
                run.clear()

        for piece in pieces:
            if isinstance(piece, list):
                flush()
                out.extend(piece)
                continue
            s_no, rows = piece
            if s_no != run_seg:
                flush()
                run_seg = s_no
            run.append(rows)
        flush()
        return out

    def _group_rows(
        self,
        group: list[tuple[int, int]],
        allowed: list[NDArray[np.bool_]] | None = None,
        narrow: where.Narrow | None = None,
    ) -> list[Symbol]:
        found: list[tuple[int, NDArray[np.uint32]]] = []
        for s_no, e in group:
            seg = self.segs[s_no]
            rows = seg.rows_of(e)
            if allowed is not None and len(rows):
                rows = rows[allowed[s_no][seg.conts(rows)]]
            if narrow is not None and len(rows):
                rows = rows[narrow(seg, rows, self.path_of)]
            found.append((s_no, rows))
        return self._built(found)

    def _built(self, found: list[tuple[int, NDArray[np.uint32]]]) -> list[Symbol]:
        """The symbols of a group's rows (per entry: its segment and rows),
        a segment's rows built in one call, in path then position order."""
        by_seg: dict[int, list[NDArray[np.uint32]]] = {}
        for s_no, rows in found:
            by_seg.setdefault(s_no, []).append(rows)
        out: list[Symbol] = []
        for s_no, runs in by_seg.items():
            rows = runs[0] if len(runs) == 1 else np.concatenate(runs)
            out.extend(self.index.materialize(self.segs[s_no], rows))
        if len(found) > 1:  # no two rows share a file and position
            out.sort(key=lambda s: (s.path, s.span.line, s.span.col))
        return out

    def _group_rows_first(self, group: list[tuple[int, int]], limit: int) -> list[Symbol]:
        """`_group_rows(group)[:limit]`, building only the symbols kept."""
        segs = self.segs
        found = [(s_no, segs[s_no].rows_of(e)) for s_no, e in group]
        if sum(len(rows) for _, rows in found) <= SMALL_GROUP:
            # Few rows (`DSA_T` and `dsa_t`): all built and sorted as symbols.
            return self._built(found)[: max(0, limit)]
        parts: list[tuple[int, NDArray[np.uint32]]] = []
        paths: list[str] = []
        ranks_in: list[NDArray[np.int64]] = []
        lines: list[NDArray[np.int64]] = []
        cols: list[NDArray[np.int64]] = []
        for s_no, rows in found:
            seg = segs[s_no]
            if not len(rows):
                continue
            files = np.searchsorted(seg.file_start, rows, side="right") - 1
            local, inverse = np.unique(files, return_inverse=True)
            base = len(paths)
            paths.extend(self.index.file_path(int(seg.file_ids[f])) for f in local.tolist())
            ranks_in.append(inverse.astype(np.int64) + base)
            line, col, _, _ = seg.spans_of(rows)
            lines.append(line)
            cols.append(col)
            parts.append((s_no, rows))
        if not parts:
            return []
        place = {path: n for n, path in enumerate(sorted(set(paths)))}
        order_of_path = np.fromiter((place[p] for p in paths), dtype=np.int64, count=len(paths))
        rank = order_of_path[np.concatenate(ranks_in)]
        chosen = np.lexsort((np.concatenate(cols), np.concatenate(lines), rank))[: max(0, limit)]
        sizes = np.cumsum([0] + [len(r) for _, r in parts])
        out: list[Symbol | None] = [None] * len(chosen)
        for k, (s_no, rows) in enumerate(parts):
            lo, hi = int(sizes[k]), int(sizes[k + 1])
            at = np.flatnonzero((chosen >= lo) & (chosen < hi))
            if not len(at):
                continue
            built = self.index.materialize(segs[s_no], rows[chosen[at] - lo])
            for i, symbol in zip(at.tolist(), built, strict=True):
                out[i] = symbol
        return [s for s in out if s is not None]


def _of(ids: NDArray[np.uint32], only: Within | None) -> NDArray[np.uint32]:
    """The entries `ids` in `only` (all of them without it)."""
    return ids if only is None else only.of(ids)


def _bytes(text: str) -> bytes:
    """A query's UTF-8 bytes; a lone surrogate (JSON can carry one) passes
    through as bytes no indexed name holds."""
    return text.encode("utf-8", "surrogatepass")
