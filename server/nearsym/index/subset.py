"""A subset of a segment's entries, for the lookups of one query.

A query whose rows are filtered by their owner or their place (`where`)
can often name the few entries that may give it a row at all: the names of
the rows of a few containers or files. The lookups given such a subset
(`Segment.prefix`, `initials`, `containing`, `subsequence`) read only its
entries, in the order they would read them from the whole segment, so the
pool is the same and its cost follows the subset.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from nearsym.index.encoding import by_length, find_sorted, masks_of


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
