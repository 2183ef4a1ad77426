"""The names a source file mentions, as 32-bit keys.

Design note
-----------
How many files mention a name is a prior the ranking uses among name ties
(`RankPolicy.mentions`): `Config` used across a package is the one people
jump to, not a test's local `Config`. A mention is an identifier token of
the file's text (letters, digits, `_` and `$`, not starting with a digit),
read from the bytes the parser is given by a scan in C (`mention_keys`): the
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

import zlib
from array import array

MIN_LENGTH = 2
"""Shorter identifiers (`i`, `x`) are not kept: a one-letter name is never
told apart by how common it is, and they are in every file."""
_WORD_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$"
_SPACED = bytes(c if c in _WORD_BYTES else 32 for c in range(256))
"""A `bytes.translate` table: every byte an identifier cannot hold becomes
a space."""
_DIGITS = b"0123456789"


def name_key(name: str) -> int:
    """The 32-bit key of a name (CRC-32 of its UTF-8 bytes)."""
    return zlib.crc32(name.encode("utf-8", "replace"))


def mention_keys(source: bytes) -> bytes:
    """The sorted keys of the distinct identifiers of `source`, as the
    bytes of a `uint32` array."""
    # The runs of identifier bytes, distinct, each found in C (`translate`,
    # `split`, `set`): a file spells each name several times, and a regex
    # match and a CRC per occurrence cost as much as parsing the file on
    # the Linux kernel's C. A run's identifier starts after its leading
    # digits (`0x1f` holds `x1f`, as a scan for identifiers finds).
    crc = zlib.crc32
    found: set[int] = set()
    for run in set(source.translate(_SPACED).split()):
        if run[0] < 58:  # a digit
            run = run.lstrip(_DIGITS)
        if len(run) >= MIN_LENGTH:
            found.add(crc(run))
    return array("I", sorted(found)).tobytes()
