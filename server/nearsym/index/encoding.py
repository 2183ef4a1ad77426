"""How a segment's columns are encoded: character masks, packed offsets,
trigram lists, newline-joined blobs, and the sorting helpers they share.

Design note
-----------
A segment (see `segment`) keeps its names as newline-joined blobs, not
Python strings: key i lies between newlines i and i+1 (`joined`, `slices`),
so millions of names cost one object and can be bisected and scanned in C.
Per name it stores a 32-bit mask of the characters it holds (`CHAR_BITS`),
and per name its first row in `post` as a 32-bit base every 64 names plus
a 16-bit rest (`pack_starts`). The trigram index lists, per trigram code,
the sorted names holding it at an even offset (`trigrams`), each list as
16-bit gaps after its first name, or 32-bit names where that is smaller
(`pack_trigrams`).

Every function here is vectorised: none loops in Python over names or rows.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

U8 = np.uint8
U16 = np.uint16
U32 = np.uint32
U64 = np.uint64


def _char_bits() -> NDArray[np.uint32]:
    bits = np.zeros(256, dtype=U32)
    for b in range(256):
        if 97 <= b <= 122:
            bit = b - 97
        elif 48 <= b <= 57:
            bit = 26  # digits share a bit
        elif b == 95:
            bit = 27
        elif b == 10:
            continue  # the separator holds no character
        else:
            bit = 28 + b % 4
        bits[b] = U32(1 << bit)
    return bits


TRIGRAM_SLICE = 4_000_000
"""Bytes of names read at a time when building the trigram lists."""
STARTS_BLOCK_BITS = 6
"""Entries per 32-bit base of `post` offsets: 64 (`pack_starts`); 64 names
with 1,024 rows each would still fit the 16-bit rest."""

CHAR_BITS = _char_bits()
"""Per byte, its bit in an entry's 32-bit character mask: a-z a bit each,
the digits one, `_` one, every other byte one of four."""


def char_mask(text: bytes) -> int:
    mask = 0
    for b in text:
        mask |= int(CHAR_BITS[b])
    return mask


def masks_of(
    low: NDArray[np.uint8], offsets: NDArray[Any], ids: NDArray[Any] | None = None
) -> NDArray[np.uint32]:
    """The character masks of the keys `ids` (all without) of a
    newline-joined blob (its bytes `low`, its newlines at `offsets`): each
    key's bits with its leading newline's."""
    if ids is None:
        return np.bitwise_or.reduceat(CHAR_BITS[low], offsets[:-1].astype(np.int64))
    if not len(ids):
        return np.zeros(0, dtype=np.uint32)
    starts = offsets[ids].astype(np.int64)
    counts = offsets[np.asarray(ids) + 1].astype(np.int64) - starts
    heads = np.zeros(len(ids), dtype=np.int64)
    np.cumsum(counts[:-1], out=heads[1:])
    return np.bitwise_or.reduceat(CHAR_BITS[low[ranges(starts, counts)]], heads)


def trigrams(
    low: NDArray[np.uint8],
) -> tuple[NDArray[np.uint32], NDArray[np.int64], NDArray[np.uint32]]:
    """For each trigram code in the blob, the sorted entries holding it at
    an even offset: the codes, each code's first place in the entries and
    the count last, and the entries.

    Only trigrams at even offsets in their name are kept: any four or more
    characters hold one there (see `Segment.containing`), at half the memory. The
    blob is read a slice of names at a time, so the temporaries stay a few
    times the slice, not the blob."""
    seps = np.flatnonzero(low == 10)
    names = len(seps) - 1
    if names <= 0:
        return np.zeros(0, U32), np.zeros(1, np.int64), np.zeros(0, U32)
    starts = seps[:-1] + 1
    lengths = np.diff(seps) - 1
    # Name i holds trigrams at its even offsets 0, 2, ... up to length - 3.
    held = np.where(lengths >= 3, (lengths - 3) // 2 + 1, 0)
    # Pairs (code << 32 | entry), written in place: no concatenation.
    pairs = np.empty(int(held.sum()), dtype=U64)
    done = 0
    step = max(1, names * TRIGRAM_SLICE // max(1, len(low)))
    for first in range(0, names, step):
        last = min(names, first + step)
        counts = held[first:last]
        total = int(counts.sum())
        if not total:
            continue
        ends = np.cumsum(counts)
        # The k-th trigram of the slice, the j-th of its name: at the
        # name's start + 2j = start - 2 * (trigrams before the name) + 2k.
        at = np.repeat(starts[first:last] - 2 * (ends - counts), counts)
        at += 2 * np.arange(total, dtype=np.int64)
        codes = low[at].astype(U32) << 16
        codes |= low[at + 1].astype(U32) << 8
        codes |= low[at + 2]
        out = pairs[done : done + total]
        np.left_shift(codes, U64(32), out=out, dtype=U64)
        out |= np.repeat(np.arange(first, last, dtype=U64), counts)
        done += total
    pairs.sort()
    return _lists(pairs)


MISSING = np.iinfo(U32).max
"""In a merge's map from a part's entries to the merged ones: an entry
the merge drops (no live row holds it)."""


def merged_trigrams(
    lists: Sequence[tuple[NDArray[np.uint32], NDArray[np.int64], NDArray[np.uint32]]],
    remaps: Sequence[NDArray[np.uint32]],
) -> tuple[NDArray[np.uint32], NDArray[np.int64], NDArray[np.uint32]]:
    """`trigrams` of a merge's entries, from each part's own (`trigrams` of
    its blob) and its map to the merged entries (`MISSING` for one
    dropped). A map keeps its part's order, so each part's pairs stay
    sorted, and one stable sort merges those runs: 0.5 s for 16 runs of
    1.75 million pairs, where sorting them unordered takes 2.3 s. The
    Linux kernel's final merge (16 segments, 28 million pairs) built its
    lists in 4.4 s from the names, 1.4 s this way."""
    kept: list[NDArray[np.bool_]] = []
    ids: list[NDArray[np.uint32]] = []
    for (_, _, entries), remap in zip(lists, remaps, strict=True):
        ids.append(remap[entries])
        kept.append(ids[-1] != MISSING)
    pairs = np.empty(sum(int(k.sum()) for k in kept), dtype=U64)
    done = 0
    for (codes, bounds, _), new, keep in zip(lists, ids, kept, strict=True):
        out = pairs[done : done + int(keep.sum())]
        np.left_shift(np.repeat(codes, np.diff(bounds))[keep], U64(32), out=out, dtype=U64)
        out |= new[keep]
        done += len(out)
    del ids, kept
    pairs.sort(kind="stable")
    return _lists(pairs)


def _lists(
    pairs: NDArray[np.uint64],
) -> tuple[NDArray[np.uint32], NDArray[np.int64], NDArray[np.uint32]]:
    """Sorted (code << 32 | entry) pairs as `trigrams` gives them, once
    each."""
    if len(pairs):
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
    halves = pairs.view(U32).reshape(-1, 2)  # each pair's two 32-bit words
    low_word = 0 if sys.byteorder == "little" else 1
    entries = np.ascontiguousarray(halves[:, low_word])
    tri = np.ascontiguousarray(halves[:, 1 - low_word])
    del pairs, halves
    if len(tri) == 0:
        return np.zeros(0, U32), np.zeros(1, np.int64), entries
    first_of = np.flatnonzero(np.concatenate(([True], tri[1:] != tri[:-1])))
    bounds = np.append(first_of, len(tri)).astype(np.int64)
    return tri[first_of], bounds, entries


def ranges(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """The concatenation of `range(start, start + count)` for each pair."""
    total = int(counts.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    # Each output position's start, minus the outputs before its range.
    shift = np.repeat(starts - (ends - counts), counts)
    return shift + np.arange(total, dtype=np.int64)


def find_sorted(a: NDArray[Any], value: int, side: Literal["left", "right"] = "left") -> int:
    """`np.searchsorted(a, value, side)` for a Python int, which numpy would
    compare after copying all of `a` to a wider type (1.5 ms for the Linux
    kernel's 1.5 million initials codes, against microseconds): the value
    is given in `a`'s own type, or placed past either end when out of its
    range."""
    info = np.iinfo(a.dtype)
    if value > info.max:
        return len(a)
    if value < info.min:
        return 0
    return int(np.searchsorted(a, a.dtype.type(value), side=side))


def slices(blob: bytes, offsets: NDArray[Any], ids: NDArray[Any]) -> list[bytes]:
    """The keys `ids` of a newline-joined blob whose newlines sit at
    `offsets` (key i lies between offsets[i] and offsets[i + 1])."""
    starts = (offsets[ids] + 1).tolist()
    return [blob[a:b] for a, b in zip(starts, offsets[ids + 1].tolist(), strict=True)]


def _gathered(
    blob: bytes, offsets: NDArray[Any], ids: NDArray[Any]
) -> tuple[NDArray[np.uint8], NDArray[np.int64], NDArray[np.int64]]:
    """The bytes of keys `ids` of a newline-joined blob laid end to end,
    where each key ends in them, and each key's length."""
    ids = np.asarray(ids, dtype=np.int64)
    starts = offsets[ids].astype(np.int64) + 1
    counts = offsets[ids + 1].astype(np.int64) - starts
    data = np.frombuffer(blob, dtype=np.uint8)[ranges(starts, counts)]
    return data, np.cumsum(counts), counts


HOLDING_BLOCK = 1_024
"""Keys `holding_in_order` tests at once: about 25 KiB of names, whose
positions take 200 KiB as 64-bit numbers, under what glibc maps alone
(medians of 21 on the kernel's owners `pt1`, `smemload`, `rio_dbell`,
`dev`: 4,096 keys faulted in 190-1,240 pages and took 2.7-9.8 ms, 2,048
170-300 pages, 1,024 none but for 120 on `smemload`, 2.6-5.6 ms; 512
none, and slower again)."""


def holding_in_order(
    blob: bytes, offsets: NDArray[Any], ids: NDArray[Any], text: bytes
) -> NDArray[np.bool_]:
    """Per key `ids` of a newline-joined blob: does it hold the bytes of
    `text` in order (a subsequence)? `keys.Subsequence` without a Python
    step per key: the keys' bytes are gathered once, and each byte of
    `text` is found after the last, for every key at once (a leftmost
    match, which finds one whenever there is one). For thousands of keys
    (a short owner's containers: 13,824 of the Linux kernel's 129,104
    hold `pt1`'s letters) it costs a millisecond where the regex over the
    sliced keys took 13."""
    if len(ids) > HOLDING_BLOCK:
        # Block by block: a block's gathered bytes and positions stay under
        # the size glibc maps alone (`allocator.configure`), whose fresh
        # pages a first touch faults in (on the kernel's `pt1` owners,
        # 13,820 containers: 7.8 ms at once, 4.3 a block at a time).
        return np.concatenate(
            [
                holding_in_order(blob, offsets, ids[at : at + HOLDING_BLOCK], text)
                for at in range(0, len(ids), HOLDING_BLOCK)
            ]
        )
    n = len(ids)
    if not len(text):
        return np.ones(n, dtype=bool)
    data, ends, counts = _gathered(blob, offsets, ids)
    at = ends - counts  # where the next byte of `text` is looked for, per key
    alive = np.arange(n)  # the keys that hold `text`'s bytes so far
    found: dict[int, NDArray[np.intp]] = {}
    for b in text:
        places = found.get(b)
        if places is None:
            places = found[b] = np.flatnonzero(data == b)
        k = np.searchsorted(places, at)
        # Past the last place: beyond every key's end.
        nxt = np.full(len(at), len(data), dtype=np.int64)
        inside = k < len(places)
        nxt[inside] = places[k[inside]]
        # A key whose byte lies past its end fails; the rest go on.
        kept = nxt < ends[alive]
        alive, at = alive[kept], nxt[kept] + 1
        if not len(alive):
            break
    held = np.zeros(n, dtype=bool)
    held[alive] = True
    return held


def holding(
    blob: bytes, offsets: NDArray[Any], ids: NDArray[Any], text: bytes
) -> NDArray[np.bool_]:
    """Per key `ids` of a newline-joined blob: does it hold the bytes of
    `text` together (a substring)? `keys.Substring` for many keys at once:
    their bytes gathered, the places of `text`'s first byte narrowed by
    each next byte, and a place kept when `text` ends inside its key."""
    n = len(ids)
    if not len(text):
        return np.ones(n, dtype=bool)
    data, ends, _ = _gathered(blob, offsets, ids)
    size = len(text)
    at = np.flatnonzero(data[: max(0, len(data) - size + 1)] == text[0])
    for k in range(1, size):
        if not len(at):
            break
        at = at[data[at + k] == text[k]]
    key = np.searchsorted(ends, at, side="right")  # the key each place is in
    inside = at + size <= ends[key] if len(at) else np.zeros(0, dtype=bool)
    held = np.zeros(n, dtype=bool)
    held[key[inside]] = True
    return held


def joined(strings: list[str]) -> bytes:
    """Strings as one blob: a newline before each and after the last (just
    one newline for none), so string i lies between newlines i and i+1."""
    return ("\n" + "\n".join(strings) + "\n").encode() if strings else b"\n"


def pack_trigrams(
    codes: NDArray[np.uint32], start: NDArray[np.int64], entries: NDArray[np.uint32]
) -> tuple[Any, ...]:
    """Trigram lists, each stored as 16-bit gaps after its first entry, or
    as 32-bit entries where that is smaller.

    A gap that does not fit 16 bits is written 0 (no real gap is: entries
    are distinct) and kept whole in `big`, in order, from the list's
    `big_off`. Long lists have small gaps; a rare trigram's few entries lie
    far apart and stay 32-bit. On the Linux kernel the escapes took the
    32-bit lists from 32.2 to 16.9 MB."""
    t = len(codes)
    counts = np.diff(start)
    if t == 0:
        z32 = np.zeros(0, U32)
        return codes, np.zeros(0, U8), z32, z32, z32, np.zeros(0, U16), z32, z32, z32
    # 32-bit gaps: within a list they are positive and fit; from one list
    # to the next they wrap, and are the list's base anyway.
    gaps = np.empty(len(entries), dtype=U32)
    gaps[:1] = 0
    np.subtract(entries[1:], entries[:-1], out=gaps[1:])
    gaps[start[:-1]] = 0  # a list's first entry is its base, not a gap
    wide = gaps >= 65536
    escapes = np.add.reduceat(wide, start[:-1]) if len(entries) else np.zeros(t, np.int64)
    small = 2 * (counts - 1) + 4 * escapes < 4 * counts
    member = np.repeat(small, counts)
    del wide
    narrow = member.copy()
    narrow[start[:-1]] = False
    packed = gaps[narrow]
    del gaps, narrow
    far = packed >= 65536
    big = packed[far]
    packed[far] = 0
    tri16 = packed.astype(U16)
    del packed, far
    tri32 = entries[~member]
    len16 = np.where(small, counts - 1, 0)
    len32 = np.where(small, 0, counts)
    off16 = np.concatenate(([0], np.cumsum(len16)[:-1]))
    off32 = np.concatenate(([0], np.cumsum(len32)[:-1]))
    off = np.where(small, off16, off32).astype(U32)
    big_off = np.concatenate(([0], np.cumsum(np.where(small, escapes, 0))[:-1])).astype(U32)
    base = entries[start[:-1]]
    return codes, small.astype(U8), base, off, counts.astype(U32), tri16, tri32, big, big_off


def unpack_trigrams(
    codes: NDArray[np.uint32],
    small: NDArray[np.uint8],
    base: NDArray[np.uint32],
    off: NDArray[np.uint32],
    counts: NDArray[np.uint32],
    tri16: NDArray[np.uint16],
    tri32: NDArray[np.uint32],
    big: NDArray[np.uint32],
    big_off: NDArray[np.uint32],
) -> tuple[NDArray[np.uint32], NDArray[np.int64], NDArray[np.uint32]]:
    """The lists `pack_trigrams` packed, as `trigrams` gave them. Both
    kinds of list lie in code order: the 32-bit ones whole in `tri32`, the
    16-bit ones as their gaps in `tri16` (a 0 for each gap kept in `big`)."""
    del off, big_off  # each list's place follows from the lengths
    lengths = counts.astype(np.int64)
    bounds = np.zeros(len(codes) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    entries = np.empty(int(bounds[-1]), dtype=U32)
    packed = small.astype(bool)
    member = np.repeat(packed, lengths)
    entries[~member] = tri32
    # A 16-bit list: its base, then its gaps; each entry is the sum of those
    # before it in its list, the cumulative sum less the sums of the lists
    # before.
    # 32-bit sums wrap past the lists before, but each list's own sums
    # fit, so the differences are exact.
    n = lengths[packed]
    head = np.zeros(len(n), dtype=np.int64)
    np.cumsum(n[:-1], out=head[1:])
    steps = np.empty(int(n.sum()), dtype=U32)
    gap = np.ones(len(steps), dtype=bool)
    gap[head] = False
    gaps = tri16.astype(U32)
    gaps[gaps == 0] = big
    steps[gap] = gaps
    del gap, gaps
    steps[head] = base[packed]
    total = np.cumsum(steps, dtype=U32)
    total -= np.repeat(total[head] - steps[head], n)
    entries[member] = total
    return codes, bounds, entries


def pack_starts(starts: NDArray[np.int64]) -> tuple[Any, ...]:
    """Ascending offsets as a 32-bit base every `2**STARTS_BLOCK_BITS` and
    a 16-bit rest each (32-bit if a block's offsets span 65,536 or more):
    an entry's first row costs two reads, and on the Linux kernel its 2.8
    million entries take 5.8 MB instead of 11.3."""
    base = starts[:: 1 << STARTS_BLOCK_BITS]
    local = starts - np.repeat(base, 1 << STARTS_BLOCK_BITS)[: len(starts)]
    narrow = len(local) == 0 or int(local.max()) < 65536
    return base.astype(U32), local.astype(U16 if narrow else U32)


def by_length(lengths: NDArray[Any]) -> NDArray[np.intp]:
    """The stable order of `lengths`, ascending (as 16-bit keys, which numpy
    sorts by radix, in linear time)."""
    order: NDArray[np.intp] = np.argsort(
        np.minimum(lengths, 0xFFFF).astype(np.uint16), kind="stable"
    )
    return order


def intersect_sorted(small: NDArray[Any], large: NDArray[Any]) -> NDArray[Any]:
    """The elements of `small` also in `large`, both sorted and unique
    (`np.intersect1d(small, large, assume_unique=True)`): a binary search of
    `large` per element of `small`, instead of sorting both together, which
    cost about a millisecond a call on the kernel's long trigram lists."""
    if len(small) == 0 or len(large) == 0:
        return small[:0]
    at = np.minimum(np.searchsorted(large, small), len(large) - 1)
    hit: NDArray[Any] = small[large[at] == small]
    return hit


HUGE_PAGED = 1 << 22
"""The size from which numpy asks the kernel to back an array with huge
pages (`madvise`): 4 MiB."""


def table(n: int) -> NDArray[np.bool_]:
    """A zeroed table of `n` flags (one per entry of a segment: 3.2 million
    on the kernel), allocated at least `HUGE_PAGED` bytes long so that its
    fresh memory comes in huge pages, where the system allows them: the
    kernel's marks of 172,000 entries took 2.1 ms with 772 pages faulted
    in, 1.2 ms with 261 so (medians of 15). Under a quarter of that size a
    table is left as it is: a huge page costs its whole zeroing at the first
    touch of any of its bytes."""
    size = max(n, HUGE_PAGED) if n >= HUGE_PAGED // 4 else n
    flags: NDArray[np.bool_] = np.zeros(size, dtype=np.bool_)[:n]
    return flags


def sorted_unique(a: Any, universe: int = 0) -> Any:
    """`np.unique` by sorting (numpy 2's hashing `unique` is several times
    slower on these arrays); when the values are ids below `universe` and
    many, by marking them in a table of that size instead (linear)."""
    if len(a) == 0:
        return a
    if universe and len(a) * 16 > universe:
        marks = table(universe)
        marks[a] = True
        return np.flatnonzero(marks).astype(a.dtype)
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))]


INITIALS_KEPT = 4
"""Initials packed per name: a 32-bit code of its first four word initials."""

_SEP_BYTES = np.zeros(256, dtype=np.bool_)
_SEP_BYTES[[ord(c) for c in "_-./:$ #\\\n"]] = True
_UPPER_BYTES = np.zeros(256, dtype=np.bool_)
_UPPER_BYTES[65:91] = True
_LOWER_OR_DIGIT = np.zeros(256, dtype=np.bool_)
_LOWER_OR_DIGIT[97:123] = True
_LOWER_OR_DIGIT[48:58] = True
_LOWER_BYTES = np.zeros(256, dtype=np.bool_)
_LOWER_BYTES[97:123] = True
_SEP, _UPPER, _LOWER_DIGIT, _LOWER = 1, 2, 4, 8
_CLASSES = (
    _SEP_BYTES * _SEP
    + _UPPER_BYTES * _UPPER
    + _LOWER_OR_DIGIT * _LOWER_DIGIT
    + _LOWER_BYTES * _LOWER
).astype(np.uint8)
"""Per byte its classes as bits (`initials`)."""
_FOLD = np.arange(256, dtype=np.uint8)
_FOLD[65:91] += 32


def initials(blob: bytes) -> tuple[NDArray[np.uint32], NDArray[np.int64]]:
    """Per string of a newline-joined `blob` (as written, not lower-cased):
    its word initials, lower-cased, the first `INITIALS_KEPT` packed into a
    code (first initial in the high byte, zero bytes after the last), and
    how many initials it has.

    Word starts are those of `words.word_starts`, read byte by byte: the
    first byte after a separator (or the string's start), a capital after a
    lower-case letter or digit, a capital ending a run of capitals before a
    lower-case letter (`HTTPServer` -> h, s). Bytes past ASCII are letters
    without case.
    """
    raw = np.frombuffer(blob, dtype=U8)
    offsets = np.flatnonzero(raw == 10)
    count = max(0, len(offsets) - 1)
    codes = np.zeros(count, dtype=U32)
    if count == 0:
        return codes, np.zeros(0, dtype=np.int64)
    # Each byte's class bits, then the three rules as bit arithmetic on
    # neighbouring bytes (one table lookup over the blob, not one a rule).
    cls = _CLASSES[raw]
    prev, cur = cls[:-1], cls[1:]
    start = np.zeros(len(raw), dtype=U8)
    start[0] = ~cls[0] & _SEP
    start[1:] = prev & ~cur & _SEP  # after a separator
    start[1:] |= (cur >> 1) & (prev >> 2) & 1  # a capital after lower-case or a digit
    # a capital after a capital, before a lower-case letter
    start[1:-1] |= (cls[1:-1] >> 1) & (cls[:-2] >> 1) & (cls[2:] >> 3) & 1
    del prev, cur
    at = np.flatnonzero(start)
    del start, cls
    # Initials per string: the word starts between its newlines.
    numbers = np.diff(np.searchsorted(at, offsets)).astype(np.int64)
    owner = np.repeat(np.arange(count, dtype=np.int64), numbers)
    first = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(numbers, out=first[1:])
    rank = np.arange(len(at)) - first[owner]
    kept = rank < INITIALS_KEPT
    # The first initials as the bytes of a big-endian code, high byte first.
    packed = np.zeros((count, INITIALS_KEPT), dtype=U8)
    packed[owner[kept], rank[kept]] = _FOLD[raw[at[kept]]]
    for k in range(INITIALS_KEPT):
        codes |= packed[:, k].astype(U32) << U32(8 * (INITIALS_KEPT - 1 - k))
    return codes, numbers


def initials_code(text: bytes) -> tuple[int, int]:
    """A query's initials as a code range: the codes of every name whose
    packed initials start with `text` (at most `INITIALS_KEPT` bytes are
    compared) lie in [low, high)."""
    kept = text[:INITIALS_KEPT]
    low = 0
    for i, b in enumerate(kept):
        low |= b << (8 * (INITIALS_KEPT - 1 - i))
    span = 1 << (8 * (INITIALS_KEPT - len(kept)))
    return low, low + span
