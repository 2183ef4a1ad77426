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

Candidate retrieval by match tier reads the segments through `retrieval`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import logging
import marshal
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nearsym.core.filedefs import DEPRECATED_BIT, KIND_MASK, LOCAL_BIT, FileDefs
from nearsym.core.model import Kind, Span, Symbol
from nearsym.core.query import Query
from nearsym.index import build, retrieval
from nearsym.index.encoding import sorted_unique
from nearsym.index.filetable import FileTable, Paths
from nearsym.index.mentions import MentionCounts, name_keys
from nearsym.index.segment import Segment
from nearsym.index.skipped import SkippedFiles

log = logging.getLogger(__name__)

_VERSIONS = itertools.count(1)
"""Every index's generations are drawn from one count: a cache keyed by a
folder's root and a generation never takes a new index of the same folder
(removed and added again) for the one it was made from."""

_KINDS: dict[int, Kind] = {int(k): k for k in Kind}

BULK_SEGMENTS = 16
"""Segments a cold index may leave before its final merge."""

MergeInput = list[tuple[dict[str, bytes], list[str]]]
"""Segments to merge elsewhere: each as its parts (`Segment.to_parts`) and
its files' paths, in its file order."""
Merger = Callable[[MergeInput], tuple[dict[str, bytes], list[str]]]
"""Merges segments in another process: the merged parts, and its paths."""

MERGE_ELSEWHERE_ROWS = 100_000
"""Live rows from which a cold index's merge runs in the `merger`."""


class _Owners:
    """The segment holding each file's live rows, by file id: a list, not
    a dict, whose keys would be an int object per file, made during a cold
    index one here and one there among its garbage (on the Linux kernel's
    cold server they were most of what 40 nearly empty allocator arenas
    held)."""

    __slots__ = ("_by_fid",)

    def __init__(self) -> None:
        self._by_fid: list[Segment | None] = []

    def get(self, fid: int) -> Segment | None:
        by_fid = self._by_fid
        return by_fid[fid] if 0 <= fid < len(by_fid) else None

    def __contains__(self, fid: int) -> bool:
        return self.get(fid) is not None

    def __setitem__(self, fid: int, segment: Segment) -> None:
        by_fid = self._by_fid
        if fid >= len(by_fid):
            by_fid.extend([None] * (fid + 1 - len(by_fid)))
        by_fid[fid] = segment

    def pop(self, fid: int) -> Segment | None:
        segment = self.get(fid)
        if segment is not None:
            self._by_fid[fid] = None
        return segment

    def fids(self) -> list[int]:
        return [f for f, s in enumerate(self._by_fid) if s is not None]


class SymbolIndex:
    """Definitions of one workspace folder, replaceable a file at a time.

    Invariant: `_owner` maps each indexed file id to the one segment whose
    rows for it are alive; every other segment's rows for it are dead.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self._files = FileTable()
        self._owner = _Owners()
        self._segments: list[Segment] = []
        self._count = 0
        self.bulk = False
        """Set during a cold index: segments are merged once, by `compact`."""
        self._installed = 0
        """`id()` of the segment the last snapshot was loaded into (`install`):
        the one segment `compact` may leave as it is."""
        self.generation = next(_VERSIONS)
        """Renewed by every change, so caches derived from the index can tell
        they are stale."""
        self.files_generation = next(_VERSIONS)
        """Renewed when a file enters or leaves the index (not when one it
        holds is parsed again): for what is derived from its paths alone."""
        self.merger: Merger | None = None
        """Where a cold index's large merges run (a pool worker; see
        `_merged`), or None: in this process."""
        self.mentions = MentionCounts()
        """How many files mention each name (`mentions`)."""
        self.skipped = SkippedFiles()
        """The files the walks found here and indexing passed over, at the
        stamp they had: not read again while they keep it (a snapshot holds
        them too)."""

    # -- the file table ----------------------------------------------------------
    def __len__(self) -> int:
        return self._count

    def __contains__(self, path: str) -> bool:
        fid = self._files.get(path)
        return fid is not None and fid in self._owner

    @property
    def files(self) -> list[str]:
        paths = self._files.all()
        return [paths[f] for f in self._owner.fids()]

    @property
    def segments(self) -> list[Segment]:
        return list(self._segments)

    def nbytes(self) -> int:
        """Bytes held by the segments' columns and the mention counts (not
        the file table)."""
        return sum(s.nbytes() for s in self._segments) + self.mentions.nbytes

    def reserve(self, paths: Iterable[str]) -> None:
        """Number `paths` in the file table now (a cold index calls this
        right after its walk), into the table's blob (`filetable`): the
        walk's strings are not kept. Ids made during the parse, one here and
        one there among the parse results' garbage, each kept a whole
        allocator arena of that garbage from being returned (measured on the
        Linux kernel: 98 arenas of 1 MiB for 18 MB of live objects)."""
        self._files.extend(paths)

    def symbols_of(self, path: str, kinds: Collection[Kind] | None = None) -> tuple[Symbol, ...]:
        """The definitions of `path` (relative), in file order; with `kinds`,
        only those of these kinds (the others are not built)."""
        fid = self._files.get(path)
        seg = self._owner.get(fid) if fid is not None else None
        if seg is None or fid is None:
            return ()
        span = seg.file_rows(fid)
        rows = np.arange(span.start, span.stop, dtype=np.uint32)
        if kinds is not None:
            codes = np.array([int(k) for k in kinds], dtype=np.uint8)
            rows = rows[np.isin(seg.kind[rows] & KIND_MASK, codes)]
        return tuple(self.materialize(seg, rows))

    def definition_count(self, path: str) -> int:
        """How many definitions `path` holds, without building them."""
        fid = self._files.get(path)
        seg = self._owner.get(fid) if fid is not None else None
        if seg is None or fid is None:
            return 0
        return len(seg.file_rows(fid))

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
        entered = False
        for path, defs in latest.items():
            entered |= not self._drop(path)
            self.mentions.add(path, defs.mentions)
        if entered:
            self.files_generation = next(_VERSIONS)
        batch = [(self._files.id_of(p), d) for p, d in sorted(latest.items())]
        segment = build.from_batch(build.batch_from_files(batch))
        for fid, defs in batch:
            self._owner[fid] = segment
            self._count += len(defs)
        self.generation = next(_VERSIONS)
        self._add(segment)

    def remove_file(self, path: str) -> None:
        self.mentions.remove(path)
        if self._drop(path):
            self.generation = next(_VERSIONS)
            self.files_generation = next(_VERSIONS)
            self._tidy()

    def _drop(self, path: str) -> bool:
        fid = self._files.get(path)
        if fid is None:
            return False
        seg = self._owner.pop(fid)
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
        merged = self._merged(parts, self._files)
        for fid in merged.file_ids.tolist():
            self._owner[fid] = merged
        return merged

    def _merged(
        self,
        parts: Sequence[Segment],
        path_of: Paths,
        meanwhile: Callable[[], None] = lambda: None,
    ) -> Segment:
        """`build.merge(parts, path_of)`, calling `meanwhile` once before it
        ends; during a cold index, a large one runs in `merger`'s process
        (and `meanwhile` runs here while it does). A merge makes and drops a
        Python string per distinct name (millions on the kernel): made here,
        that garbage grows the allocator's arenas, and the few objects that
        outlive it (the server's own, made meanwhile) keep those arenas from
        ever being returned. Measured on the Linux kernel, a cold index
        through `index_into`: 90 arenas of 1 MiB left after it with the
        merges here, 67 with them on a worker (resident 417 MB -> 390 MB)."""
        merger = self.merger
        if (
            merger is None
            or not self.bulk
            or sum(p.live_rows for p in parts) < MERGE_ELSEWHERE_ROWS
        ):
            meanwhile()
            return build.merge(parts, path_of)
        inputs: MergeInput = []
        fid_of: dict[str, int] = {}  # a path has one id, whichever segment
        for seg in parts:
            fids = seg.file_ids.tolist()
            paths = [path_of[f] for f in fids]
            fid_of.update((p, f) for p, f in zip(paths, fids, strict=True) if p is not None)
            alive = seg.alive & np.fromiter((p is not None for p in paths), bool, len(paths))
            inputs.append((seg.to_bytes(alive), [p or "" for p in paths]))
        # The merger waits on its process from a thread of its own, so
        # `meanwhile` has this one.
        with concurrent.futures.ThreadPoolExecutor(1, "nearsym-merge") as waiter:
            shipped = waiter.submit(merger, inputs)
            del inputs
            meanwhile()
            try:
                merged, order = shipped.result()
                return Segment.from_parts(merged, [fid_of[p] for p in order])
            except Exception as error:  # the pool broke: merge here
                log.warning("merging in a worker failed (%s); merging here", error)
                return build.merge(parts, path_of)

    def compact(self, lock: AbstractContextManager[object] | None = None) -> None:
        """Merge the segments into one (or, when one already holds nine
        tenths of the index, the others into one), and leave bulk mode;
        then keep only the mention counts of definition names.

        With `lock` (the one every change to this index holds), the merge
        itself runs outside it, so queries and edits go on meanwhile; files
        changed during the merge keep their newer rows. The mention counts'
        keys are read from the names of the segments being merged while the
        merge runs in the `merger` (the kernel's 3 million names took 6 s
        after it), and held against the names of segments added since."""
        guard = lock if lock is not None else contextlib.nullcontext()
        read: list[Segment] = []
        wanted: list[NDArray[np.uint32]] = []

        def read_names() -> None:
            with guard:
                if not self.mentions.prune_due():
                    return
                read.extend(self._segments)
            wanted.append(name_keys(n for seg in read for n in seg.entry_names()))

        merged = self._compact(lock, read_names)
        if not wanted:
            return
        with guard:
            # The merged segment's names are those read; a segment added
            # since (an edit during the merge) may name others.
            seen = {id(s) for s in read} | {id(merged)}
            added = [s for s in self._segments if id(s) not in seen]
            keys = wanted[0]
            if added:
                more = (n for seg in added for n in seg.entry_names())
                keys = sorted_unique(np.concatenate((keys, name_keys(more))))
            self.mentions.prune_to(keys)

    def _compact(
        self, lock: AbstractContextManager[object] | None, meanwhile: Callable[[], None]
    ) -> Segment | None:
        """`compact`'s merge; the segment it made, if any."""
        guard = lock if lock is not None else contextlib.nullcontext()
        with guard:
            parts = list(self._segments)
            if len(parts) <= 1 and all(s.live_rows * 2 >= s.rows for s in parts):
                self.bulk = False
                parts = []
            # A snapshot just loaded that holds most of the index stays as
            # it is (it is on disk already); only the small segments around
            # it are merged. Any other index is merged whole, so that it
            # can be written as a snapshot: a restart that found none
            # (loaded file by file: 23 s on the Linux kernel, against 2 s
            # from a snapshot) kept its big segment and a small one, and so
            # never wrote one for the next start either.
            total = sum(s.live_rows for s in parts)
            big = [
                s
                for s in parts
                if id(s) == self._installed
                and s.live_rows * 10 >= total * 9
                and s.live_rows * 2 >= s.rows
            ]
            if big:
                parts = [s for s in parts if s is not big[0]]
                if len(parts) <= 1:
                    self.bulk = False
                    parts = []
            paths = self._files  # append-only: read as it is
        if not parts:
            meanwhile()
            return None
        merged = self._merged(parts, paths, meanwhile)
        with guard:
            inputs = {id(p) for p in parts}
            if self._installed in inputs:  # merged away: its id may be reused
                self._installed = 0
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
            self.generation = next(_VERSIONS)
            self._tidy()
        return merged

    # -- snapshots -----------------------------------------------------------------
    def snapshot(
        self, stamps: dict[str, tuple[int, int]], settled_before: int | None = None
    ) -> dict[str, Any] | None:
        """The index as one segment's parts plus its file table, for the
        cache; only files with a stamp (size, mtime_ns as parsed) are kept
        alive, and only skipped files changed before `settled_before`
        (`SkippedFiles.to_bytes`). None unless the index is one segment
        (after `compact`)."""
        if len(self._segments) != 1:
            return None
        seg = self._segments[0]
        paths = self._files.many(seg.file_ids)
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
        parts.update(self.mentions.to_parts())
        parts["files"] = marshal.dumps((tuple(paths), tuple(sizes), tuple(mtimes)))
        parts["skipped"] = self.skipped.to_bytes(settled_before)
        return parts

    def install(
        self, parts: dict[str, bytes], held: Mapping[str, tuple[int, int]] | None = None
    ) -> dict[str, tuple[int, int]]:
        """Load a snapshot. A file the index already holds (parsed just now,
        near the open file) keeps its rows, and the snapshot's are dropped,
        unless `held` gives it the snapshot's own stamp (size, mtime_ns): the
        same text, so the snapshot's rows stand and the parsed ones go, and
        the index stays one segment (the Linux kernel's restart kept the
        open folder's 803 rows apart from the snapshot's 4 million for the
        whole session, a second segment every query searched). Returns the
        stamp of every file it brought. Raises ValueError on a damaged
        snapshot."""
        try:
            # True of the files whatever the rest holds; none in an older snapshot.
            self.skipped.take(parts.get("skipped", b""))
            paths, sizes, mtimes = marshal.loads(parts["files"])
            fids = self._files.extend(paths)
            segment = Segment.from_parts(parts, fids)
            self.mentions.install(parts)
        except (KeyError, EOFError, TypeError) as error:
            raise ValueError(f"damaged snapshot: {error}") from error
        held = held or {}
        stamps: dict[str, tuple[int, int]] = {}
        for i, fid in enumerate(fids):
            if not segment.alive[i]:
                continue
            stamp = (sizes[i], mtimes[i])
            if fid in self._owner:
                if held.get(paths[i]) != stamp:
                    segment.kill(fid)
                    continue
                self._drop(paths[i])
                self.mentions.remove(paths[i])  # the snapshot's counts hold its own
            self._owner[fid] = segment
            self._count += int(segment.file_start[i + 1] - segment.file_start[i])
            stamps[paths[i]] = stamp
        self.generation = next(_VERSIONS)
        self.files_generation = next(_VERSIONS)
        self._add(segment)
        self._installed = id(segment)
        return stamps

    def mention_counts(self, names: Sequence[str]) -> list[int]:
        """How many files mention each of `names` (`mentions`)."""
        return self.mentions.counts(names)

    # -- rows -> symbols -----------------------------------------------------------
    def file_path(self, fid: int) -> str:
        """The relative path of file `fid` ("" once it is gone)."""
        return self._files[fid] if 0 <= fid < len(self._files) else ""

    def file_paths(self, fids: NDArray[Any]) -> list[str]:
        """The relative paths of files `fids` (ids this index gave)."""
        return self._files.many(fids)

    def file_paths_bytes(self, fids: NDArray[Any]) -> bytes | None:
        """`FileTable.paths_bytes` of `fids`."""
        return self._files.paths_bytes(fids)

    def materialize(self, seg: Segment, rows: NDArray[np.uint32]) -> list[Symbol]:
        """The definitions at `rows` of `seg`, in that order."""
        if len(rows) == 0:
            return []
        files = np.searchsorted(seg.file_start, rows, side="right") - 1
        path_of = self._files.many(seg.file_ids[files].tolist())
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
    def candidates(
        self,
        query: Query | str,
        width: int,
        open_file: str | None = None,
        shown: int | None = None,
        mentioned: frozenset[str] = frozenset(),
    ) -> list[Symbol]:
        """The candidate pool for `query` (a `str` is parsed here, for callers
        that hold the text alone), in retrieval order: see
        `retrieval.candidates`."""
        parsed = Query.parse(query) if isinstance(query, str) else query
        return retrieval.candidates(self, parsed, width, open_file, shown, mentioned)
