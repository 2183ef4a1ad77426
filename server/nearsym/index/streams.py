"""Streams of a segment's entries, shortest first, in chunks.

A tier of retrieval reads a segment's entries in the order of its
`by_length` column (shortest first, then alphabetical) and stops when the
pool is full or its budget is spent (`keys.merged_keys`), so the entries it
may take are handed over a chunk at a time: `SCAN_CHUNK` entries of that
order are tested (by range, by a table of chosen entries, by character
mask) and those that pass are yielded. A stream a walk verifies under a
budget is regrouped into whole `KEY_PIECE`s (`whole_pieces`), so that what
the budget reaches does not depend on where the chunks fell, and a walk
gets arrays large enough to test in numpy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

SCAN_CHUNK = 32_768
"""Entries per chunk when a tier reads the shortest-first order."""

KEY_PIECE = 256
"""Keys a walk tests, and charges to its budget, at a time
(`keys.merged_keys`)."""


def chunks(order: NDArray[np.uint32]) -> Iterator[NDArray[np.uint32]]:
    """`order` a chunk at a time."""
    for at in range(0, len(order), SCAN_CHUNK):
        yield order[at : at + SCAN_CHUNK]


def in_range(order: NDArray[np.uint32], lo: int, hi: int) -> Iterator[NDArray[np.uint32]]:
    """The entries of `order` from `lo` to `hi` (a prefix's), in its order."""
    for chunk in chunks(order):
        hit = chunk[(chunk >= lo) & (chunk < hi)]
        if len(hit):
            yield hit


def chosen(order: NDArray[np.uint32], table: NDArray[np.bool_]) -> Iterator[NDArray[np.uint32]]:
    """The entries of `order` that `table` (per entry) marks, in its order."""
    for chunk in chunks(order):
        hit = chunk[table[chunk]]
        if len(hit):
            yield hit


def whole_pieces(stream: Iterator[NDArray[Any]]) -> Iterator[NDArray[np.uint32]]:
    """`stream` regrouped into chunks of whole `KEY_PIECE`s but the last: a
    walk spends its budget on them as it would on one array of them all."""
    held: list[NDArray[np.uint32]] = []
    count = 0
    for hit in stream:
        held.append(hit)
        count += len(hit)
        if count >= 4 * KEY_PIECE:
            joined = np.concatenate(held)
            cut = len(joined) // KEY_PIECE * KEY_PIECE
            yield joined[:cut]
            held, count = [joined[cut:]], len(joined) - cut
    if count:
        yield np.concatenate(held)


def masked(
    order: NDArray[np.uint32], masks: NDArray[np.uint32], mask: np.uint32
) -> Iterator[NDArray[np.uint32]]:
    """The entries of `order` whose character mask (`masks`, in that order)
    holds `mask`."""
    for at in range(0, len(order), SCAN_CHUNK):
        hit = order[at : at + SCAN_CHUNK][(masks[at : at + SCAN_CHUNK] & mask) == mask]
        if len(hit):
            yield hit
