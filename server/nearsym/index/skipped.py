"""The files of a folder that indexing passes over, and the stamp each had.

A walk finds files that are not indexed: over the size cap, binary,
minified, too broken to query. A re-walk (a `.gitignore` saved) would read
each again, and parse the broken ones: on the Linux kernel, 87 files, two
of them parsed for 0.2 s with the C grammar loaded into the server for
them (a `.gitignore` saved every few queries for 30 s grew the server by
17-18 MB with them read, 13-16 MB without). `SkippedFiles` remembers
them with the size and mtime_ns the walk saw, so a re-walk reads only
files that changed. The table goes into the index's snapshot
(`to_bytes`), so a restart does not read them either: the kernel's
restart started the process pool for them alone.

They are kept as one array of (path hash, size, mtime_ns) rows, not as a
string and a tuple per file: these are recorded while a cold index's walk
and parses leave their garbage, and a few small objects kept among it each
hold a 1 MiB arena of the allocator (as `filetable` explains); the first
version, a dict, left a restarted kernel server 10 MB larger. A path is
known by its hash alone: a different file would need the same 64-bit hash,
size and mtime_ns to be taken for a skipped one. The hash is the first 8
bytes of the path's BLAKE2b, the same in every process (Python's own
`hash` of a string is not).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

_NONE = np.zeros((0, 3), dtype=np.int64)


def path_key(rel: str) -> int:
    """The stable 64-bit hash a path is known by."""
    digest = hashlib.blake2b(rel.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


class SkippedFiles:
    """Path (by its hash) -> the (size, mtime_ns) it was skipped at."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: NDArray[np.int64] = _NONE
        """(hash, size, mtime_ns) rows, sorted by hash, one per path."""

    def __len__(self) -> int:
        return len(self._rows)

    def holds(self, rel: str, size: int, mtime_ns: int) -> bool:
        """Whether `rel` was skipped as it is now (same size and mtime_ns)."""
        rows = self._rows
        if not len(rows):
            return False
        key = path_key(rel)
        at = int(np.searchsorted(rows[:, 0], key))
        return at < len(rows) and rows[at].tolist() == [key, size, mtime_ns]

    def update(
        self, skipped: Iterable[tuple[str, int, int]] = (), dropped: Iterable[str] = ()
    ) -> None:
        """Record each (path, size, mtime_ns) of `skipped` (a path's new
        stamp replaces its old one) and forget each path of `dropped`
        (not even hashed while the table is empty)."""
        latest = {path_key(rel): (size, mtime) for rel, size, mtime in skipped}
        if not latest and not len(self._rows):
            return
        gone = {path_key(rel) for rel in dropped} | latest.keys()
        rows = self._rows
        if len(rows) and gone:
            if len(rows) <= len(gone):
                # A small table (the kernel's: 87 rows) and a batch's many
                # paths: each row is looked up in the set, not the set sorted.
                keep = np.array([key not in gone for key in rows[:, 0].tolist()], dtype=bool)
            else:
                keep = ~np.isin(rows[:, 0], np.fromiter(gone, dtype=np.int64, count=len(gone)))
            rows = rows[keep]
        if latest:
            fresh = np.array([(h, size, mtime) for h, (size, mtime) in latest.items()], np.int64)
            rows = np.concatenate([rows, fresh])
            rows = rows[np.argsort(rows[:, 0], kind="stable")]
        self._rows = rows

    def to_bytes(self, settled_before: int | None = None) -> bytes:
        """The table as a snapshot part (`take`). With `settled_before`,
        rows whose mtime_ns is not before it are left out: a file changed
        again within its mtime's granularity would keep that stamp, and the
        next start would pass over it unread (the cache's racy rule)."""
        rows = self._rows
        if settled_before is not None and len(rows):
            rows = rows[rows[:, 2] < settled_before]
        return rows.tobytes()

    def take(self, data: bytes) -> None:
        """Add the rows of a table stored as `to_bytes` gave it, for the
        paths this one does not hold. Raises ValueError on bytes that are
        no such table."""
        if len(data) % 24:
            raise ValueError(f"a table of skipped files of {len(data)} bytes")
        rows = np.frombuffer(data, dtype=np.int64).reshape(-1, 3)
        if len(self._rows):
            rows = rows[~np.isin(rows[:, 0], self._rows[:, 0])]
        if not len(rows):
            return
        rows = np.concatenate([self._rows, rows])
        self._rows = rows[np.argsort(rows[:, 0], kind="stable")]

    @classmethod
    def of(cls, skipped: Iterable[tuple[str, int, int]]) -> SkippedFiles:
        """A table of exactly `skipped` (what a whole walk kept)."""
        table = cls()
        table.update(skipped)
        return table
