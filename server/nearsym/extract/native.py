"""nearsym's C scans (`_scan.c`), where the install built them from this
source: each name is None where it did not (no compiler at install), or
where the module was built from an older `_scan.c` (an editable install
not built again after a pull), whose scans may differ from the Python
ones beside them."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

RangeArgs = tuple[tuple[int, int], tuple[int, int], int, int]
"""A `tree_sitter.Range`'s arguments: start point, end point, start byte, end byte."""

VERSION = 6
"""`_scan.c`'s own `VERSION`: raised with any change to what its scans give."""

mentions_of: Callable[[Sequence[bytes]], list[bytes]] | None = None
"""`mentions.mentions_of` in C."""
find_folds: Callable[[bytes, list[int], bool, int, bytes], list[tuple[int, int]]] | None = None
"""`folds.folds_in_python` in C, with the skim's fields as arguments."""
FLUSH_HASH = FLUSH_LABEL = 0
"""`find_folds`'s flags for a skim's `flush` lines: `#...`, and `label:`."""
spelled: Callable[[bytes, int], list[int]] | None = None
"""`folds.spelled_tokens` in C, for a skim `SPELLED` numbers."""
fold_ranges: Callable[[bytes, list[tuple[int, int]]], list[RangeArgs]] | None = None
"""`folds.ranges_in_python` in C: each range's arguments to `tree_sitter.Range`."""
const_names: Callable[[bytes, int], tuple[list[str], bytes] | None] | None = None
"""`consts.names_in_python` in C, the spans as native unsigned 32-bit words."""
Folds = list[tuple[int, int]]
quiet_folds: Callable[[bytes, int, Folds], Folds] | None = None
"""`comments.quiet_folds_in_python` in C, for a skim's `quiet` in `QUIET`."""
QUIET: dict[bytes, int] = {}
"""The skims' `quiet` regexes the C scan was written from, each to its
skim's number."""
SPELLED: dict[tuple[tuple[tuple[bytes, bytes], ...], bytes], int] = {}
"""The skims' `inner` tokens (word, regex) and `quiet` regex `spelled` was
written from, each to its number: a skim whose `inner` or `quiet` is not
one of them byte for byte is scanned in Python."""

try:
    from nearsym.extract import _scan
except ImportError:
    pass
else:
    if getattr(_scan, "VERSION", None) == VERSION:
        mentions_of, find_folds = _scan.mentions_of, _scan.find_folds
        FLUSH_HASH, FLUSH_LABEL = _scan.FLUSH_HASH, _scan.FLUSH_LABEL
        spelled, fold_ranges = _scan.spelled, _scan.fold_ranges
        if array("I").itemsize == 4:
            const_names = _scan.const_names
        SPELLED = {(inner, quiet): number for number, inner, quiet in _scan.SPELLED}
        QUIET = {quiet: number for number, _, quiet in _scan.SPELLED}
        quiet_folds = _scan.quiet_folds
