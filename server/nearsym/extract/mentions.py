"""The names a source file mentions, as 32-bit keys.

Design note
-----------
How many files mention a name is a prior the ranking uses among name ties
(`RankPolicy.mentions`): `Config` used across a package is the one people
jump to, not a test's local `Config`. A mention is an identifier token of
the file's text (letters, digits, `_` and `$`, not starting with a digit),
read by one regular expression over the bytes the parser is given: the
skim that spares the parser most function bodies must not hide the calls
inside them, and a tree walk over every identifier node of a 10,000-line
file costs more in Python than the parse itself.

A file's mentions are its distinct identifiers, each as `name_key(name)`
(CRC-32 of its UTF-8 bytes: stable across processes and runs, unlike
`hash`), sorted, as the bytes of a `uint32` array: what a worker sends back
with the definitions (`FileDefs.mentions`). Two names sharing a key
(about one lookup in ten thousand on the 366,690 identifiers of the Linux
sources' 5,204 C files) only merge two counts.
"""

from __future__ import annotations

import re
import zlib
from array import array

_IDENTIFIER = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*")
MIN_LENGTH = 2
"""Shorter identifiers (`i`, `x`) are not kept: a one-letter name is never
told apart by how common it is, and they are in every file."""


def name_key(name: str) -> int:
    """The 32-bit key of a name (CRC-32 of its UTF-8 bytes)."""
    return zlib.crc32(name.encode("utf-8", "replace"))


def mention_keys(source: bytes) -> bytes:
    """The sorted keys of the distinct identifiers of `source`, as the
    bytes of a `uint32` array."""
    crc = zlib.crc32
    keys = array("I", sorted({crc(w) for w in _IDENTIFIER.findall(source) if len(w) >= MIN_LENGTH}))
    return keys.tobytes()
