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
  order of the answer, and a pool the whole text fills costs nothing more;
- an owner's base classes (`resolve`): the classes named exactly like the
  owner (`Flask`), read for the bases their source names
  (`extract.bases`), and those classes' bases in turn, by name, up to
  `BASE_DEPTH`; the members of those bases are pulled ahead of the rest
  (`Flask.route` reaches `Scaffold.route`). Reading the bases costs a parse
  of the files of those classes, once per file version (`BaseCache`): the
  index stores no base classes.

Deliberately not handled: a base resolved through imports (a base is any
class of that name: in a tree with two `App`s both count), and bases of
classes outside the workspace.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, Protocol
from weakref import WeakKeyDictionary

import numpy as np
from numpy.typing import NDArray

from nearsym.core.model import Kind, Symbol
from nearsym.core.proximity import directory_distance
from nearsym.core.query import Query
from nearsym.core.where import located, places
from nearsym.core.words import is_subsequence
from nearsym.extract.bases import class_bases, header_bases
from nearsym.extract.languages import language_for_path
from nearsym.index.encoding import ranges, sorted_unique
from nearsym.index.files import SkippedFile, read_regular
from nearsym.index.segment import Segment

RowFilter = Callable[[Symbol], bool]
Owners = Callable[[Segment], NDArray[np.bool_]]
"""Per container of a segment: may its definitions answer?"""


PathOf = Callable[[Segment, int], str]
"""(segment, position of a file in it) -> the file's relative path."""
PathsOf = Callable[[Segment], bytes]
"""segment -> its files' relative paths, in its file order, lower-cased
and joined as `encoding.joined` joins them (`paths_blob`)."""


class Narrow(Protocol):
    """A test of rows cheaper than the row filter, which it never
    contradicts (`PlaceStarts`)."""

    def __call__(
        self, seg: Segment, rows: NDArray[np.uint32], path_of: PathOf
    ) -> NDArray[np.bool_]:
        """Per row of `seg`: may it pass the row filter? (False only where
        the filter is sure to refuse it.)"""
        ...

    def entries(self, seg: Segment, paths: PathsOf) -> NDArray[np.uint32] | None:
        """The entries of `seg` (sorted) one of whose rows may pass; None
        where too many may (`MASKED_ROWS`)."""
        ...


MASKED_ROWS = 100_000
"""A subset of entries (`Narrow.entries`, `owned_entries`) is made only from
at most this many rows, and a quarter of a segment's: it costs a pass over
those rows, and saves the name tiers only the entries it leaves out."""


def _few(seg: Segment, rows: int) -> bool:
    return rows <= MASKED_ROWS and rows * 4 <= seg.rows


_PATHS: WeakKeyDictionary[Segment, tuple[bytes, NDArray[np.int64]]] = WeakKeyDictionary()
"""Per segment: its files' relative paths, lower-cased and newline-joined,
and where each starts (a segment's files never change paths)."""
_PATHS_LOCK = threading.Lock()


def owned_entries(seg: Segment, owners: NDArray[np.bool_]) -> NDArray[np.uint32] | None:
    """The entries of `seg` (sorted) naming a definition in one of the
    containers `owners` marks; None when those hold too many rows
    (`MASKED_ROWS`)."""
    ids = np.flatnonzero(owners)
    held = int((seg.cont_post_start[ids + 1].astype(np.int64) - seg.cont_post_start[ids]).sum())
    if not _few(seg, held):
        return None
    return _entries_of_rows(seg, seg.rows_owned_many(ids))


class Walk(Protocol):
    """What `widen` asks of retrieval (`retrieval._Retrieval`)."""

    def filling(
        self, text: str, width: int, keep: RowFilter | None, narrow: Narrow | None = None
    ) -> list[Symbol]:
        """The tiers' pool of `text` (lower-cased), through `keep`, the rows
        `narrow` refuses dropped before they are built."""
        ...

    def members(self, owners: Owners) -> list[Symbol]:
        """Every definition whose container `owners` marks."""
        ...


BASE_DEPTH = 6
"""Inheritance steps followed from the owner: deeper than any chain in the
golden corpora (sphinx's builders are four deep); a guess bounding the work."""
BASE_CLASSES = 64
"""Classes read for bases per query, at most (a guess bounding the work: a
name like `Base` can have hundreds of same-named classes in a monorepo)."""
CLASSES_PER_NAME = 8
"""Of the classes of one name, those read for bases, nearest the open file
first: reading a class costs a parse of its file (Go's library has 57
structs named `reader`, 0.14 s to read them all), and of many same-named
classes the person means one near where they are."""
MAX_READ_BYTES = 1_000_000
"""Files larger than this are not read for bases (the indexer's default cap)."""

_CLASS_KINDS = frozenset({Kind.CLASS, Kind.INTERFACE, Kind.STRUCT})


def admitting(query: Query, keep: RowFilter | None) -> RowFilter | None:
    """`keep`, narrowed by the query's modifiers (unchanged without any)."""
    if not query.filtered:
        return keep
    accepts = query.accepts
    if keep is None:
        return lambda s: accepts(s.name, s.kind)
    inner = keep
    return lambda s: accepts(s.name, s.kind) and inner(s)


def widen(
    query: Query, width: int, pool: list[Symbol], walk: Walk, shown: int | None = None
) -> list[Symbol]:
    """`pool` (the whole text's), with the inherited members ahead of it and
    the located definitions after it while it is short of `width` (see the
    module note). Every row of `pool` stays (its exact matches may exceed
    the width).

    The located rows rank after every true match of the whole text
    (`core.where.WHERE_CAP`), in this namespace's answer and in any merge
    with others', so when a qualified query's pool (true matches only)
    holds `shown` rows (the answer's offset and limit) no located row
    could be shown and none is looked for: the answer is the same, and `r.tx_m` on the Linux kernel (210 rows of
    its whole text, where every path and class holds an `r`) no longer
    walks the tiers of `tx_m` with a place test per row (15-30 ms)."""
    parts: list[list[Symbol]] = []
    if query.qualified and query.member and query.inherited:
        bases = [b.encode("utf-8", "surrogatepass") for b in query.inherited]
        parts.append(_inherited(query, width, walk.members(lambda seg: _owned_by(seg, bases))))
    parts.append(pool)
    kept = sum(len(p) for p in parts)  # the inherited rows and the pool stay whole
    where, name = query.where, query.name.lower()
    # A whole text that names a definition exactly needs no located rows:
    # they would all rank after it (and finding them costs a walk of the
    # name part's tiers with a test per row).
    # (Only for a qualified query, whose pool holds true matches alone: the
    # typo rows another pool may hold can rank after located ones.)
    enough = shown is not None and query.qualified and len(pool) >= shown
    if where and name and not enough and not any(_exact(query, s) for s in pool):
        wanted = len(where)

        def everywhere(s: Symbol) -> bool:
            return located(where, s.path, s.container) == wanted

        def somewhere(s: Symbol) -> bool:
            return 0 < located(where, s.path, s.container) < wanted

        for test, every in ((everywhere, True), (somewhere, False))[: 2 if wanted > 1 else 1]:
            if sum(len(p) for p in parts) >= width:
                break
            narrow = PlaceStarts(where, every)
            parts.append(walk.filling(name, width, admitting(query, test), narrow))
    return _joined(parts, max(width, kept))


class PlaceStarts:
    """A `Narrow` for the located fillings: the rows where every where-part
    (`every`) or some where-part starts a place of the file's path or of
    the container's chain (`core.where.places`), in any order. `located`
    also asks for the order, so this refuses only rows it would refuse,
    and it tests a file or a container once, not each row: a common name
    part (`reader.posB`) visits thousands of rows, most in files and
    classes no part names. One per filling."""

    def __init__(self, where: tuple[str, ...], every: bool) -> None:
        self.where = where
        self.full = (1 << len(where)) - 1 if every else 0
        self._files: dict[tuple[int, int], int] = {}
        self._conts: dict[tuple[int, int], int] = {}
        self._within: dict[int, NDArray[np.int64]] = {}
        """Per segment (by id), the sorted rows `entries` found: a superset
        of those the test passes, so rows outside it are refused at once
        (a located name part's entries can hold thousands of rows of a
        common name, `status`, in files and classes no part names)."""

    def _bits(self, found: Iterable[str]) -> int:
        found = list(found)
        bits = 0
        for i, part in enumerate(self.where):
            if any(place.startswith(part) for place in found):
                bits |= 1 << i
        return bits

    def __call__(
        self, seg: Segment, rows: NDArray[np.uint32], path_of: PathOf
    ) -> NDArray[np.bool_]:
        within = self._within.get(id(seg))
        if within is None or not len(rows):
            return self._test(seg, rows, path_of)
        if not len(within):
            return np.zeros(len(rows), dtype=np.bool_)
        at = np.minimum(np.searchsorted(within, rows), len(within) - 1)
        inside = within[at] == rows
        out = np.zeros(len(rows), dtype=np.bool_)
        if inside.any():
            out[inside] = self._test(seg, rows[inside], path_of)
        return out

    def _test(self, seg: Segment, rows: NDArray[np.uint32], path_of: PathOf) -> NDArray[np.bool_]:
        tag = id(seg)
        files = np.searchsorted(seg.file_start, rows, side="right") - 1
        conts = seg.conts(rows)
        ufiles, at_file = np.unique(files, return_inverse=True)
        uconts, at_cont = np.unique(conts, return_inverse=True)
        fbits = []
        for f in ufiles.tolist():
            b = self._files.get((tag, f))
            if b is None:
                b = self._files[tag, f] = self._bits(places(path_of(seg, f), ""))
            fbits.append(b)
        missing = [c for c in uconts.tolist() if (tag, c) not in self._conts]
        if missing:
            for c, name in seg.containers_of(missing).items():
                self._conts[tag, c] = self._bits(name.lower().split(".")) if name else 0
        cbits = [self._conts[tag, c] for c in uconts.tolist()]
        bits = (
            np.asarray(fbits, dtype=np.int64)[at_file] | np.asarray(cbits, dtype=np.int64)[at_cont]
        )
        if self.full:
            ok: NDArray[np.bool_] = bits == self.full
        else:
            ok = bits != 0
        return ok

    def entries(self, seg: Segment, paths_of: PathsOf) -> NDArray[np.uint32] | None:
        """The entries of `seg` (sorted) naming a row in a file or a
        container where every where-part (`every`), or some, starts a
        place: a superset of what `__call__` passes (a part is looked for
        after any `/` or `.` of the path, and a file and a container may
        each hold some of the parts). None when those rows are too many
        (`MASKED_ROWS`)."""
        paths, starts = _paths_of(seg, paths_of)
        rows: NDArray[np.int64] | None = None
        for part in self.where:
            if not part:
                return None
            needle = part.encode("utf-8", "surrogatepass")
            files = _starting(paths, starts, needle, b"\n/.")
            conts = _starting(seg.cont_lower, seg.cont_off, needle, b"\n.")
            if files is None or conts is None:
                return None
            first = seg.file_start[files]
            counts = seg.file_start[files + 1] - first
            if not _few(seg, int(counts.sum())):
                return None
            found = sorted_unique(
                np.concatenate((ranges(first, counts), seg.rows_owned_many(conts)))
            )
            if rows is None:
                rows = found
            elif self.full:
                rows = np.intersect1d(rows, found, assume_unique=True)
            else:
                rows = sorted_unique(np.concatenate((rows, found)))
            if not _few(seg, len(rows)):
                return None
        if rows is None:
            return None
        self._within[id(seg)] = rows
        return _entries_of_rows(seg, rows)


def _entries_of_rows(seg: Segment, rows: NDArray[Any]) -> NDArray[np.uint32]:
    """The entries naming `rows` of `seg`, sorted, each once."""
    return np.asarray(sorted_unique(seg.entry[rows]), dtype=np.uint32)


def paths_blob(paths: Callable[[], list[str]], stored: bytes | None = None) -> bytes:
    """The `paths()` lower-cased and joined as `encoding.joined` joins
    them, in UTF-8 with lone surrogates passed through (an undecodable
    file name; the query's parts are encoded alike). A newline in a path
    would shift every key after it: it becomes a `/`, which can only admit
    more rows.

    `stored` is the same paths as the file table holds them (a NUL after
    each, `FileTable.paths_bytes`): when it is ASCII, the blob is made from
    it in C and `paths` is not called (the Linux kernel's 56,000 paths:
    60-70 ms in Python, which the first qualified query after a start
    paid)."""
    if stored is not None and stored.isascii():
        return b"\n" + stored.replace(b"\n", b"/").replace(b"\0", b"\n").lower()
    listed = paths()
    text = "\n".join("/".join(p.lower().splitlines()) for p in listed)
    return ("\n" + text + "\n").encode("utf-8", "surrogatepass") if listed else b"\n"


def _paths_of(seg: Segment, paths_of: PathsOf) -> tuple[bytes, NDArray[np.int64]]:
    """`seg`'s entry in `_PATHS`, made on first use."""
    with _PATHS_LOCK:
        got = _PATHS.get(seg)
    if got is None:
        blob = paths_of(seg)
        starts = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 10).astype(np.int64)
        got = (blob, starts)
        with _PATHS_LOCK:
            _PATHS[seg] = got
    return got


_MOST_STARTS = 20_000
"""Matches `_starting` reads before it gives up (a part so common that
a mask would hold most rows)."""
_FEW_STARTS = 1_000
"""Occurrences (as `bytes.count` counts them) up to which `_starting`
finds them one `find` at a time: fewer steps than numpy's passes over
the whole blob (a guess; both give the same keys)."""


def _starting(
    blob: bytes, offsets: NDArray[Any], needle: bytes, after: bytes
) -> NDArray[np.int64] | None:
    """The keys of a newline-joined blob (`encoding.joined`, newlines at
    `offsets`) where `needle` follows one of the bytes `after`, each once;
    None past `_MOST_STARTS` occurrences of it (overlapping ones counted).

    The occurrences are found with numpy over the blob's bytes, not with a
    `find` per occurrence: a one-letter part (`r.tx_m`) occurs over 20,000
    times in the Linux kernel's paths, and reading that many took 5 ms a
    blob to give up. (A needle holding a newline, never a where-part, and
    one of few occurrences are read occurrence by occurrence,
    `_starting_slowly`.)"""
    if not needle or b"\n" in needle:
        return _starting_slowly(blob, offsets, needle, after)
    count = blob.count(needle)  # non-overlapping: a lower bound
    if count > _MOST_STARTS:
        return None
    if count <= _FEW_STARTS:
        return _starting_slowly(blob, offsets, needle, after)
    data = np.frombuffer(blob, dtype=np.uint8)
    n = len(needle)
    found = np.flatnonzero(data[: max(0, len(data) - n + 1)] == needle[0])
    for k in range(1, n):
        if not len(found):
            break
        found = found[data[found + k] == needle[k]]
    if len(found) > _MOST_STARTS:
        return None
    # The blob starts with a newline, which the needle does not hold: every
    # occurrence has a byte before it.
    at = found[np.isin(data[found - 1], np.frombuffer(after, dtype=np.uint8))]
    if not len(at):
        return np.zeros(0, dtype=np.int64)
    keys = np.searchsorted(offsets, at.astype(offsets.dtype), side="right") - 1
    return np.asarray(sorted_unique(keys), dtype=np.int64)


def _starting_slowly(
    blob: bytes, offsets: NDArray[Any], needle: bytes, after: bytes
) -> NDArray[np.int64] | None:
    """`_starting`, one `find` per occurrence."""
    at: list[int] = []
    found = blob.find(needle)
    for _ in range(_MOST_STARTS):
        if found <= 0:
            break
        if blob[found - 1] in after:
            at.append(found)
        found = blob.find(needle, found + 1)
    else:
        if found > 0:
            return None
    if not at:
        return np.zeros(0, dtype=np.int64)
    keys = np.searchsorted(offsets, np.asarray(at, dtype=offsets.dtype), side="right") - 1
    return np.asarray(sorted_unique(keys), dtype=np.int64)


def _inherited(query: Query, width: int, members: list[Symbol]) -> list[Symbol]:
    """The base classes' members whose name holds the member in order, the
    exact name first, then by length, path and position; `width` at most."""
    member = query.member
    kept = [
        s
        for s in members
        if is_subsequence(member, s.name.lower())
        and (not query.filtered or query.accepts(s.name, s.kind))
    ]
    kept.sort(key=lambda s: (s.name.lower() != member, len(s.name), s.path, s.span.line))
    return kept[:width]


def _exact(query: Query, s: Symbol) -> bool:
    """Whether `s` is named exactly by the whole text (case aside)."""
    if not query.qualified:
        return s.name.lower() == query.folded
    full = f"{s.container}.{s.name}".lower() if s.container else s.name.lower()
    target = query.target.lower()
    return full == target or full.endswith("." + target)


def _owned_by(seg: Segment, bases: list[bytes]) -> NDArray[np.bool_]:
    """Per container of `seg`: is its last part one of `bases` (lower-cased)?"""
    ok = np.zeros(seg.container_count, dtype=bool)
    for base in bases:
        maybe = seg.owners(base)
        for at in range(0, len(maybe), 4096):
            ids = maybe[at : at + 4096]
            keys = seg.owner_keys(ids)
            hit = [k == base or k.endswith(b"." + base) for k in keys]
            ok[ids[np.asarray(hit, dtype=bool)]] = True
    return ok


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


class Classes(Protocol):
    """What base resolution reads of an index: the classes of one name."""

    def candidates(
        self, query: Query | str, width: int, open_file: str | None = None
    ) -> list[Symbol]: ...


class BaseCache:
    """The base names of classes, per file version (path, size,
    modification time); at most `size` files, least recently used first out.
    Thread-safe: the server answers queries on a pool of threads.

    A class is read from its header alone where its language allows
    (`extract.bases.header_bases`: a few hundred bytes parsed), otherwise
    with every class of its file (`class_bases`, one parse of the file): a
    qualified query whose owner's bases run through large test modules
    (`UnicodeTest.test` in CPython's library) read 21 whole files, 170 ms,
    before its first answer."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._files: OrderedDict[
            str, tuple[tuple[int, int], dict[tuple[int, str], tuple[str, ...]], bool]
        ]
        self._files = OrderedDict()
        """file -> (version, the classes read so far, whether all were)."""
        self._lock = threading.Lock()

    def bases(self, symbol: Symbol) -> tuple[str, ...]:
        """The base names `symbol`'s class names, as written; empty when its
        file is gone, unreadable, too large, or of a language without them."""
        file = symbol.file
        spec = language_for_path(file)
        if spec is None:
            return ()
        key = (symbol.span.line, symbol.name)
        try:
            st = os.stat(file)
        except OSError:
            return ()
        version = (st.st_size, st.st_mtime_ns)
        with self._lock:
            got = self._files.get(file)
            if got is not None and got[0] == version:
                self._files.move_to_end(file)
                if got[2] or key in got[1]:
                    return got[1].get(key, ())
        try:
            source, st = read_regular(file, MAX_READ_BYTES)
        except (OSError, SkippedFile):
            return ()
        version = (st.st_size, st.st_mtime_ns)
        complete = False
        try:
            alone = header_bases(source, symbol.span.line, symbol.name, spec)
            if alone is not None:
                classes = {key: alone}
            else:
                classes, complete = class_bases(source, spec), True
        except (ImportError, ValueError):  # a grammar missing or unloadable
            classes, complete = {}, True
        with self._lock:
            got = self._files.get(file)
            if got is not None and got[0] == version and not complete:
                got[1].update(classes)
                classes, complete = got[1], got[2]
            self._files[file] = (version, classes, complete)
            self._files.move_to_end(file)
            while len(self._files) > self.size:
                self._files.popitem(last=False)
        return classes.get(key, ())


BASES = BaseCache()
"""The process's base names, shared by every namespace and query."""


def resolve(
    query: Query,
    indexes: Sequence[Classes],
    open_file: str | None = None,
    *,
    cache: BaseCache = BASES,
) -> Query:
    """`query` with `inherited` filled in: the lower-cased names of the base
    classes, at any depth up to `BASE_DEPTH`, of the classes named exactly
    like its owner's last part (`Flask.route` -> `app`, `scaffold`), at most
    `CLASSES_PER_NAME` of each name, nearest `open_file` first (absolute
    path; without one, in path order). Unchanged for a query without an
    owner."""
    if not (query.qualified and query.owner and query.member):
        return query
    owner = query.owner.rpartition(".")[2]
    if not owner:
        return query
    seen = {owner}
    frontier = [owner]
    read = 0
    for _ in range(BASE_DEPTH):
        found: list[str] = []
        for name in frontier:
            classes = [
                s
                for index in indexes
                for s in index.candidates(Query.parse("'" + name), 0)
                if s.kind in _CLASS_KINDS
            ]
            if len(classes) > CLASSES_PER_NAME:
                classes = nearest(classes, open_file)[:CLASSES_PER_NAME]
            for s in classes:
                if read >= BASE_CLASSES:
                    break
                read += 1
                for base in cache.bases(s):
                    low = base.lower()
                    if low not in seen:
                        seen.add(low)
                        found.append(low)
        if not found:
            break
        frontier = found
    inherited = frozenset(seen - {owner})
    return replace(query, inherited=inherited) if inherited else query


def nearest(classes: list[Symbol], open_file: str | None) -> list[Symbol]:
    """`classes` nearest `open_file` first (folder steps), then by root,
    path and position."""

    def order(s: Symbol) -> tuple[int, str, str, int]:
        far = directory_distance(s.file, open_file) if open_file else 0
        return (far, s.root, s.path, s.span.line)

    return sorted(classes, key=order)
