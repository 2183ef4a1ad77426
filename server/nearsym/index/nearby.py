"""What retrieval takes from the open file: the definitions of the files
nearest it (the empty query's pool), and the names its text mentions
(`retrieval.candidates(mentioned=...)`: those the query starts enter the
pool right after the exact names)."""

from __future__ import annotations

import bisect
import functools
import os
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from nearsym.core.model import Symbol, file_path
from nearsym.core.proximity import directory_distance
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

    @property
    def files(self) -> list[str]: ...

    def symbols_of(self, path: str) -> tuple[Symbol, ...]: ...


def nearest(index: Files, open_file: str | None, width: int) -> list[Symbol]:
    """Up to `width` definitions of the files nearest `open_file` (the open
    file's own first, then by folder distance, then path), or of all files
    in path order when none is open."""
    if open_file is None:
        order = sorted(index.files)
    else:

        def distance(path: str) -> tuple[int, int, str]:
            file = file_path(index.root, path)
            same = 0 if os.path.normpath(file) == os.path.normpath(open_file) else 1
            return (same, directory_distance(file, open_file), path)

        order = sorted(index.files, key=distance)
    pool: list[Symbol] = []
    for path in order:
        pool.extend(index.symbols_of(path))
        if len(pool) >= width:
            return pool[:width]
    return pool


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
