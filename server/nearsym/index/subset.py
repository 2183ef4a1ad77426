"""A subset of a segment's entries, for the lookups of one query.

A query whose rows are filtered by their owner or their place (`where`)
can often name the few entries that may give it a row at all: the names of
the rows of a few containers or files. The lookups given such a subset
(`Segment.prefix`, `initials`, `containing`, `subsequence`) read only its
entries, in the order they would read them from the whole segment, so the
pool is the same and its cost follows the subset.

The typo fallback's exact look-ups are made among the entries that start
as the query does (`Starting`), a few for an edit late in a long query.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from nearsym.index.encoding import by_length, find_sorted, masks_of, slices


class Keys(Protocol):
    """What `Starting` reads of a segment (`Segment`, which imports this
    module): its keys, bisectable."""

    lower: bytes
    lo_off: NDArray[Any]

    def key(self, e: int) -> bytes: ...

    def __getitem__(self, e: int) -> bytes: ...

    def __len__(self) -> int: ...


class Within:
    """Some of a segment's entries (those that can give a query a row, few
    of all): the lookups given one read only these, so their cost follows
    the subset, not the segment."""

    __slots__ = ("_mask", "_masks", "_order", "ids", "lo_off", "lower")

    def __init__(self, ids: NDArray[np.uint32], lower: bytes, lo_off: NDArray[Any]) -> None:
        self.ids = ids
        """The entries, sorted."""
        self.lower = lower
        self.lo_off = lo_off
        """The segment's keys (`Segment.lower`, `Segment.lo_off`)."""
        self._mask: NDArray[np.bool_] | None = None
        self._order: NDArray[np.uint32] | None = None
        self._masks: NDArray[np.uint32] | None = None

    def between(self, lo: int, hi: int) -> NDArray[np.uint32]:
        """The entries from `lo` up to `hi`, sorted."""
        return self.ids[find_sorted(self.ids, lo) : find_sorted(self.ids, hi)]

    def of(self, ids: NDArray[np.uint32]) -> NDArray[np.uint32]:
        """The ones of `ids` in the subset, in their order."""
        if self._mask is None:
            self._mask = np.zeros(len(self.lo_off) - 1, dtype=bool)
            self._mask[self.ids] = True
        return ids[self._mask[ids]]

    def shortest_first(self) -> tuple[NDArray[np.uint32], NDArray[np.uint32]]:
        """The entries shortest first (alphabetical within a length, as
        `Segment.by_length`), and their character masks."""
        if self._order is None or self._masks is None:
            ids, off = self.ids, self.lo_off
            lengths = off[ids + 1].astype(np.int64) - off[ids] - 1
            self._order = ids[by_length(lengths)]
            low = np.frombuffer(self.lower, dtype=np.uint8)
            self._masks = masks_of(low, off, self._order)
        return self._order, self._masks


def shared_start(a: bytes, b: bytes) -> int:
    """How many bytes `a` and `b` start with alike."""
    n = min(len(a), len(b))
    # The first differing byte is the highest set byte of the two starts'
    # exclusive or, read as big-endian numbers (no Python loop per byte).
    differ = int.from_bytes(a[:n], "big") ^ int.from_bytes(b[:n], "big")
    return n if not differ else n - 1 - (differ.bit_length() - 1) // 8


SMALL_SPAN = 1_024
"""A span of entries up to this long is read into a dict for the typo
fallback's exact look-ups: a long query's hundreds of variants mostly
share a long start with it and are looked up among a few entries, and
a dict answers each in one step where a bisection calls `Segment.key` a
dozen times (measured: 1,369 variants of an 18-letter query bisected in
8 ms on the Linux kernel). Reading the span costs one slice a key."""


class Starting:
    """The entries of a segment that start alike (`Segment.starting`), for
    exact look-ups: `Segment.exact(key, among)` as a dict of the span's
    keys when it is small (`SMALL_SPAN`), else a bisection (`exact_many`,
    which the typo fallback calls once for all its keys of long spans)."""

    __slots__ = ("keys", "seg", "span")

    def __init__(self, seg: Keys, span: range) -> None:
        self.seg = seg
        self.span = span
        self.keys: dict[bytes, range] | None = None
        if len(span) <= SMALL_SPAN:
            keys: dict[bytes, range] = {}
            ids = np.arange(span.start, span.stop, dtype=np.uint32)
            for e, key in zip(span, slices(seg.lower, seg.lo_off, ids), strict=True):
                # Equal keys (names that differ only in case) are adjacent.
                got = keys.get(key)
                keys[key] = range(e, e + 1) if got is None else range(got.start, e + 1)
            self.keys = keys

    def exact(self, key: bytes) -> range:
        """The entries of the span equal to `key` (empty when none)."""
        if self.keys is not None:
            return self.keys.get(key, range(0))
        return exact_many(self.seg, [key], [self.span])[0]


def exact_many(seg: Keys, keys: list[bytes], spans: list[range]) -> list[range]:
    """The entries of `seg` equal to each of `keys`, each searched in its
    span (as `Starting.exact` without a dict): one bisection for all the
    keys at once, in numpy. The typo fallback's hundreds of variants whose
    spans are long otherwise bisect one by one, `Segment.key` a slice per
    step (measured on the Linux kernel: 314 bisections in 6 ms for
    `mmmxbf_lmu`)."""
    n = len(keys)
    if not n:
        return []
    # Bytes compared as int16 with -1 past a key's end: a key that ends
    # first is the smaller (as `bytes` compare). A segment key read to one
    # byte more than the longest of `keys` decides every comparison.
    width = max(len(k) for k in keys) + 1
    want = np.full((n, width), -1, dtype=np.int16)
    for r, k in enumerate(keys):
        want[r, : len(k)] = np.frombuffer(k, dtype=np.uint8)
    blob = np.frombuffer(seg.lower, dtype=np.uint8)
    off = seg.lo_off
    lo = np.fromiter((s.start for s in spans), dtype=np.int64, count=n)
    hi = np.fromiter((s.stop for s in spans), dtype=np.int64, count=n)
    cols = np.arange(width, dtype=np.int64)
    rows = np.arange(n)
    end = np.int16(-1)
    while (live := lo < hi).any():  # bisect_left: the first entry not below its key
        mid = np.where(live, (lo + hi) // 2, 0)
        start = off[mid].astype(np.int64) + 1
        length = off[mid + 1].astype(np.int64) - start
        at = np.minimum(start[:, None] + cols, len(blob) - 1)
        got = np.where(cols < length[:, None], blob[at].astype(np.int16), end)
        differ = got != want
        first = differ.argmax(axis=1)
        below = differ[rows, first] & (got[rows, first] < want[rows, first])
        lo = np.where(live & below, mid + 1, lo)
        hi = np.where(live & ~below, mid, hi)
    out: list[range] = []
    for k, first_at, span in zip(keys, lo.tolist(), spans, strict=True):
        last = first_at
        while last < span.stop and seg.key(last) == k:  # equal keys are adjacent
            last += 1
        out.append(range(first_at, last))
    return out
