"""Candidate keys: testing a batch of them at once, and merging them
across segments shortest first.

A tier of candidate retrieval (see `store`) reads each segment's entries
in chunks, shortest first (`Segment.prefix`, `containing`, `subsequence`);
`merged_keys` merges those chunks across segments into one stream, read
only as far as the pool needs, and tests each batch of 256 keys with a
`KeyCheck` whose scan runs over the batch joined into one string, in C.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nearsym.index.encoding import U32, char_mask, holding, holding_in_order, slices
from nearsym.index.segment import Segment
from nearsym.index.streams import KEY_PIECE


def subsequence_pattern(text: bytes, lines: bool = False) -> re.Pattern[bytes]:
    """A regex matching keys that hold `text` as a subsequence, in linear
    time: each step skips only bytes that are not the next wanted one. With
    `lines`, it matches at line starts of newline-joined keys."""
    parts = [b"(?m)^"] if lines else []
    for b in text:
        c = re.escape(bytes([b]))
        parts.append(b"[^" + (b"\\n" if b == 10 else c + b"\\n") + b"]*" + c)
    return re.compile(b"".join(parts))


class KeyCheck:
    """Which of a batch of keys pass a test, decided over the batch joined
    into one string (the scan runs in C, not a Python call per key)."""

    def passing(self, keys: list[bytes]) -> list[bool]:
        return [True] * len(keys)

    def passing_ids(
        self, blob: bytes, offsets: NDArray[Any], ids: NDArray[np.uint32]
    ) -> NDArray[np.bool_] | None:
        """`passing` of the keys `ids` of a newline-joined blob, in numpy,
        without slicing them; None where only `passing` can tell."""
        return np.ones(len(ids), dtype=bool)


class Substring(KeyCheck):
    def __init__(self, text: bytes) -> None:
        self.text = text

    def passing_ids(
        self, blob: bytes, offsets: NDArray[Any], ids: NDArray[np.uint32]
    ) -> NDArray[np.bool_] | None:
        if not self.text or b"\n" in self.text:
            return None  # `passing` finds it across keys: keep its answer
        return holding(blob, offsets, ids, self.text)

    def passing(self, keys: list[bytes]) -> list[bool]:
        joined = b"\n".join(keys)
        out = [False] * len(keys)
        starts = list(itertools.accumulate((len(k) + 1 for k in keys), initial=0))
        at = joined.find(self.text)
        while at >= 0:
            line = bisect.bisect_right(starts, at) - 1
            out[line] = True
            at = joined.find(self.text, starts[line + 1])  # the next key
        return out


class Subsequence(KeyCheck):
    def __init__(self, text: bytes) -> None:
        self.text = text
        self.pattern = subsequence_pattern(text, lines=True)

    def passing_ids(
        self, blob: bytes, offsets: NDArray[Any], ids: NDArray[np.uint32]
    ) -> NDArray[np.bool_] | None:
        if not self.text or b"\n" in self.text:
            return None
        return holding_in_order(blob, offsets, ids, self.text)

    def passing(self, keys: list[bytes]) -> list[bool]:
        joined = b"\n".join(keys)
        starts = list(itertools.accumulate((len(k) + 1 for k in keys), initial=0))
        out = [False] * len(keys)
        for m in self.pattern.finditer(joined):  # each match starts a key
            out[bisect.bisect_right(starts, m.start()) - 1] = True
        return out


FIRST_BLOCK = 1_024
"""Keys a walk tests at once at first (whole chunks of 256), doubling with
each block: a few numpy passes over a block cost less than a regex over
its sliced keys, and a tier the pool fills early wastes at most the
block it stopped in (a guess, not tuned)."""


NUMPY_KEYS = 1_024
"""Keys from which a block is tested in numpy: below, the fixed cost of
its passes (a dozen numpy calls a byte of the query) exceeds the regex
over the sliced keys (measured on the Linux kernel's mix: blocks of a
few hundred keys, the shortest-first scan's usual yield, cost 0.4 ms
each in numpy)."""


def merged_keys(
    sources: Sequence[tuple[int, Segment, Iterable[NDArray[np.uint32]]]],
    owners: bool = False,
    check: KeyCheck | None = None,
    budget: list[int] | None = None,
) -> Iterator[tuple[int, bytes, int, int]]:
    """(length, key, segment number, id), shortest then alphabetical, across
    segments; each source yields chunks of ids already in that order, and is
    read only as far as the merge goes. `owners` walks container ids instead
    of entry ids. With `check`, only keys passing it, tested 256 at a time
    until `budget` (shared, decremented) runs out."""

    def walk(
        s_no: int, seg: Segment, chunks: Iterable[NDArray[np.uint32]]
    ) -> Iterator[tuple[int, bytes, int, int]]:
        blob = seg.cont_lower if owners else seg.lower
        offsets = seg.cont_off if owners else seg.lo_off
        for ids in chunks:
            block = max(KEY_PIECE, FIRST_BLOCK // KEY_PIECE * KEY_PIECE)  # whole pieces
            at = 0
            while at < len(ids):
                # The keys of a block are tested at once, in numpy; only
                # those that pass are sliced. Spending the budget is as
                # before, 256 ids at a time: a block never reaches past
                # what the budget left could take (rounded up to 256), so
                # the test decides nothing the walk would not have.
                stop = len(ids)
                if check is not None and budget is not None:
                    if budget[0] <= 0:
                        return
                    stop = min(stop, at + min(block, -(-budget[0] // KEY_PIECE) * KEY_PIECE))
                    block *= 2
                held = (
                    check.passing_ids(blob, offsets, ids[at:stop])
                    if check is not None and stop - at >= NUMPY_KEYS
                    else None
                )
                for c in range(at, stop, KEY_PIECE):
                    chunk = ids[c : min(c + KEY_PIECE, stop)]
                    if check is not None and budget is not None:
                        if budget[0] <= 0:
                            return
                        budget[0] -= len(chunk)
                    if held is not None:
                        chunk = chunk[held[c - at : c - at + len(chunk)]]
                    keys = slices(blob, offsets, chunk)
                    sizes = seg.cont_lengths[chunk].tolist() if owners else list(map(len, keys))
                    # A chunk's keys are listed at once and handed over one
                    # by one: the stream is read as lazily as before (the
                    # next chunk, and its share of the budget, only when the
                    # last key of this one has been taken), at a C step a key.
                    listed = zip(sizes, keys, itertools.repeat(s_no), chunk.tolist())
                    if check is not None and held is None:
                        yield from itertools.compress(listed, check.passing(keys))
                    else:
                        yield from listed
                at = stop

    if len(sources) == 1:  # nothing to merge
        s_no, seg, chunks = sources[0]
        return walk(s_no, seg, chunks)
    return heapq.merge(*(walk(s_no, seg, chunks) for s_no, seg, chunks in sources))


def name_groups(
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


OWNERS_IN_NUMPY = 256
"""Containers from which `owners_like` tests them all at once in numpy
(`encoding.holding_in_order`) rather than by the regex of sliced keys: a
guess at where the numpy pass's fixed cost (a pass per byte of the owner
over the containers' bytes) falls below a regex step per key."""


def owners_like(seg: Segment, owner: bytes) -> NDArray[np.bool_]:
    """Per container of `seg`: does it hold `owner` in order?"""
    ok = np.zeros(seg.container_count, dtype=bool)
    if len(owner) == 1 and (97 <= owner[0] <= 122 or owner[0] == 95):
        m = U32(char_mask(owner))
        ok[(seg.cont_masks & m) == m] = True  # a letter's (or `_`'s) mask bit is exact
        return ok
    if b"\n" not in owner:
        # Only which containers pass counts here: not `Segment.owners`'
        # shortest-first order, which costs a sort.
        m = U32(char_mask(owner))
        some = np.flatnonzero((seg.cont_masks & m) == m)
        if len(some) >= OWNERS_IN_NUMPY:
            ok[some[holding_in_order(seg.cont_lower, seg.cont_off, some, owner)]] = True
            return ok
    maybe = seg.owners(owner)
    check = Subsequence(owner)
    for at in range(0, len(maybe), 4096):
        ids = maybe[at : at + 4096]
        passing = check.passing(seg.owner_keys(ids))
        ok[ids[np.asarray(passing, dtype=bool)]] = True
    return ok
