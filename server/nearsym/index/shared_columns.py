"""The shared index's derived name columns: `initials` and `fuzzy`.

Both are defined a name at a time (`initials`, `fuzzy_trigrams`), and
computed for publishing a batch of names at a time (`name_columns`).

They are computed for every published definition; done a name at a time in Python
they were half of a publish (6.7 s of 13 s for twisted's 38,000
definitions, on a loaded machine). Here the ASCII names of a batch (nearly
all) are laid end to end in one byte array and both columns come out of a
few numpy passes; a name with any other character goes through the
per-name functions. The output is the same, name for name (tested against
`fuzzy_trigrams` and `initials`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

from nearsym.core.words import starts_of as word_starts

_SEPARATOR_BYTES = np.zeros(256, dtype=bool)
_SEPARATOR_BYTES[list(b"_-./:$ #\\")] = True
_UPPER = np.zeros(256, dtype=bool)
_UPPER[list(range(65, 91))] = True
_LOWER = np.zeros(256, dtype=bool)
_LOWER[list(range(97, 123))] = True
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[list(range(48, 58))] = True
_TO_LOWER = np.arange(256, dtype=np.uint8)
_TO_LOWER[65:91] += 32


def initials(name: str) -> str:
    """The lower-cased first letter of each of `name`'s words:
    `WorkspaceSymbolParams` -> `wsp`, `get_user_id` -> `gui`,
    `HTTPServer` -> `hs` (the matcher's word starts, `core.match`)."""
    return "".join(c for c, start in zip(name.lower(), word_starts(name), strict=False) if start)


@lru_cache(maxsize=65536)
def fuzzy_trigrams(name: str) -> list[int]:
    """The trigrams a subsequence query can hit in `name`, as integers.

    After clangd's Dex (`index/dex/Trigram.cpp`): a typed subsequence mostly
    moves through a name either to the next character or to the start of
    the next word (`wsp` -> WorkspaceSymbolParams, `gus` -> get_user_string).
    So each character is followed by two successors, the next character
    and the next word start, and the name's trigrams are every path of
    three through that graph. A query is retrieved by the subsequence tier
    when every trigram of its own consecutive characters is among them
    (`query_trigrams`), then checked exactly with LIKE. Separators are left
    out of both. A query that skips inside a word twice in a row (`rtpl`
    for render_template) is not found this way; the rerank would rank such
    a match low anyway. About 3 trigrams per character: 30-45 for a typical
    C name.

    Each trigram is its three UTF-8 bytes packed into 24 bits (a byte of a
    non-ASCII character counts as a character: the same on both sides).
    """
    chars: list[int] = []
    heads: list[bool] = []
    if name.isascii():
        raw = name.lower().encode()
        for ch, byte, start in zip(name, raw, word_starts(name), strict=True):
            if ch not in _SEPARATORS:
                chars.append(byte)
                heads.append(start)
    else:
        for ch, start in zip(name, word_starts(name), strict=True):
            if ch in _SEPARATORS:
                continue
            for k, byte in enumerate(ch.lower().encode("utf-8", "surrogatepass")):
                chars.append(byte)
                heads.append(start and k == 0)
    n = len(chars)
    if n < 3:
        return []
    # after[i]: the positions a query may move to from i.
    after: list[tuple[int, ...]] = []
    head = n
    for i in range(n - 1, -1, -1):
        nxt = i + 1
        if nxt >= n:
            after.append(())
        elif head == nxt or head >= n:
            after.append((nxt,))
        else:
            after.append((nxt, head))
        if heads[i]:
            head = i
    after.reverse()
    out = {
        (chars[i] << 16) | (chars[j] << 8) | chars[k]
        for i in range(n - 2)
        for j in after[i]
        for k in after[j]
    }
    return sorted(out)


def query_trigrams(text: str) -> list[int]:
    """The consecutive trigrams of a lower-cased query, separators left out
    (see `fuzzy_trigrams`)."""
    raw = bytes(
        b for ch in text if ch not in _SEPARATORS for b in ch.encode("utf-8", "surrogatepass")
    )
    return sorted({(raw[i] << 16) | (raw[i + 1] << 8) | raw[i + 2] for i in range(len(raw) - 2)})


_SEPARATORS = frozenset("_-./:$ #\\")


def name_columns(names: Sequence[str]) -> tuple[list[str], list[list[int]]]:
    """Per name: its initials, and its fuzzy trigrams."""
    out_initials, others, ascii_at, codes, bounds = _columns(names)
    out_fuzzy: list[list[int]] = [others.get(i, []) for i in range(len(names))]
    listed = codes.tolist()
    for k, i in enumerate(ascii_at):
        lo, hi = bounds[k], bounds[k + 1]
        if hi > lo:
            out_fuzzy[i] = listed[lo:hi]
    return out_initials, out_fuzzy


def name_columns_text(names: Sequence[str]) -> tuple[list[str], list[str]]:
    """Per name: its initials, and its fuzzy trigrams as the elements of
    PostgreSQL's text form of an integer array, comma-separated, without
    the braces (`6513249,6515055`; `` for none): the caller writes
    `{...}` around them in its COPY line.

    The same values as `name_columns`, formatted in numpy: psycopg's
    dumper of a Python list runs in Python a value at a time, and with 35
    trigrams a name it was most of a publisher's formatting time. Every
    value is written as 8 digits, zero-padded (a trigram is below 2**24,
    8 digits; nearly all of ASCII names have 7; the server reads `06513249`
    as 6513249), through a table of the 10,000 four-digit groups."""
    out_initials, others, ascii_at, codes, bounds = _columns(names)
    out_fuzzy = [""] * len(names)
    for i, values in others.items():
        out_fuzzy[i] = ",".join(map(str, values))
    if not ascii_at or not len(codes):
        return out_initials, out_fuzzy
    cells = np.empty((len(codes), _CELL), dtype=np.uint8)
    cells[:, 0:4] = _FOUR_DIGITS[codes // 10_000]
    cells[:, 4:8] = _FOUR_DIGITS[codes % 10_000]
    cells[:, 8] = ord(",")
    text = cells.tobytes().decode("ascii")
    # A name's cells end with a comma; its slice stops before it (`- 1`),
    # and a name without trigrams gets text[a:a-1], the empty string.
    ends = [b * _CELL for b in bounds]
    texts = [text[a : b - 1] for a, b in pairwise(ends)]
    if len(ascii_at) == len(names):
        return out_initials, texts
    for i, value in zip(ascii_at, texts, strict=True):
        out_fuzzy[i] = value
    return out_initials, out_fuzzy


_CELL = 9
"""A trigram's cell in `name_columns_text`: 8 digits and a comma."""

_FOUR_DIGITS = np.array([list(f"{k:04d}".encode()) for k in range(10_000)], dtype=np.uint8)
"""Row k: the four ASCII digits of k, zero-padded."""


def _columns(
    names: Sequence[str],
) -> tuple[list[str], dict[int, list[int]], list[int], NDArray[np.int64], list[int]]:
    """The batch computation behind `name_columns` and `name_columns_text`:
    the initials of every name, the trigrams of the names that are not ASCII
    (a name at a time, by position), the positions of the ASCII names, and
    their trigrams as one sorted array with each name's bounds in it (the
    k-th ASCII name's are `codes[bounds[k]:bounds[k + 1]]`)."""
    out_initials: list[str] = [""] * len(names)
    out_fuzzy: dict[int, list[int]] = {}
    joined = "".join(names)
    if joined.isascii():  # nearly every batch: no name to look at alone
        ascii_at = list(range(len(names)))
        chosen: Sequence[str] = names
    else:
        ascii_at = []
        for i, name in enumerate(names):
            if name.isascii():
                ascii_at.append(i)
            else:
                out_initials[i] = initials(name)
                out_fuzzy[i] = fuzzy_trigrams(name)
        chosen = [names[i] for i in ascii_at]
        joined = "".join(chosen)
    none = np.zeros(0, dtype=np.int64)
    if not ascii_at:
        return out_initials, out_fuzzy, ascii_at, none, [0]
    raw = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    lengths = np.fromiter(map(len, chosen), dtype=np.int64, count=len(chosen))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    owner = np.repeat(np.arange(len(chosen), dtype=np.int64), lengths)
    heads = _word_starts(raw, starts, lengths)
    _fill_initials(raw, heads, owner, len(chosen), ascii_at, out_initials)
    # Separators out; positions renumbered within the kept characters.
    keep = ~_SEPARATOR_BYTES[raw]
    chars = _TO_LOWER[raw[keep]].astype(np.int64)
    head = heads[keep]
    who = owner[keep]
    n = len(chars)
    if n == 0:
        return out_initials, out_fuzzy, ascii_at, none, [0] * (len(chosen) + 1)
    end = np.zeros(len(chosen), dtype=np.int64)
    np.add.at(end, who, 1)
    end = np.cumsum(end)[who]  # per kept character: its name's end
    # next_head[p]: the first word start at or after p in the same name, or n.
    head_at = np.flatnonzero(head)
    found = np.searchsorted(head_at, np.arange(n + 1))
    next_head = np.full(n + 1, n, dtype=np.int64)
    ok = found < len(head_at)
    next_head[ok] = head_at[found[ok]]
    position = np.arange(n, dtype=np.int64)
    # The two successors of each position: the next character, and the next
    # word start after it (when that is another position in the same name).
    first = position + 1
    first_ok = first < end
    safe_first = np.minimum(first, n)
    second = next_head[safe_first]
    second_ok = first_ok & (second < end) & (second != first)
    keys: list[NDArray[np.int64]] = []
    for a, a_ok in ((first, first_ok), (second, second_ok)):
        a_safe = np.minimum(a, n - 1)
        a_end = end[a_safe]
        b1 = a_safe + 1
        b1_ok = a_ok & (b1 < a_end)
        b2 = next_head[np.minimum(b1, n)]
        b2_ok = b1_ok & (b2 < a_end) & (b2 != b1)
        for b, b_ok in ((b1, b1_ok), (b2, b2_ok)):
            at = np.flatnonzero(b_ok)
            code = (chars[at] << 16) | (chars[a_safe[at]] << 8) | chars[np.minimum(b[at], n - 1)]
            keys.append((who[at] << 24) | code)
    # Sorted and deduplicated by hand: np.unique's hash path took 6 s for the
    # 1.2 million keys of 20,000 names (numpy 2.3); a sort takes 0.1 s.
    every = np.sort(np.concatenate(keys))
    if len(every):
        every = every[np.concatenate(([True], every[1:] != every[:-1]))]
    name_of = every >> 24
    bounds = np.searchsorted(name_of, np.arange(len(chosen) + 1)).tolist()
    return out_initials, out_fuzzy, ascii_at, every & 0xFFFFFF, bounds


def _word_starts(
    raw: NDArray[np.uint8], starts: NDArray[np.int64], lengths: NDArray[np.int64]
) -> NDArray[np.bool_]:
    """`core.match.word_starts` for names laid end to end (ASCII)."""
    n = len(raw)
    sep = _SEPARATOR_BYTES[raw]
    upper = _UPPER[raw]
    prev = np.empty(n, dtype=np.uint8)
    prev[1:] = raw[:-1]
    nxt = np.zeros(n, dtype=np.uint8)
    nxt[:-1] = raw[1:]
    first = np.zeros(n, dtype=bool)
    first[starts[lengths > 0]] = True
    last = np.zeros(n, dtype=bool)
    last[(starts + lengths - 1)[lengths > 0]] = True
    prev_sep = _SEPARATOR_BYTES[prev] & ~first
    hump = upper & (_LOWER[prev] | _DIGIT[prev]) & ~first
    acronym_end = upper & _UPPER[prev] & _LOWER[nxt] & ~first & ~last
    return ~sep & (first | prev_sep | hump | acronym_end)


def _fill_initials(
    raw: NDArray[np.uint8],
    heads: NDArray[np.bool_],
    owner: NDArray[np.int64],
    count: int,
    where: list[int],
    out: list[str],
) -> None:
    at = np.flatnonzero(heads)
    letters = _TO_LOWER[raw[at]].tobytes().decode("ascii")
    bounds = np.searchsorted(owner[at], np.arange(count + 1)).tolist()
    for k, i in enumerate(where):
        out[i] = letters[bounds[k] : bounds[k + 1]]
