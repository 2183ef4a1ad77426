"""The in-memory index of one namespace (one workspace folder).

Design note
-----------
The index is a short list of immutable columnar segments (`segment`), a
file table (path per file id) and, per file, the segment holding its live
definitions. Replacing a file builds a segment of that file alone and marks
its old rows dead; segments are merged like a binary counter (the newest
two whenever the newer holds at least half as many live rows as the
older), so there are O(log n) of them, each row is moved O(log n) times,
and dead rows are dropped on the way. A bulk load (`replace_files`) builds
one segment per batch.

Candidate retrieval returns a *pool* in the index's own order, the retrieval
rank, in tiers that mirror how strongly a name answers the query:

1. exact names (all of them, even past the pool width: an exact match is
   never lost),
2. names starting with the query,
3. names containing it,
4. names containing it as an ordered subsequence (camel-hump and snake
   initials, `gfs`, `spnlk`).

Inside a tier names come shortest first, then alphabetical, merged lazily
across segments, so a tier is read only as far as the pool needs. A name's
definitions come in path then position order. A qualified query
(`Cart.add`) runs the tiers on its last part (`add`) and keeps the
definitions whose `container.name` holds the whole query in order; those
whose qualified name ends with it come first, all of them. The empty query
returns the definitions of the files nearest the open file.

Verification in tiers 3 and 4 stops after `VERIFY_BUDGET` names, so no
query walks millions of names; what it finds by then is what it returns
(exact matches are never subject to it).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import marshal
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nearsym.core.filedefs import DEPRECATED_BIT, KIND_MASK, LOCAL_BIT, FileDefs
from nearsym.core.match import is_qualified, is_subsequence, normalise_qualified
from nearsym.core.model import Kind, Span, Symbol, file_path
from nearsym.core.proximity import directory_distance
from nearsym.index import build
from nearsym.index.keys import KeyCheck, Subsequence, Substring, merged_keys
from nearsym.index.segment import Segment

log = logging.getLogger(__name__)

VERIFY_BUDGET = 8_000
"""Names a query may test in the substring and subsequence tiers."""

_KINDS: dict[int, Kind] = {int(k): k for k in Kind}

QUALIFIED_BUDGET = 4_000
"""Names a qualified query may visit in its name tiers (most are dropped by
the owner, so this bounds the work, not the verification)."""

BULK_SEGMENTS = 16
"""Segments a cold index may leave before its final merge."""

RowFilter = Callable[[Symbol], bool]

MergeInput = list[tuple[dict[str, bytes], list[str]]]
"""Segments to merge elsewhere: each as its parts (`Segment.to_parts`) and
its files' paths, in its file order."""
Merger = Callable[[MergeInput], tuple[dict[str, bytes], list[str]]]
"""Merges segments in another process: the merged parts, and its paths."""

MERGE_ELSEWHERE_ROWS = 100_000
"""Live rows from which a cold index's merge runs in the `merger`."""


class SymbolIndex:
    """Definitions of one workspace folder, replaceable a file at a time.

    Invariant: `_owner` maps each indexed file id to the one segment whose
    rows for it are alive; every other segment's rows for it are dead.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self._paths: list[str | None] = []
        self._fid: dict[str, int] = {}
        self._owner: dict[int, Segment] = {}
        self._segments: list[Segment] = []
        self._count = 0
        self.bulk = False
        """Set during a cold index: segments are merged once, by `compact`."""
        self.generation = 0
        """Bumped by every change, so caches derived from the index can tell
        they are stale."""
        self.merger: Merger | None = None
        """Where a cold index's large merges run (a pool worker; see
        `_merged`), or None: in this process."""

    # -- the file table ----------------------------------------------------------
    def __len__(self) -> int:
        return self._count

    def __contains__(self, path: str) -> bool:
        fid = self._fid.get(path)
        return fid is not None and fid in self._owner

    @property
    def files(self) -> list[str]:
        return [p for f in self._owner if (p := self._paths[f]) is not None]

    @property
    def segments(self) -> list[Segment]:
        return list(self._segments)

    def nbytes(self) -> int:
        """Bytes held by the segments' columns (not the file table)."""
        return sum(s.nbytes() for s in self._segments)

    def _file_id(self, path: str) -> int:
        fid = self._fid.get(path)
        if fid is None:
            fid = self._fid[path] = len(self._paths)
            self._paths.append(path)
        return fid

    def reserve(self, paths: Iterable[str]) -> None:
        """Number `paths` in the file table now (a cold index calls this
        right after its walk). The table's strings and ids live as long as
        the index; made now, they sit together in memory, instead of one
        here and there among the parse results' garbage, where each would
        keep a whole allocator arena of that garbage from being returned
        (measured on the Linux kernel: 98 arenas of 1 MiB for 18 MB of live
        objects when they were made during the parse)."""
        for path in paths:
            self._file_id(path)

    def symbols_of(self, path: str) -> tuple[Symbol, ...]:
        fid = self._fid.get(path)
        seg = self._owner.get(fid) if fid is not None else None
        if seg is None or fid is None:
            return ()
        rows = seg.file_rows(fid)
        return tuple(self._materialize(seg, np.arange(rows.start, rows.stop, dtype=np.uint32)))

    def all_symbols(self) -> Iterator[Symbol]:
        for path in self.files:
            yield from self.symbols_of(path)

    # -- changes -------------------------------------------------------------------
    def replace_file(self, path: str, symbols: Iterable[Symbol] | FileDefs) -> None:
        """Make `symbols` the definitions of `path` (relative), dropping the old."""
        defs = symbols if isinstance(symbols, FileDefs) else FileDefs.from_symbols("", symbols)
        self.replace_files([(path, defs)])

    def replace_files(self, files: Sequence[tuple[str, FileDefs]]) -> None:
        """Replace many files at once: one segment for all of them."""
        if not files:
            return
        latest = {path: defs for path, defs in files}
        for path in latest:
            self._drop(path)
        batch = [(self._file_id(p), d) for p, d in sorted(latest.items())]
        segment = build.from_batch(build.batch_from_files(batch))
        for fid, defs in batch:
            self._owner[fid] = segment
            self._count += len(defs)
        self.generation += 1
        self._add(segment)

    def remove_file(self, path: str) -> None:
        if self._drop(path):
            self.generation += 1
            self._tidy()

    def _drop(self, path: str) -> bool:
        fid = self._fid.get(path)
        if fid is None:
            return False
        seg = self._owner.pop(fid, None)
        if seg is None:
            return False
        rows = seg.file_rows(fid)
        self._count -= len(rows)
        seg.kill(fid)
        return True

    def _add(self, segment: Segment) -> None:
        self._segments.append(segment)
        self._tidy()

    def _tidy(self) -> None:
        """Merge the newest segments while the newer is at least half the
        older; drop empty segments; compact a segment half dead."""
        segs = [s for s in self._segments if s.live_rows > 0 or bool(s.alive.any())]
        if self.bulk:
            # A cold index merges once at the end (`compact`); meanwhile only
            # the segment count is bounded.
            while len(segs) > BULK_SEGMENTS:
                sizes = [a.live_rows + b.live_rows for a, b in itertools.pairwise(segs)]
                self._merge_into(segs, sizes.index(min(sizes)))
        while not self.bulk and len(segs) >= 2 and segs[-1].live_rows * 2 >= segs[-2].live_rows:
            self._merge_into(segs, len(segs) - 2)
        for i, s in enumerate(segs):
            if s.rows >= 4096 and s.live_rows * 2 < s.rows:
                segs[i] = self._merge(s)
        self._segments = segs

    def _merge_into(self, segs: list[Segment], at: int) -> None:
        segs[at : at + 2] = [self._merge(segs[at], segs[at + 1])]

    def _merge(self, *parts: Segment) -> Segment:
        merged = self._merged(parts, self._paths)
        for fid in merged.file_ids.tolist():
            self._owner[fid] = merged
        return merged

    def _merged(self, parts: Sequence[Segment], path_of: Sequence[str | None]) -> Segment:
        """`build.merge(parts, path_of)`; during a cold index, a large one
        runs in `merger`'s process. A merge makes and drops a Python string
        per distinct name (millions on the kernel): made here, that garbage
        grows the allocator's arenas, and the few objects that outlive it
        (the server's own, made meanwhile) keep those arenas from ever being
        returned. Measured on the Linux kernel, a cold index through
        `index_into`: 90 arenas of 1 MiB left after it with the merges here,
        67 with them on a worker (resident 417 MB -> 390 MB)."""
        if (
            self.merger is None
            or not self.bulk
            or sum(p.live_rows for p in parts) < MERGE_ELSEWHERE_ROWS
        ):
            return build.merge(parts, path_of)
        inputs: MergeInput = []
        for seg in parts:
            paths = [path_of[f] for f in seg.file_ids.tolist()]
            alive = seg.alive & np.fromiter((p is not None for p in paths), bool, len(paths))
            inputs.append((seg.to_bytes(alive), [p or "" for p in paths]))
        try:
            merged, order = self.merger(inputs)
            return Segment.from_parts(merged, [self._fid[p] for p in order])
        except Exception as error:  # the pool broke: merge here
            log.warning("merging in a worker failed (%s); merging here", error)
            return build.merge(parts, path_of)

    def compact(self, lock: AbstractContextManager[object] | None = None) -> None:
        """Merge the segments into one (or, when one already holds nine
        tenths of the index, the others into one), and leave bulk mode.

        With `lock` (the one every change to this index holds), the merge
        itself runs outside it, so queries and edits go on meanwhile; files
        changed during the merge keep their newer rows.
        """
        guard = lock if lock is not None else contextlib.nullcontext()
        with guard:
            parts = list(self._segments)
            if len(parts) <= 1 and all(s.live_rows * 2 >= s.rows for s in parts):
                self.bulk = False
                return
            # A segment holding most of the index (a snapshot just loaded)
            # stays as it is; only the small ones around it are merged.
            total = sum(s.live_rows for s in parts)
            big = [s for s in parts if s.live_rows * 10 >= total * 9 and s.live_rows * 2 >= s.rows]
            if big:
                parts = [s for s in parts if s is not big[0]]
                if len(parts) <= 1:
                    self.bulk = False
                    return
            paths = list(self._paths)
        merged = self._merged(parts, paths)
        with guard:
            inputs = {id(p) for p in parts}
            for fid in merged.file_ids.tolist():
                owner = self._owner.get(fid)
                if owner is not None and id(owner) in inputs:
                    self._owner[fid] = merged
                else:
                    merged.kill(fid)  # replaced or removed while merging
            rest = [s for s in self._segments if id(s) not in inputs]
            # Largest first, the order the binary counter keeps.
            self._segments = sorted([merged, *rest], key=lambda s: -s.live_rows)
            self.bulk = False
            self.generation += 1
            self._tidy()

    # -- snapshots -----------------------------------------------------------------
    def snapshot(self, stamps: dict[str, tuple[int, int]]) -> dict[str, Any] | None:
        """The index as one segment's parts plus its file table, for the
        cache; only files with a stamp (size, mtime_ns as parsed) are kept
        alive. None unless the index is one segment (after `compact`)."""
        if len(self._segments) != 1:
            return None
        seg = self._segments[0]
        paths = [self._paths[int(f)] or "" for f in seg.file_ids.tolist()]
        alive = seg.alive.copy()
        sizes: list[int] = []
        mtimes: list[int] = []
        for i, path in enumerate(paths):
            stamp = stamps.get(path)
            if stamp is None or self._owner.get(int(seg.file_ids[i])) is not seg:
                alive[i] = False
                stamp = (-1, -1)
            sizes.append(stamp[0])
            mtimes.append(stamp[1])
        parts = seg.to_parts(alive)
        parts["files"] = marshal.dumps((tuple(paths), tuple(sizes), tuple(mtimes)))
        return parts

    def install(self, parts: dict[str, bytes]) -> dict[str, tuple[int, int]]:
        """Load a snapshot. Files the index already holds (parsed just now,
        near the open file) keep their rows; the snapshot's are dropped.
        Returns the stamp of every file it brought. Raises ValueError on a
        damaged snapshot."""
        try:
            paths, sizes, mtimes = marshal.loads(parts["files"])
            fids = [self._file_id(p) for p in paths]
            segment = Segment.from_parts(parts, fids)
        except (KeyError, EOFError, TypeError) as error:
            raise ValueError(f"damaged snapshot: {error}") from error
        stamps: dict[str, tuple[int, int]] = {}
        for i, fid in enumerate(fids):
            if segment.alive[i] and fid in self._owner:
                segment.kill(fid)
            elif segment.alive[i]:
                self._owner[fid] = segment
                self._count += int(segment.file_start[i + 1] - segment.file_start[i])
                stamps[paths[i]] = (sizes[i], mtimes[i])
        self.generation += 1
        self._add(segment)
        return stamps

    # -- rows -> symbols -----------------------------------------------------------
    def _materialize(self, seg: Segment, rows: NDArray[np.uint32]) -> list[Symbol]:
        if len(rows) == 0:
            return []
        files = np.searchsorted(seg.file_start, rows, side="right") - 1
        paths = self._paths
        path_of = [paths[f] or "" for f in seg.file_ids[files].tolist()]
        names = seg.languages
        language_of = [names[n] for n in seg.file_lang[files].tolist()]
        conts = seg.conts(rows).tolist()
        owner = seg.containers_of(list(set(conts)))
        root = self.root
        kinds = _KINDS
        line_, col_, end_line_, end_col_ = seg.spans_of(rows)
        return [
            Symbol(
                name,
                kinds.get(k & KIND_MASK, Kind.VARIABLE),
                owner[c],
                root,
                path,
                Span(line, col, el, ec),
                language,
                bool(k & LOCAL_BIT),
                bool(k & DEPRECATED_BIT),
            )
            for name, c, path, language, line, col, el, ec, k in zip(
                seg.names_of(seg.entry[rows]),
                conts,
                path_of,
                language_of,
                line_.tolist(),
                col_.tolist(),
                end_line_.tolist(),
                end_col_.tolist(),
                seg.kind[rows].tolist(),
                strict=True,
            )
        ]

    # -- retrieval -----------------------------------------------------------------
    def candidates(self, query: str, width: int, open_file: str | None = None) -> list[Symbol]:
        """The candidate pool for `query`, in retrieval order.

        At most `width` rows, except that every exact name match is included
        whatever the width (they come first). An empty query returns the
        definitions of the files nearest `open_file` (absolute path), or of
        all files in path order when none is open.
        """
        text = "".join(query.split()).lower()
        if not text:
            return self._nearest(open_file, width)
        keep: RowFilter | None = None
        first: RowFilter | None = None
        allowed: list[NDArray[np.bool_]] | None = None
        if is_qualified(query):
            wanted = normalise_qualified(query).strip(".").lower()
            if not wanted:
                return []
            owner, _, text = wanted.rpartition(".")
            if owner:

                def keep(s: Symbol) -> bool:
                    return is_subsequence(wanted, f"{s.container}.{s.name}".lower())

                def first(s: Symbol) -> bool:
                    container = s.container.lower()
                    return container == owner or container.endswith("." + owner)

                allowed = [_owners_like(seg, _bytes(owner)) for seg in self._segments]
        return self._fill(_bytes(text), width, keep, first, allowed)

    def _fill(
        self,
        q: bytes,
        width: int,
        keep: RowFilter | None,
        first: RowFilter | None,
        allowed: list[NDArray[np.bool_]] | None = None,
    ) -> list[Symbol]:
        segs = self._segments
        seen: set[tuple[int, int]] = set()
        # Tier 1: every exact match.
        pool: list[Symbol] = []
        later: list[Symbol] = []  # exact names whose owner is not the query's
        exact = [
            (s_no, seg, [np.arange(r.start, r.stop, dtype=np.uint32)])
            for s_no, seg in enumerate(segs)
            if (r := seg.exact(q))
        ]
        for group in _groups(merged_keys(exact)):
            seen.update(group)
            for s in self._group_rows(group, allowed):
                if keep is None or keep(s):
                    (pool if first is None or first(s) else later).append(s)
        exact_count = len(pool)
        pool.extend(later)
        budget = [VERIFY_BUDGET if allowed is None else QUALIFIED_BUDGET]
        ordered = Subsequence(q)

        # Rows of the later tiers are gathered as (segment, rows) and turned
        # into symbols at the end, a segment's run at a time.
        pieces: list[tuple[int, NDArray[np.uint32]] | list[Symbol]] = []
        count = len(pool)
        tiers: list[tuple[Callable[[Segment], Iterable[NDArray[np.uint32]]], KeyCheck | None]] = [
            (lambda seg: seg.prefix(q), None if allowed is None else KeyCheck()),
            (lambda seg: seg.containing(q), Substring(q)),
            (lambda seg: seg.subsequence(q), ordered),
        ]
        for lookup, check in tiers:
            if count >= width:
                break
            sources = [(s_no, seg, lookup(seg)) for s_no, seg in enumerate(segs)]
            keys = merged_keys(sources, False, check, budget)
            groups = _groups(keys, seen=seen)
            while count < width:
                # A batch of groups at a time: the rows of single-entry groups
                # (nearly all) are looked up together, per segment.
                batch = list(itertools.islice(groups, min(256, max(16, width - count))))
                if not batch:
                    break
                count = self._take(batch, keep, allowed, width, count, seen, pieces)
        pool.extend(self._assemble(pieces))
        if len(pool) < width and keep is None:
            # Tier 5: definitions whose owner holds the query in order (a
            # class's name reaches its members).
            sources = [(s_no, seg, [seg.owners(q)]) for s_no, seg in enumerate(segs)]
            keys = merged_keys(sources, True, ordered, budget)
            taken = {(s.path, s.span, s.name) for s in pool}
            for group in _groups(keys):
                owned: list[Symbol] = []
                for s_no, c in group:
                    seg = segs[s_no]
                    owned.extend(self._materialize(seg, seg.rows_owned(c)))
                owned.sort(key=lambda s: (s.path, s.span.line, s.span.col))
                for s in owned:
                    if (s.path, s.span, s.name) not in taken:
                        pool.append(s)
                if len(pool) >= width:
                    break
        # Invariant: every exact match is kept; otherwise exactly `width` rows
        # at most, so that a narrower pool is a prefix of a wider one.
        return pool[: max(width, exact_count)]

    def _take(
        self,
        batch: list[list[tuple[int, int]]],
        keep: RowFilter | None,
        allowed: list[NDArray[np.bool_]] | None,
        width: int,
        count: int,
        seen: set[tuple[int, int]],
        pieces: list[tuple[int, NDArray[np.uint32]] | list[Symbol]],
    ) -> int:
        """Add `batch`'s rows to `pieces`, group by group, until `count`
        reaches `width` (the group that reaches it is whole); the new count."""
        segs = self._segments
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
            rows_by_seg[s_no] = rows
            end = 0
            for at, n in zip(where, counts, strict=True):
                slot[at] = (s_no, end, end + n)
                end += n
        for at, group in enumerate(batch):
            seen.update(group)
            place = slot.get(at)
            if place is None and keep is None and allowed is None:
                # Rows past the width are cut from the pool: build only those
                # that can stay.
                listed = self._group_rows_first(group, width - count)
                pieces.append(listed)
                count += len(listed)
            elif place is None:
                listed = [s for s in self._group_rows(group, allowed) if keep is None or keep(s)]
                pieces.append(listed)
                count += len(listed)
            elif place[1] == place[2]:
                continue
            elif keep is not None:
                rows_ = rows_by_seg[place[0]][place[1] : place[2]]
                listed = [s for s in self._materialize(segs[place[0]], rows_) if keep(s)]
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
                seg = self._segments[run_seg]
                out.extend(self._materialize(seg, np.concatenate(run) if len(run) > 1 else run[0]))
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
        self, group: list[tuple[int, int]], allowed: list[NDArray[np.bool_]] | None = None
    ) -> list[Symbol]:
        out: list[Symbol] = []
        for s_no, e in group:
            seg = self._segments[s_no]
            rows = seg.rows_of(e)
            if allowed is not None and len(rows):
                rows = rows[allowed[s_no][seg.conts(rows)]]
            out.extend(self._materialize(seg, rows))
        if len(group) > 1:
            out.sort(key=lambda s: (s.path, s.span.line, s.span.col))
        return out

    def _group_rows_first(self, group: list[tuple[int, int]], limit: int) -> list[Symbol]:
        """`_group_rows(group)[:limit]`, building only the symbols kept."""
        segs = self._segments
        parts: list[tuple[int, NDArray[np.uint32]]] = []
        paths: list[str] = []
        ranks_in: list[NDArray[np.int64]] = []
        lines: list[NDArray[np.int64]] = []
        cols: list[NDArray[np.int64]] = []
        for s_no, e in group:
            seg = segs[s_no]
            rows = seg.rows_of(e)
            if not len(rows):
                continue
            files = np.searchsorted(seg.file_start, rows, side="right") - 1
            local, inverse = np.unique(files, return_inverse=True)
            base = len(paths)
            paths.extend(self._paths[int(seg.file_ids[f])] or "" for f in local.tolist())
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
            built = self._materialize(segs[s_no], rows[chosen[at] - lo])
            for i, symbol in zip(at.tolist(), built, strict=True):
                out[i] = symbol
        return [s for s in out if s is not None]

    def _nearest(self, open_file: str | None, width: int) -> list[Symbol]:
        if open_file is None:
            order = sorted(self.files)
        else:

            def distance(path: str) -> tuple[int, int, str]:
                file = file_path(self.root, path)
                same = 0 if os.path.normpath(file) == os.path.normpath(open_file) else 1
                return (same, directory_distance(file, open_file), path)

            order = sorted(self.files, key=distance)
        pool: list[Symbol] = []
        for path in order:
            pool.extend(self.symbols_of(path))
            if len(pool) >= width:
                return pool[:width]
        return pool


def _bytes(text: str) -> bytes:
    """A query's UTF-8 bytes; a lone surrogate (JSON can carry one) passes
    through as bytes no indexed name holds."""
    return text.encode("utf-8", "surrogatepass")


def _owners_like(seg: Segment, owner: bytes) -> NDArray[np.bool_]:
    """Per container of `seg`: does it hold `owner` in order?"""
    ok = np.zeros(seg.container_count, dtype=bool)
    maybe = seg.owners(owner)
    if len(owner) == 1 and (97 <= owner[0] <= 122 or owner[0] == 95):
        ok[maybe] = True  # a letter's (or `_`'s) mask bit is exact
        return ok
    check = Subsequence(owner)
    for at in range(0, len(maybe), 4096):
        ids = maybe[at : at + 4096]
        passing = check.passing(seg.owner_keys(ids))
        ok[ids[np.asarray(passing, dtype=bool)]] = True
    return ok


def _groups(
    keys: Iterator[tuple[int, bytes, int, int]],
    seen: set[tuple[int, int]] | None = None,
) -> Iterator[list[tuple[int, int]]]:
    """Consecutive entries with the same lower-cased name, as one group;
    entries already seen are skipped."""
    group: list[tuple[int, int]] = []
    current: bytes | None = None
    for _, key, s_no, e in keys:
        if seen is not None and (s_no, e) in seen:
            continue
        if key != current:
            if group:
                yield group
            group, current = [], key
        group.append((s_no, e))
    if group:
        yield group
