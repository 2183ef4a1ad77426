"""The file table of an index: each file's relative path by its id.

Ids are dense, given in order and never reused; a path never changes.
Most paths live in one blob (NUL-separated: no path holds a NUL) with
their offsets and a sorted column of their hashes, not as a Python string
each. The strings a cold index's walk makes sit one here and one there
among the walk's and the parse's garbage, and each keeps a pool of the
allocator (and so its 1 MiB arena) from being returned: on the Linux
kernel's cold server, 56,000 path strings held 4.7 MB in 20 arenas that
were three quarters free. The paths added since the last `freeze` (a
file created while the server runs) are kept as strings until the next.

Invariant: `_state` is replaced whole, never changed in place except by
appending to its `recent` list and dict, so a reader on another thread
(a merge, a query) that took it once sees one consistent table.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

ENCODING = "utf-8"
ERRORS = "surrogatepass"
"""Any `str` survives the blob, lone surrogates (undecodable file names) too."""

path_hash = hash
"""A path's key in the hash column (a module attribute: tests make it collide)."""

FREEZE_AT = 4096
"""Recent paths from which `id_of` folds them into the blob."""


class Paths(Protocol):
    """What a merge reads paths from: a `FileTable`, or a list."""

    def __getitem__(self, fid: int, /) -> str | None: ...


class _State:
    __slots__ = ("blob", "by_hash", "find", "hashes", "ids", "recent", "start", "starts")

    def __init__(
        self,
        blob: bytes,
        starts: NDArray[np.int64],
        hashes: NDArray[np.int64],
        by_hash: NDArray[np.int64],
    ) -> None:
        self.blob = blob
        self.starts = starts
        """Where each frozen path starts in `blob`, and one past the last."""
        self.hashes = hashes
        """`path_hash` of each frozen path, sorted; `by_hash` its id."""
        self.by_hash = by_hash
        # Views for one item at a time: a NumPy scalar costs a microsecond.
        self.start = starts.data
        self.find = hashes.data
        self.recent: list[str] = []
        """The paths after the frozen ones, as strings."""
        self.ids: dict[str, int] = {}
        """The ids of `recent`."""


_EMPTY = np.zeros(0, dtype=np.int64)


class FileTable:
    """Relative path by file id, and id by path."""

    def __init__(self) -> None:
        self._state = _State(b"", np.zeros(1, dtype=np.int64), _EMPTY, _EMPTY)

    def __len__(self) -> int:
        s = self._state
        return len(s.starts) - 1 + len(s.recent)

    def __getitem__(self, fid: int) -> str:
        s = self._state
        frozen = len(s.starts) - 1
        if fid >= frozen:
            return s.recent[fid - frozen]
        if fid < 0:
            raise IndexError(fid)
        # The NUL after each path: its end is the next one's start less 1.
        return s.blob[s.start[fid] : s.start[fid + 1] - 1].decode(ENCODING, ERRORS)

    def get(self, path: str) -> int | None:
        """The id of `path`, or None."""
        s = self._state
        fid = s.ids.get(path)
        if fid is not None or not len(s.hashes):
            return fid
        return self._frozen_id(s, path, path_hash(path))

    @staticmethod
    def _frozen_id(s: _State, path: str, h: int) -> int | None:
        find, start = s.find, s.start
        at = bisect.bisect_left(find, h)
        key = path.encode(ENCODING, ERRORS)
        while at < len(find) and find[at] == h:
            fid = int(s.by_hash[at])
            if s.blob[start[fid] : start[fid + 1] - 1] == key:
                return fid
            at += 1
        return None

    def id_of(self, path: str) -> int:
        """The id of `path`, given it now if it has none."""
        fid = self._id_of(path)
        if len(self._state.recent) >= FREEZE_AT:
            self.freeze()
        return fid

    def _id_of(self, path: str, frozen: bool = True) -> int:
        """`id_of` without the freeze; `frozen=False`: `path` is known not
        to be among the frozen paths."""
        fid = self.get(path) if frozen else self._state.ids.get(path)
        if fid is None:
            s = self._state
            fid = len(s.starts) - 1 + len(s.recent)
            s.ids[path] = fid
            s.recent.append(path)
        return fid

    def extend(self, paths: Iterable[str]) -> list[int]:
        """`id_of` each of `paths`, then `freeze` (once). The frozen paths
        are looked up together (a restart's walk brings every path again)."""
        paths = list(paths)
        s = self._state
        if not len(s.hashes) or not paths:
            ids = [self._id_of(p, frozen=False) for p in paths]
            self.freeze()
            return ids
        hs = np.fromiter((path_hash(p) for p in paths), dtype=np.int64, count=len(paths))
        at = np.minimum(np.searchsorted(s.hashes, hs), len(s.hashes) - 1)
        hit = (s.hashes[at] == hs).tolist()
        guessed = s.by_hash[at]
        guess = guessed.tolist()
        begins = s.starts[guessed].tolist()
        ends = (s.starts[guessed + 1] - 1).tolist()
        blob = s.blob
        ids = []
        for path, h, found, fid, a, b in zip(
            paths, hs.tolist(), hit, guess, begins, ends, strict=True
        ):
            if not found:
                ids.append(self._id_of(path, frozen=False))
            elif blob[a:b] == path.encode(ENCODING, ERRORS):
                ids.append(fid)
            else:  # another path of the same hash
                fid = self._frozen_id(s, path, h)
                ids.append(self._id_of(path, frozen=False) if fid is None else fid)
        self.freeze()
        return ids

    def many(self, fids: Sequence[int] | NDArray[Any]) -> list[str]:
        """The paths of `fids`, each file's string made once."""
        s = self._state
        frozen = len(s.starts) - 1
        wanted = np.asarray(fids, dtype=np.int64)
        if not len(wanted):
            return []
        distinct, back = np.unique(wanted, return_inverse=True)
        old = distinct[distinct < frozen]
        blob = s.blob
        made = [
            blob[a : b - 1].decode(ENCODING, ERRORS)
            for a, b in zip(s.starts[old].tolist(), s.starts[old + 1].tolist(), strict=True)
        ]
        made += [s.recent[f - frozen] for f in distinct[len(old) :].tolist()]
        return [made[i] for i in back.tolist()]

    def paths_bytes(self, fids: NDArray[Any]) -> bytes | None:
        """The paths of `fids`, in that order, as the blob holds them
        (UTF-8, lone surrogates passed through, a NUL after each), when
        every id is frozen and no path holds a NUL; otherwise None. A run
        of consecutive ids is one slice of the blob: a snapshot's segment
        is one run, or a few where a restart numbered the open file's
        folder before the snapshot's files."""
        s = self._state
        count = len(fids)
        if not count:
            return b""
        wanted = np.asarray(fids, dtype=np.int64)
        if int(wanted.min()) < 0 or int(wanted.max()) >= len(s.starts) - 1:
            return None
        breaks = np.flatnonzero(np.diff(wanted) != 1) + 1
        starts = s.starts[wanted[np.concatenate(([0], breaks))]].tolist()
        ends = s.starts[wanted[np.concatenate((breaks, [count])) - 1] + 1].tolist()
        blob = s.blob
        run = b"".join([blob[a:b] for a, b in zip(starts, ends, strict=True)])
        return run if run.count(b"\0") == count else None  # a path holding a NUL

    def all(self) -> list[str]:
        """Every path, in id order."""
        s = self._state
        count = len(s.starts) - 1
        frozen = s.blob[:-1].decode(ENCODING, ERRORS).split("\0") if count else []
        if len(frozen) != count:  # a path holding a NUL (from a client's URI)
            frozen = self.many(np.arange(count))
        return frozen + list(s.recent)

    def freeze(self) -> None:
        """Move the recent paths into the blob (one new state, swapped in)."""
        s = self._state
        recent = list(s.recent)
        if not recent:
            return
        encoded = [p.encode(ENCODING, ERRORS) for p in recent]
        added = np.fromiter((len(e) + 1 for e in encoded), dtype=np.int64, count=len(encoded))
        starts = np.concatenate([s.starts, s.starts[-1] + np.cumsum(added)])
        new_hashes = np.fromiter((path_hash(p) for p in recent), dtype=np.int64, count=len(recent))
        first = len(s.starts) - 1
        hashes = np.concatenate([s.hashes, new_hashes])
        by_hash = np.concatenate([s.by_hash, np.arange(first, first + len(recent), dtype=np.int64)])
        order = np.argsort(hashes, kind="stable")
        fresh = _State(s.blob + b"\0".join(encoded) + b"\0", starts, hashes[order], by_hash[order])
        # Paths added by another thread since `recent` was copied stay recent.
        for path in s.recent[len(recent) :]:
            fresh.ids[path] = len(fresh.starts) - 1 + len(fresh.recent)
            fresh.recent.append(path)
        self._state = fresh
