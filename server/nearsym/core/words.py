"""The words of an identifier: separators, word starts, query words.

Design note
-----------
Every part of the package that asks "where does a word begin?" asks here,
so the matcher's bonuses, the query's words and the tests agree on one
answer (as clangd's `FuzzyMatch` computes the roles of a word's characters
with one function that its matcher and its index share).

- `SEPARATORS` are the characters that join the words of an identifier or
  of a qualified name: `_ - . / : $ # \\` and the space. A separator is never
  itself a word start; the character after it is.
- `word_starts` marks, for many names at once (rows of a code point
  matrix), the characters that begin a word: the first character that is
  not a separator, the character after a separator, a capital after a
  lower-case letter or digit (`getUser`, `utf8Decode`), and the capital that
  ends a run of capitals before a lower-case letter (the `S` of
  `HTTPServer`). Case is Unicode's (`str.isupper`, `str.islower`,
  `str.isdigit`), read once per distinct character.
- `split_words` cuts a query or identifier into its words, on whitespace,
  on `SEPARATORS` and at camel humps (ASCII letters and digits; a chunk
  with none is one word as it stands).

Deliberately not handled: word boundaries inside all-lower-case runs
(`getuser` is one word) and scripts without case.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

SEPARATORS = "_-./:$ #\\"
"""The characters between the words of an identifier or a qualified name."""

PAD = -1
"""What the cells of a wide (code point) name matrix hold past a name's end:
no character has it. (A narrow, ASCII matrix holds 0 there.)"""

_SPLIT = re.compile(rf"[\s{re.escape(SEPARATORS)}]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Per byte of an ASCII name: separator, upper, lower, digit (False past 127).
_ASCII = 128
_SEP_TABLE = np.zeros(256, dtype=np.bool_)
_SEP_TABLE[[ord(c) for c in SEPARATORS]] = True
_UPPER_TABLE = np.array([c < _ASCII and chr(c).isupper() for c in range(256)], dtype=np.bool_)
_LOWER_TABLE = np.array([c < _ASCII and chr(c).islower() for c in range(256)], dtype=np.bool_)
_DIGIT_TABLE = np.array([c < _ASCII and chr(c).isdigit() for c in range(256)], dtype=np.bool_)

CACHE_WORDS = 4096
"""Queries and names whose words are memoised: a few keystrokes' worth."""


Matrix = NDArray[np.uint8] | NDArray[np.int32]
"""Names as rows of characters: narrow (`uint8`, every name ASCII, 0 past a
name's end) or wide (`int32` code points, `PAD` past a name's end)."""


def name_matrix(names: Sequence[str], narrow: bool = True) -> tuple[Matrix, NDArray[np.int64]]:
    """The characters of `names` as rows of a matrix, and each name's
    length: narrow when every name is ASCII and `narrow` allows it (a byte
    per cell), otherwise wide."""
    lengths = np.fromiter((len(n) for n in names), dtype=np.int64, count=len(names))
    width = int(lengths.max()) if len(names) else 0
    joined = "".join(names)
    out: Matrix
    if narrow and joined.isascii():
        out = np.zeros((len(names), width), dtype=np.uint8)
        flat: NDArray[np.generic] = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    else:
        out = np.full((len(names), width), PAD, dtype=np.int32)
        flat = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        flat = flat.astype(np.int32)
    rows = np.repeat(np.arange(len(names)), lengths)
    starts = np.cumsum(lengths) - lengths
    cols = np.arange(len(flat)) - np.repeat(starts, lengths)
    out[rows, cols] = flat
    return out, lengths


def _classes(chars: Matrix) -> tuple[NDArray[np.bool_], ...]:
    """Separator, upper, lower and digit, per cell (all False past a name's
    end)."""
    if chars.dtype == np.uint8:
        return _SEP_TABLE[chars], _UPPER_TABLE[chars], _LOWER_TABLE[chars], _DIGIT_TABLE[chars]
    ascii_ = (chars >= 0) & (chars < _ASCII)
    low = np.where(ascii_, chars, 0)
    sep = _SEP_TABLE[low] & ascii_
    upper = _UPPER_TABLE[low] & ascii_
    lower = _LOWER_TABLE[low] & ascii_
    digit = _DIGIT_TABLE[low] & ascii_
    wide = chars >= _ASCII
    if wide.any():
        # Not `np.unique`: its first call imports `numpy.ma` (8 ms, 1.3 MB).
        points = np.array(sorted(set(chars[wide].tolist())), dtype=chars.dtype)
        table = [chr(p) for p in points.tolist()]
        for flag, test in ((upper, str.isupper), (lower, str.islower), (digit, str.isdigit)):
            hits = points[np.fromiter((test(c) for c in table), np.bool_, len(table))]
            flag |= np.isin(chars, hits)
    return sep, upper, lower, digit


def word_starts(chars: Matrix, lengths: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Which cells of a name matrix (`name_matrix`) begin a word (see the
    module note): `HTTPServer` -> H, S; `register_blueprint` -> r, b;
    `__init__` -> i; `utf8Decode` -> u, D."""
    sep, upper, lower, digit = _classes(chars)
    none = np.zeros_like(sep)
    prev_sep = np.ones_like(sep)  # before the name: as after a separator
    prev_sep[:, 1:] = sep[:, :-1]
    prev_low_digit = none.copy()
    prev_low_digit[:, 1:] = (lower | digit)[:, :-1]
    prev_upper = none.copy()
    prev_upper[:, 1:] = upper[:, :-1]
    next_lower = none.copy()
    next_lower[:, :-1] = lower[:, 1:]
    camel = upper & prev_low_digit
    acronym_end = upper & prev_upper & next_lower
    inside = np.arange(chars.shape[1])[None, :] < lengths[:, None]
    starts: NDArray[np.bool_] = ((prev_sep & ~sep) | camel | acronym_end) & inside
    return starts


@lru_cache(maxsize=CACHE_WORDS)
def starts_of(name: str) -> tuple[bool, ...]:
    """`word_starts` of one name (a matrix of one row), per character."""
    chars, lengths = name_matrix([name])
    return tuple(word_starts(chars, lengths)[0].tolist())


def name_initials(name: str) -> str:
    """The first character of each word of `name`, lower-cased:
    `ConfigError` -> `ce`, `register_blueprint` -> `rb`."""
    return "".join(c for c, s in zip(name, starts_of(name), strict=True) if s).lower()


def split_words(text: str) -> tuple[str, ...]:
    """Split an identifier or query into words: `getUserId` -> get, User, Id;
    `search document` -> search, document; `HTTPServer` -> HTTP, Server."""
    return _split_words(text)


@lru_cache(maxsize=CACHE_WORDS)
def _split_words(text: str) -> tuple[str, ...]:
    words: list[str] = []
    for chunk in _SPLIT.split(text):
        if chunk:
            words.extend(_CAMEL.findall(chunk) or [chunk])
    return tuple(words)


def is_subsequence(query: str, name: str) -> bool:
    """Whether `query` occurs in `name` in order (both already lower-cased)."""
    find = name.find
    at = 0
    for ch in query:  # a `find` per character: no generator step per one
        at = find(ch, at) + 1
        if not at:
            return False
    return True


def clear_caches() -> None:
    """Forget memoised word splits (benchmarks measure each pass cold)."""
    _split_words.cache_clear()
    starts_of.cache_clear()
