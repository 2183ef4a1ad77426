"""What retrieval takes from the open file: the definitions of the files
nearest it (the empty query's pool), and the names its text mentions
(`retrieval.candidates(mentioned=...)`: those the query starts enter the
pool right after the exact names)."""

from __future__ import annotations

import bisect
import functools
import os
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from nearsym.core.model import Symbol, file_path
from nearsym.core.proximity import folder_parts, parts_distance
from nearsym.index.encoding import U32
from nearsym.index.segment import Segment
from nearsym.index.subset import Within, exact_many

ONE_BY_ONE = 32
"""Keys up to which `entries_of` bisects each alone; past it, all at once
in numpy (an open file of 31,000 identifiers, `n` typed: 11 ms more than
without it one by one, on the Linux kernel's index)."""


class Files(Protocol):
    """What `nearest` reads of an index (`store.SymbolIndex`)."""

    root: str
    files_generation: int

    @property
    def files(self) -> list[str]: ...

    def symbols_of(self, path: str) -> tuple[Symbol, ...]: ...


FOLDERS_CACHED = 4
"""Indexes whose folders `_folders_of` keeps (one per workspace folder that
answers empty queries), each only as its files stand now."""

_Folders = dict[str, tuple[tuple[str, ...], str]]
"""Folder (relative, `/`-separated) -> its parts, and its files' names in
order joined by NULs (a tenth of the memory of the paths as strings)."""

_cached: dict[str, tuple[int, _Folders]] = {}
"""By root: the `files_generation` the folders were listed at, and them."""
_cached_lock = threading.Lock()


def _folders_of(index: Files) -> _Folders:
    """The index's files by folder, made again only when a file enters or
    leaves the index (`files_generation`; about 1.9 MB and 30-60 ms for the
    Linux kernel's 56,000 files in 3,700 folders)."""
    with _cached_lock:
        found = _cached.get(index.root)
    if found is not None and found[0] == index.files_generation:
        return found[1]
    generation = index.files_generation
    names: dict[str, list[str]] = {}
    for path in index.files:
        folder, _, name = path.rpartition("/")
        names.setdefault(folder, []).append(name)
    folders = {
        folder: (
            tuple(sys.intern(p) for p in folder.split("/")) if folder else (),
            "\0".join(sorted(files)),  # a folder's paths in path order
        )
        for folder, files in names.items()
    }
    with _cached_lock:
        if index.root not in _cached and len(_cached) >= FOLDERS_CACHED:
            _cached.clear()
        _cached[index.root] = (generation, folders)
    return folders


def nearest(index: Files, open_file: str | None, width: int) -> list[Symbol]:
    """Up to `width` definitions of the files nearest `open_file` (the open
    file's own first, then by folder distance, then path), or of all files
    in path order when none is open.

    The distance is a folder's, so it is measured once a folder, and the
    files are listed a distance at a time, nearest first, until the pool
    is full: the Linux kernel's 56,000 files, sorted by a distance measured
    file by file, took 270-470 ms for every empty query with a file open."""
    if open_file is None:
        order: Iterable[str] = sorted(index.files)
    else:
        order = _by_distance(index, open_file)
    pool: list[Symbol] = []
    for path in order:
        pool.extend(index.symbols_of(path))
        if len(pool) >= width:
            return pool[:width]
    return pool


def _by_distance(index: Files, open_file: str) -> Iterator[str]:
    """The index's files in the order of (not the open file, folder distance
    from it, path), listed a distance at a time as they are read."""
    folders = _folders_of(index)
    root = folder_parts(file_path(index.root, "_"))
    here = folder_parts(open_file)
    inside = here[: len(root)] == root
    below = here[len(root) :]
    # Outside the root, every folder of the index meets `here` where the
    # root does.
    shared = (len(root) + len(here) - parts_distance(root, here)) // 2
    at: dict[int, list[str]] = {}
    for folder, (parts, _) in folders.items():
        if inside:
            distance = parts_distance(parts, below)
        else:
            distance = len(root) + len(parts) + len(here) - 2 * shared
        at.setdefault(distance, []).append(folder)
    own = os.path.normpath(open_file)
    for distance in sorted(at):
        paths = [
            f"{folder}/{name}" if folder else name
            for folder in at[distance]
            for name in folders[folder][1].split("\0")
        ]
        if len(at[distance]) > 1:
            paths.sort()
        if distance == 0:
            mine = [p for p in paths if os.path.normpath(file_path(index.root, p)) == own]
            paths = mine + [p for p in paths if p not in mine]
        yield from paths


@functools.lru_cache(maxsize=4)
def _folded(names: frozenset[str]) -> list[str]:
    """`names` lower-cased, sorted, each once (one open file's at a time)."""
    return sorted({n.lower() for n in names})


def starting_with(names: frozenset[str], text: str) -> list[bytes]:
    """The keys (lower-case UTF-8, as a segment's) of `names` that start
    with `text` (lower-cased) and go on."""
    folded = _folded(names)
    lo = bisect.bisect_left(folded, text)
    hi = bisect.bisect_left(folded, text + "\U0010ffff", lo)
    return [n.encode("utf-8", "surrogatepass") for n in folded[lo:hi] if n != text]


def entries_of(
    seg: Segment, keys: Sequence[bytes], within: Within | None
) -> list[NDArray[np.uint32]]:
    """The entries of `seg` equal to one of `keys` (sorted), of `within`
    only when given, shortest first: one chunk, as a tier's lookup gives."""
    if len(keys) > ONE_BY_ONE:
        whole = range(len(seg))
        spans = exact_many(seg, list(keys), [whole] * len(keys))
    else:
        spans = [seg.exact(k) for k in keys]
    found = [np.arange(r.start, r.stop, dtype=U32) for r in spans if r]
    if not found:
        return []
    ids = np.concatenate(found)
    if within is not None:
        ids = within.of(ids)
    return [ids[seg._shortest_first(ids)]] if len(ids) else []
