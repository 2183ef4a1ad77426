"""The names a source file mentions, as 32-bit keys.

Design note
-----------
How many files mention a name is a prior the ranking uses among name ties
(`RankPolicy.mentions`): `Config` used across a package is the one people
jump to, not a test's local `Config`. A mention is an identifier token of
the file's text: a run of letters, digits, `_` and `$` that starts with a
letter, `_` or `$` (a run that starts with a digit is a number: `0x1f`,
`10UL`), of `MIN_LENGTH` to `MAX_LENGTH` bytes, read from the bytes the
parser is given: the skim that spares the parser most function bodies
must not hide the calls inside them, and a tree walk over every identifier
node of a 10,000-line file costs more in Python than the parse itself.

A file's mentions are its distinct identifiers, each as its key (below),
sorted, as the bytes of a `uint32` array: what a worker sends back with the
definitions (`FileDefs.mentions`). Two names sharing a key only merge
two counts: among the Linux sources' 2.8 million distinct names, about 900
pairs do (n^2 / 2^33).

The scan is numpy's, over the files of a worker's task at once
(`mentions_of`): token edges from a byte-class table, and each token's key
from its bytes read eight at a time. A key is the top half of a 64-bit
hash: the token's bytes in 8-byte little-endian chunks, zero-padded (a
token holds no NUL, so the padding cannot be mistaken for its bytes), each
folded in by an xor, a multiply and a shift. Keys are stable across
processes and runs (they are stored in the cache), and `name_key` gives
the same key for a name as the scan does for its token. On Go 1.19's
library this takes 0.6 CPU seconds where a CRC-32 of each distinct token
took 1.0 (`bytes.split` made an object of every token), a tenth of what
the workers spend.

Where nearsym's C extension was built (`_scan.c`, at install), the same
scan runs there, file by file: each token's key as above, the file's
distinct keys kept in a hash set and sorted, 0.03 CPU seconds on Go's
library where numpy's took 0.8. The numpy scan stays for an install
without a compiler, and tests hold the two to the same keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

from nearsym.extract import native

MIN_LENGTH = 2
"""Shorter identifiers (`i`, `x`) are not kept: a one-letter name is never
told apart by how common it is, and they are in every file."""
MAX_LENGTH = 256
"""Longer runs are not kept: no one types them, and a key takes a numpy
pass per 8 bytes of the longest token (a generated 100 KB identifier
would take 12,500)."""

_WORD = np.zeros(256, dtype=bool)
"""The bytes an identifier holds."""
_HEAD = np.zeros(256, dtype=bool)
"""The bytes an identifier starts with."""
for _byte in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$":
    _WORD[_byte] = _HEAD[_byte] = True
for _byte in b"0123456789":
    _WORD[_byte] = True

_MULTIPLY = np.uint64(0xBF58476D1CE4E5B9)
_FINAL = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(29)
_HALF = np.uint64(32)
_LOW = np.uint64(0xFFFFFFFF)
_CHUNK_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [2**64 - 1], dtype=np.uint64)
"""The low `k` bytes of a chunk, by `k` from 0 to 8."""
_EMPTY = np.zeros(0, dtype=np.uint32)


def span_keys(
    buffer: bytes, starts: NDArray[np.int64], lengths: NDArray[np.int64]
) -> NDArray[np.uint32]:
    """The key of each token `buffer[start:start + length]` (see the module
    note), in order."""
    padded = buffer + bytes(8)
    # A uint64 starting at every byte: chunk reads at any offset.
    words = np.ndarray(shape=(len(buffer) + 1,), dtype="<u8", buffer=padded, strides=(1,))
    with np.errstate(over="ignore"):
        h = words[starts] & _CHUNK_MASKS[np.minimum(lengths, 8)]
        h *= _MULTIPLY
        h ^= h >> _SHIFT
        longer = np.flatnonzero(lengths > 8)
        offset = 8
        while len(longer):
            rest = lengths[longer] - offset
            chunk = words[starts[longer] + offset] & _CHUNK_MASKS[np.minimum(rest, 8)]
            chunk ^= h[longer]
            chunk *= _MULTIPLY
            chunk ^= chunk >> _SHIFT
            h[longer] = chunk
            offset += 8
            longer = longer[rest > 8]
        h *= _FINAL
    return (h >> _HALF).astype(np.uint32)


def mentions_of(sources: Sequence[bytes]) -> list[bytes]:
    """The sorted keys of the distinct identifiers of each of `sources`, as
    the bytes of a `uint32` array: in C where it was built, else
    `scan_with_numpy`."""
    if native.mentions_of is not None:
        return native.mentions_of(sources)
    return scan_with_numpy(sources)


def scan_with_numpy(sources: Sequence[bytes]) -> list[bytes]:
    """`mentions_of` in numpy: one pass over all of `sources` (a worker's
    task of files costs about what one file does in numpy's calls)."""
    if not sources:
        return []
    joined = b" ".join(sources)  # a space: no token runs from one file into the next
    size = len(joined)
    if size < MIN_LENGTH:
        return [b""] * len(sources)
    text = np.frombuffer(joined, dtype=np.uint8)
    word = _WORD[text]
    edges = np.flatnonzero(word[1:] != word[:-1]) + 1
    if word[0]:
        edges = np.concatenate(([0], edges))
    if word[-1]:
        edges = np.concatenate((edges, [size]))
    starts, lengths = edges[0::2], edges[1::2] - edges[0::2]
    keep = _HEAD[text[starts]] & (lengths >= MIN_LENGTH) & (lengths <= MAX_LENGTH)
    starts, lengths = starts[keep], lengths[keep]
    keys = span_keys(joined, starts, lengths)
    # Each key with its file's number above it: one sort makes them
    # distinct within each file, and the files fall in order.
    firsts = np.cumsum([0] + [len(s) + 1 for s in sources[:-1]])
    file_of = (np.searchsorted(firsts, starts, side="right") - 1).astype(np.uint64)
    tagged = _sorted_unique((file_of << _HALF) | keys)
    cuts = np.searchsorted(tagged >> _HALF, np.arange(len(sources) + 1, dtype=np.uint64)).tolist()
    low = (tagged & _LOW).astype(np.uint32)
    return [low[a:z].tobytes() for a, z in pairwise(cuts)]


def mention_keys(source: bytes) -> bytes:
    """`mentions_of` one file."""
    return mentions_of([source])[0]


def name_keys_of(names: Sequence[str]) -> NDArray[np.uint32]:
    """The key of each of `names` (its UTF-8 bytes' key), in order."""
    if not names:
        return _EMPTY
    encoded = [n.encode("utf-8", "replace") for n in names]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    starts = np.zeros(len(encoded), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return span_keys(b"".join(encoded), starts, lengths)


def name_key(name: str) -> int:
    """The key of one name (`name_keys_of`)."""
    return int(name_keys_of([name])[0])


def _sorted_unique(keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """`np.unique` by sorting, as `index.encoding.sorted_unique` (which this
    layer may not import): numpy 2's hashing `unique` is slower here."""
    ordered = np.sort(keys)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
