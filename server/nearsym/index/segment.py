"""An immutable, columnar slice of an index: the definitions of some files.

Design note
-----------
A namespace's index is a short list of segments (see `index`). A segment
stores its definitions as numpy columns, 14 to 16 bytes a row, and its
distinct names ("entries") once each:

- rows, in file order (files sorted by path, definitions by position):
  entry id, line and column (the end is the name's width; other spans are
  kept whole aside), kind byte (`columns.LOCAL_BIT` marks a local), and the
  container id (a column, or where most rows have none, the rows that have
  one);
- entries, sorted by lower-cased name: the lower-cased names joined by
  newlines into one bytes blob and the original names into another, each
  with a `uint32` offset per entry, a length, a 64-bit mask of the
  characters the name holds, and its rows (`post`, grouped by entry, in row
  order);
- a trigram index over the lower-cased entries: for each trigram code, the
  sorted entries holding it (as 16-bit gaps where that is smaller).

Candidate retrieval asks four questions of every segment, each answered
without a Python loop over the entries:

- exact: the entries equal to the query (two bisections over the blob);
- prefix: the entries between `q` and `q + 0xff` (two bisections);
- substring: the intersection of the query's trigram lists (verified), or
  for one or two characters the entries whose mask holds the query's;
- subsequence: the entries whose mask holds every query character,
  verified in order by a regex that cannot backtrack (`[^a]*a[^b]*b`).

Each question's entries come out shortest first (a stable radix sort of a
`uint16` length column), so the index can merge segments lazily and stop as
soon as the pool is full.

A file that is replaced or removed is not touched in its segment: its rows
become dead (`alive` is cleared), and merging segments drops them.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import marshal
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nearsym.core.filedefs import FileDefs

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


WIDE_RANGE = 65_536
"""A prefix range wider than this is read in shortest-first chunks."""
TRIGRAM_SLICE = 4_000_000
"""Bytes of names read at a time when building the trigram lists."""
SCAN_CHUNK = 32_768
"""Entries per chunk when a tier reads the shortest-first order."""
STARTS_BLOCK_BITS = 6
"""Entries per 32-bit base of `post` offsets: 64 (`_pack_starts`); 64 names
with 1,024 rows each would still fit the 16-bit rest."""

CHAR_BITS = _char_bits()
"""Per byte, its bit in an entry's 32-bit character mask: a-z a bit each,
the digits one, `_` one, every other byte one of four."""


def char_mask(text: bytes) -> int:
    mask = 0
    for b in text:
        mask |= int(CHAR_BITS[b])
    return mask


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


class Substring(KeyCheck):
    def __init__(self, text: bytes) -> None:
        self.text = text

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
        self.pattern = subsequence_pattern(text, lines=True)

    def passing(self, keys: list[bytes]) -> list[bool]:
        joined = b"\n".join(keys)
        starts = list(itertools.accumulate((len(k) + 1 for k in keys), initial=0))
        out = [False] * len(keys)
        for m in self.pattern.finditer(joined):  # each match starts a key
            out[bisect.bisect_right(starts, m.start()) - 1] = True
        return out


@dataclass(slots=True)
class RowBatch:
    """Rows gathered for one segment build, in file order."""

    names: list[str]
    containers: list[str]
    spans: NDArray[np.uint32]  # (n, 4)
    kinds: NDArray[np.uint8]
    file_ids: list[int]
    file_languages: list[str]
    file_counts: list[int]


def batch_from_files(files: Sequence[tuple[int, FileDefs]]) -> RowBatch:
    names: list[str] = []
    containers: list[str] = []
    spans: list[bytes] = []
    kinds: list[bytes] = []
    for _, defs in files:
        names.extend(defs.names)
        containers.extend(defs.containers)
        spans.append(defs.spans.tobytes())
        kinds.append(defs.kinds)
    return RowBatch(
        names,
        containers,
        np.frombuffer(b"".join(spans), dtype=U32).reshape(-1, 4),
        np.frombuffer(b"".join(kinds), dtype=U8),
        [fid for fid, _ in files],
        [d.language for _, d in files],
        [len(d) for _, d in files],
    )


class Segment:
    """Immutable definitions of a set of files, plus their liveness."""

    __slots__ = (
        "alive",
        "by_length",
        "case_blob",
        "case_ids",
        "case_kind",
        "case_off",
        "col",
        "cont",
        "cont_blob",
        "cont_boff",
        "cont_ids",
        "cont_lengths",
        "cont_lower",
        "cont_masks",
        "cont_off",
        "cont_post",
        "cont_post_start",
        "cont_rows",
        "entry",
        "extra_rows",
        "extra_spans",
        "fid_order",
        "fid_sorted",
        "file_ids",
        "file_lang",
        "file_start",
        "kind",
        "languages",
        "line",
        "live_rows",
        "lo_off",
        "lower",
        "masks",
        "post",
        "post_base",
        "post_local",
        "tri16",
        "tri32",
        "tri_base",
        "tri_big",
        "tri_big_off",
        "tri_codes",
        "tri_len",
        "tri_off",
        "tri_small",
        "tri_suffix",
        "tri_suffix_order",
    )

    def __init__(
        self,
        entries: list[str],
        row_entry: NDArray[np.uint32],
        containers: list[str],
        row_cont: NDArray[np.uint32],
        spans: NDArray[np.uint32],
        kinds: NDArray[np.uint8],
        file_ids: list[int],
        file_languages: list[str],
        file_counts: Sequence[int],
    ) -> None:
        """`entries` sorted by (lower-cased, original), no newlines in them."""
        self.entry = row_entry
        self.cont = row_cont
        # Containers and languages as a blob and codes, not Python objects:
        # millions of long-lived small objects would pin the allocator's
        # arenas that the build's garbage frees.
        self.cont_blob = _joined(containers)
        self.cont_boff = np.flatnonzero(np.frombuffer(self.cont_blob, dtype=U8) == 10).astype(U32)
        self.kind = kinds
        self.file_ids = np.asarray(file_ids, dtype=U32)
        self.languages = tuple(sorted(set(file_languages)))
        code = {name: i for i, name in enumerate(self.languages)}
        self.file_lang = np.asarray([code[n] for n in file_languages], dtype=U8)
        self.fid_order = np.argsort(self.file_ids, kind="stable").astype(U32)
        self.fid_sorted = self.file_ids[self.fid_order]
        start = np.zeros(len(file_counts) + 1, dtype=np.int64)
        np.cumsum(np.asarray(file_counts, dtype=np.int64), out=start[1:])
        self.file_start = start
        self.alive = np.ones(len(file_ids), dtype=bool)
        self.live_rows = len(row_entry)

        lowers = [e.lower() for e in entries]
        self.lower = _joined(lowers)
        low = np.frombuffer(self.lower, dtype=U8)
        self.lo_off = np.flatnonzero(low == 10).astype(U32)
        # Spans: line and column, 16 and 8 bits; the end is the name's own
        # width (its key's length: ASCII names, nearly all). A name past
        # line 65,535 or column 255 (none of the Linux kernel's 4 million),
        # spanning other text (`ns::add` named `add`, a quoted key), not
        # ASCII, or ending on a later line keeps its whole span in
        # `extra_spans`.
        line, col, end_line, end_col = (spans[:, k].astype(np.int64) for k in range(4))
        key_width = (np.diff(self.lo_off).astype(np.int64) - 1)[row_entry]
        simple = (end_line == line) & (end_col - col == key_width)
        simple &= (line <= 65535) & (col <= 255)
        self.line = np.where(simple, line, 0).astype(U16)
        self.col = np.where(simple, col, 0).astype(U8)
        extra = np.flatnonzero(~simple)
        self.extra_rows = extra.astype(U32)
        self.extra_spans = np.ascontiguousarray(spans[extra]).reshape(-1).astype(U32)
        del line, col, end_line, end_col, key_width, simple
        # Original spellings only where they differ from the lower-cased key
        # (C and Python names mostly do not).
        # Per entry: 0 spelled as its key, 1 all capitals (C macros), 2 a
        # capital first, 3 spelled otherwise (kept in `case_blob`).
        spelling = bytearray(len(entries))
        differ: list[int] = []
        for i, (e, k) in enumerate(zip(entries, lowers, strict=True)):
            if e == k:
                continue
            if e == k.upper():
                spelling[i] = 1
            elif e == k[:1].upper() + k[1:]:
                spelling[i] = 2
            else:
                spelling[i] = 3
                differ.append(i)
        self.case_kind = np.frombuffer(bytes(spelling), dtype=U8)
        self.case_ids = np.asarray(differ, dtype=U32)
        self.case_blob = _joined([entries[i] for i in differ])
        self.case_off = np.flatnonzero(np.frombuffer(self.case_blob, dtype=U8) == 10).astype(U32)
        lengths = np.minimum(np.diff(self.lo_off) - 1, 65535).astype(U16)
        if entries:
            self.masks = np.bitwise_or.reduceat(CHAR_BITS[low], self.lo_off[:-1].astype(np.int64))
        else:
            self.masks = np.zeros(0, dtype=U32)
        m = len(entries)
        self.post = np.argsort(row_entry, kind="stable").astype(U32)
        counts = np.bincount(row_entry, minlength=m) if len(row_entry) else np.zeros(m, np.int64)
        post_start = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(counts, out=post_start[1:])
        self.post_base, self.post_local = _pack_starts(post_start)
        del post_start
        (
            self.tri_codes,
            self.tri_small,
            self.tri_base,
            self.tri_off,
            self.tri_len,
            self.tri16,
            self.tri32,
            self.tri_big,
            self.tri_big_off,
        ) = _pack(*_trigrams(low))
        # Entries shortest first, for tiers read in that order a chunk at a
        # time; trigram numbers by their last two bytes, for three-byte
        # queries at odd offsets.
        self.by_length = np.argsort(lengths, kind="stable").astype(U32)
        # The masks are only ever scanned in that order: store them so, and
        # a scan reads memory front to back.
        self.masks = self.masks[self.by_length]
        order = np.argsort(self.tri_codes & U32(0xFFFF), kind="stable").astype(U32)
        self.tri_suffix_order = order
        self.tri_suffix = (self.tri_codes[order] & U32(0xFFFF)).astype(U32)
        # Containers: lower-cased, masks, and their rows, for the owner tier
        # (`SyncQueue` reaches `SyncQueue.push`). Rows without a container
        # are not listed.
        self.cont_lower = _joined([c.lower().replace("\n", " ") for c in containers])
        clow = np.frombuffer(self.cont_lower, dtype=U8)
        self.cont_off = np.flatnonzero(clow == 10).astype(U32)
        self.cont_lengths = np.minimum(np.diff(self.cont_off) - 1, 65535).astype(U16)
        if containers:
            self.cont_masks = np.bitwise_or.reduceat(
                CHAR_BITS[clow], self.cont_off[:-1].astype(np.int64)
            )
        else:
            self.cont_masks = np.zeros(0, dtype=U32)
        named = (
            np.flatnonzero(self.cont_lengths[row_cont] > 0)
            if len(row_cont)
            else np.zeros(0, np.int64)
        )
        owners = row_cont[named]
        self.cont_post = named[np.argsort(owners, kind="stable")].astype(U32)
        ccounts = (
            np.bincount(owners, minlength=len(containers))
            if len(owners)
            else np.zeros(len(containers), np.int64)
        )
        cstart = np.zeros(len(containers) + 1, dtype=U32)
        np.cumsum(ccounts, out=cstart[1:])
        self.cont_post_start = cstart
        # Each row's container: a column, or where most rows have none (C
        # functions), the rows that have one and their containers (`conts`).
        if len(containers) and self.cont_lengths[0] == 0 and 2 * len(named) < len(row_cont):
            self.cont = np.zeros(0, dtype=U32)
            self.cont_rows = named.astype(U32)
            self.cont_ids = owners.astype(U32)
        else:
            self.cont_rows = self.cont_ids = np.zeros(0, dtype=U32)

    # -- building -------------------------------------------------------------
    @staticmethod
    def from_batch(batch: RowBatch) -> Segment:
        names = batch.names
        if any("\n" in n for n in names):
            names = [n.replace("\n", " ") for n in names]
        entries = sorted(set(names))
        entries.sort(key=str.lower)
        ids = {e: i for i, e in enumerate(entries)}
        row_entry = np.fromiter((ids[n] for n in names), dtype=U32, count=len(names))
        owners = batch.containers
        if any("\n" in c for c in owners):
            owners = [c.replace("\n", " ") for c in owners]
        containers = sorted(set(owners))
        cids = {c: i for i, c in enumerate(containers)}
        row_cont = np.fromiter((cids[c] for c in owners), dtype=U32, count=len(names))
        return Segment(
            entries,
            row_entry,
            containers,
            row_cont,
            batch.spans,
            batch.kinds,
            batch.file_ids,
            batch.file_languages,
            batch.file_counts,
        )

    @staticmethod
    def merge(segments: Sequence[Segment], path_of: Sequence[str | None]) -> Segment:
        """One segment holding the live files of `segments`, files in path
        order. Rows are moved as columns; only distinct names and containers
        are touched one by one."""
        files: list[tuple[str, int, int]] = []  # (path, segment number, file position)
        for s_no, seg in enumerate(segments):
            for pos in np.flatnonzero(seg.alive).tolist():
                path = path_of[int(seg.file_ids[pos])]
                if path is not None:
                    files.append((path, s_no, pos))
        files.sort()
        entries_set: set[str] = set()
        containers_set: set[str] = set()
        entry_lists: list[list[str]] = []
        container_lists: list[list[str]] = []
        for seg in segments:
            names = seg.entry_names()
            entry_lists.append(names)
            live = seg.live_row_mask()
            used = sorted_unique(seg.entry[live])
            entries_set.update(names[i] for i in used.tolist())
            container_lists.append(seg.container_names())
            used_c = sorted_unique(seg.conts(np.flatnonzero(live)))
            containers_set.update(container_lists[-1][i] for i in used_c.tolist())
        entries = sorted(entries_set)
        entries.sort(key=str.lower)
        ids = {e: i for i, e in enumerate(entries)}
        containers = sorted(containers_set)
        cids = {c: i for i, c in enumerate(containers)}
        remap_e = [
            np.fromiter((ids.get(n, 0) for n in names), dtype=U32, count=len(names))
            for names in entry_lists
        ]
        remap_c = [
            np.fromiter((cids.get(c, 0) for c in cl), dtype=U32, count=len(cl))
            for cl in container_lists
        ]
        # Rows move as columns: one gather per segment, not per file.
        n_files = len(files)
        f_seg = np.fromiter((f[1] for f in files), dtype=np.int64, count=n_files)
        f_pos = np.fromiter((f[2] for f in files), dtype=np.int64, count=n_files)
        f_start = np.zeros(n_files, dtype=np.int64)
        f_count = np.zeros(n_files, dtype=np.int64)
        file_ids: list[int] = [0] * n_files
        languages: list[str] = [""] * n_files
        files_of = [np.flatnonzero(f_seg == s_no) for s_no in range(len(segments))]
        for seg, mine in zip(segments, files_of, strict=True):
            where = f_pos[mine]
            f_start[mine] = seg.file_start[where]
            f_count[mine] = seg.file_start[where + 1] - seg.file_start[where]
            for at, fid, lang in zip(
                mine.tolist(),
                seg.file_ids[where].tolist(),
                seg.file_lang[where].tolist(),
                strict=True,
            ):
                file_ids[at] = fid
                languages[at] = seg.languages[lang]
        out_start = np.zeros(n_files + 1, dtype=np.int64)
        np.cumsum(f_count, out=out_start[1:])
        total = int(out_start[-1])
        row_entry = np.zeros(total, dtype=U32)
        row_cont = np.zeros(total, dtype=U32)
        spans = np.zeros((total, 4), dtype=U32)
        kinds = np.zeros(total, dtype=U8)
        for s_no, (seg, mine) in enumerate(zip(segments, files_of, strict=True)):
            counts = f_count[mine]
            if not counts.sum():
                continue
            rows = _ranges(f_start[mine], counts)
            out = _ranges(out_start[mine], counts)
            row_entry[out] = remap_e[s_no][seg.entry[rows]]
            row_cont[out] = remap_c[s_no][seg.conts(rows)]
            spans[out] = np.stack(seg.spans_of(rows), axis=1).astype(U32)
            kinds[out] = seg.kind[rows]
        return Segment(
            entries,
            row_entry,
            containers,
            row_cont,
            spans,
            kinds,
            file_ids,
            languages,
            f_count.tolist(),
        )

    # -- snapshots ------------------------------------------------------------
    _ARRAYS = (
        "entry", "cont", "cont_rows", "cont_ids", "line", "col", "extra_rows", "extra_spans",
        "kind", "file_start", "lo_off", "case_kind", "case_ids", "case_off", "masks", "post",
        "post_base", "post_local", "tri_codes", "tri_small", "tri_base", "tri_off", "tri_len",
        "tri16", "tri32", "tri_big", "tri_big_off", "by_length", "tri_suffix", "tri_suffix_order",
        "cont_off", "cont_lengths", "cont_masks", "cont_post", "cont_post_start", "cont_boff",
        "file_lang",
    )  # fmt: skip

    def to_parts(self, alive: NDArray[np.bool_]) -> dict[str, Any]:
        """The segment as named byte strings (the cache's snapshot), with
        `alive` as its files' liveness."""
        parts: dict[str, Any] = {}
        for name in self._ARRAYS:
            array = getattr(self, name)
            # The columns are immutable: hand over views, not copies.
            parts[f"{name}:{array.dtype.str}"] = np.ascontiguousarray(array).data.cast("B")
        parts["lower"] = self.lower
        parts["case_blob"] = self.case_blob
        parts["cont_lower"] = self.cont_lower
        parts["cont_blob"] = self.cont_blob
        parts["languages"] = marshal.dumps(self.languages)
        parts["alive"] = alive.astype(bool).tobytes()
        return parts

    def to_bytes(self, alive: NDArray[np.bool_]) -> dict[str, bytes]:
        """`to_parts` as bytes of their own, to send to another process."""
        return {k: bytes(v) for k, v in self.to_parts(alive).items()}

    @staticmethod
    def from_parts(parts: dict[str, bytes], file_ids: list[int]) -> Segment:
        """Rebuild a segment from `to_parts`, its files numbered `file_ids`.
        Raises ValueError (or KeyError) on parts that do not fit together."""
        seg = Segment.__new__(Segment)
        arrays = {k.split(":", 1)[0]: (k.split(":", 1)[1], v) for k, v in parts.items() if ":" in k}
        for name in Segment._ARRAYS:
            dtype, data = arrays[name]
            setattr(seg, name, np.frombuffer(data, dtype=np.dtype(dtype)))
        seg.lower = parts["lower"]
        seg.case_blob = parts["case_blob"]
        seg.cont_lower = parts["cont_lower"]
        seg.cont_blob = parts["cont_blob"]
        seg.languages = tuple(marshal.loads(parts["languages"]))
        seg.file_ids = np.asarray(file_ids, dtype=U32)
        seg.fid_order = np.argsort(seg.file_ids, kind="stable").astype(U32)
        seg.fid_sorted = seg.file_ids[seg.fid_order]
        seg.alive = np.frombuffer(parts["alive"], dtype=bool).copy()
        files = len(file_ids)
        if not (
            len(seg.alive) == files == len(seg.file_lang) == len(seg.file_start) - 1
            and int(seg.file_start[-1]) == len(seg.entry) == len(seg.post)
            and len(seg.lo_off) == len(seg.post_local)
            and len(seg.post_base) == -(-len(seg.post_local) // (1 << STARTS_BLOCK_BITS))
            and len(seg.case_off) == len(seg.case_ids) + 1
            and len(seg.case_kind) == len(seg.lo_off) - 1
            and len(seg.extra_spans) == 4 * len(seg.extra_rows)
            and len(seg.cont_off) == len(seg.cont_boff)
            and len(seg.cont) in (0, len(seg.entry))
            and len(seg.cont_rows) == len(seg.cont_ids)
            and len(seg.tri_big_off) == len(seg.tri_codes)
        ):
            raise ValueError("snapshot columns disagree")
        seg.live_rows = int(np.diff(seg.file_start)[seg.alive].sum()) if files else 0
        return seg

    # -- liveness -------------------------------------------------------------
    def file_pos(self, file_id: int) -> int | None:
        """Where file `file_id` is in this segment's file order, if here."""
        at = int(np.searchsorted(self.fid_sorted, file_id))
        if at < len(self.fid_sorted) and int(self.fid_sorted[at]) == file_id:
            return int(self.fid_order[at])
        return None

    def container(self, c: int) -> str:
        return self.cont_blob[int(self.cont_boff[c]) + 1 : int(self.cont_boff[c + 1])].decode()

    def container_names(self) -> list[str]:
        return self.cont_blob[1:-1].decode().split("\n") if len(self.cont_boff) > 1 else []

    @property
    def container_count(self) -> int:
        return len(self.cont_boff) - 1

    def kill(self, file_id: int) -> None:
        pos = self.file_pos(file_id)
        if pos is not None and self.alive[pos]:
            self.alive[pos] = False
            self.live_rows -= int(self.file_start[pos + 1] - self.file_start[pos])

    def live_row_mask(self) -> NDArray[np.bool_]:
        return np.repeat(self.alive, np.diff(self.file_start))

    @property
    def rows(self) -> int:
        return len(self.entry)

    def nbytes(self) -> int:
        arrays = (
            self.entry, self.cont, self.cont_rows, self.cont_ids, self.line, self.col,
            self.extra_rows, self.extra_spans, self.kind, self.file_ids, self.file_start,
            self.alive, self.lo_off, self.case_ids, self.case_off, self.case_kind, self.masks,
            self.post, self.post_base, self.post_local, self.tri_codes, self.tri_small,
            self.tri_base, self.tri_off, self.tri_len, self.tri16, self.tri32, self.tri_big,
            self.tri_big_off, self.by_length, self.tri_suffix, self.tri_suffix_order,
            self.cont_off, self.cont_lengths, self.cont_masks, self.cont_post,
            self.cont_post_start,
        )  # fmt: skip
        strings = len(self.lower) + len(self.case_blob) + len(self.cont_lower)
        return sum(a.nbytes for a in arrays) + strings

    # -- entries --------------------------------------------------------------
    def key(self, e: int) -> bytes:
        return self.lower[int(self.lo_off[e]) + 1 : int(self.lo_off[e + 1])]

    def names_of(self, entries: NDArray[Any]) -> list[str]:
        """Entries as written; each distinct entry is decoded once (a name
        defined thousands of times, `id`, is one string for all its rows)."""
        ents = entries.tolist()
        distinct = list(dict.fromkeys(ents))
        ids = np.asarray(distinct, dtype=U32)
        kinds = self.case_kind[ids].tolist()
        spelled: dict[int, str] = {}
        explicit: list[int] = []
        for e, key, k in zip(distinct, _slices(self.lower, self.lo_off, ids), kinds, strict=True):
            name = key.decode()
            if k == 1:
                name = name.upper()
            elif k == 2:
                name = name[:1].upper() + name[1:]
            elif k == 3:
                explicit.append(e)
            spelled[e] = name
        if explicit:
            at = np.searchsorted(self.case_ids, np.asarray(explicit, dtype=U32))
            for e, key in zip(explicit, _slices(self.case_blob, self.case_off, at), strict=True):
                spelled[e] = key.decode()
        return [spelled[e] for e in ents]

    def containers_of(self, ids: Sequence[int]) -> dict[int, str]:
        """Container id -> its name, for each of `ids`."""
        keys = _slices(self.cont_blob, self.cont_boff, np.asarray(ids, dtype=np.int64))
        return {c: key.decode() for c, key in zip(ids, keys, strict=True)}

    def entry_names(self) -> list[str]:
        """Every entry as written, in entry order."""
        if len(self.lo_off) <= 1:
            return []
        names = self.lower[1:-1].decode().split("\n")
        for e in np.flatnonzero(self.case_kind == 1).tolist():
            names[e] = names[e].upper()
        for e in np.flatnonzero(self.case_kind == 2).tolist():
            names[e] = names[e][:1].upper() + names[e][1:]
        if len(self.case_ids):
            spelled = self.case_blob[1:-1].decode().split("\n")
            for e, n in zip(self.case_ids.tolist(), spelled, strict=True):
                names[e] = n
        return names

    def conts(self, rows: NDArray[Any]) -> NDArray[np.uint32]:
        """The container id of each row (0, the empty container, for none)."""
        if len(self.cont) == len(self.entry):
            dense: NDArray[np.uint32] = self.cont[rows]
            return dense
        out = np.zeros(len(rows), dtype=U32)
        if len(self.cont_rows) and len(rows):
            at = np.minimum(np.searchsorted(self.cont_rows, rows), len(self.cont_rows) - 1)
            hit = self.cont_rows[at] == rows
            out[hit] = self.cont_ids[at[hit]]
        return out

    def post_starts(self, ids: NDArray[Any]) -> NDArray[np.int64]:
        """Where each entry's rows start in `post` (`len(self)` for the end)."""
        ids = np.asarray(ids, dtype=np.int64)
        out: NDArray[np.int64] = self.post_base[ids >> STARTS_BLOCK_BITS].astype(np.int64)
        out += self.post_local[ids]
        return out

    def spans_of(self, rows: NDArray[Any]) -> tuple[NDArray[np.int64], ...]:
        """(line, column, end line, end column) of each row."""
        line = self.line[rows].astype(np.int64)
        col = self.col[rows].astype(np.int64)
        end_line = line.copy()
        entries = self.entry[rows]
        end_col = col + self.lo_off[entries + 1].astype(np.int64) - self.lo_off[entries] - 1
        if len(self.extra_rows) and len(rows):
            at = np.minimum(np.searchsorted(self.extra_rows, rows), len(self.extra_rows) - 1)
            hit = self.extra_rows[at] == rows
            if hit.any():
                whole = self.extra_spans.reshape(-1, 4)[at[hit]].astype(np.int64)
                line[hit], col[hit] = whole[:, 0], whole[:, 1]
                end_line[hit], end_col[hit] = whole[:, 2], whole[:, 3]
        return line, col, end_line, end_col

    def _shortest_first(self, ids: NDArray[Any]) -> NDArray[np.intp]:
        """The order that sorts `ids` by key length, stably."""
        return _by_length(self.lengths(ids))

    def lengths(self, ids: NDArray[Any]) -> NDArray[np.int64]:
        """Byte length of each entry's key."""
        off = self.lo_off
        out: NDArray[np.int64] = off[ids + 1].astype(np.int64) - off[ids] - 1
        return out

    def __len__(self) -> int:  # entries, for bisect
        return len(self.lo_off) - 1

    def __getitem__(self, e: int) -> bytes:
        return self.key(e)

    def exact(self, q: bytes) -> range:
        lo = bisect.bisect_left(self, q)
        hi = bisect.bisect_right(self, q, lo)
        return range(lo, hi)

    def prefix(self, q: bytes) -> Iterator[NDArray[np.uint32]]:
        """Entries starting with `q` (equal ones too), shortest first, in
        chunks."""
        lo = bisect.bisect_left(self, q)
        hi = bisect.bisect_left(self, q + b"\xff", lo)
        if hi - lo <= WIDE_RANGE:
            ids = np.arange(lo, hi, dtype=U32)
            yield ids[self._shortest_first(ids)]
            return
        # A wide range (a one-letter prefix over millions of names): read the
        # shortest-first order until enough is found, not the whole range.
        for chunk in self._by_length_chunks():
            hit = chunk[(chunk >= lo) & (chunk < hi)]
            if len(hit):
                yield hit

    def _by_length_chunks(self) -> Iterator[NDArray[np.uint32]]:
        order = self.by_length
        for at in range(0, len(order), SCAN_CHUNK):
            yield order[at : at + SCAN_CHUNK]

    def _with_mask(self, mask: int) -> Iterator[NDArray[np.uint32]]:
        """Entries whose character mask holds `mask`, shortest first, in
        chunks: read only as far as the caller goes."""
        m = U32(mask)
        order, masks = self.by_length, self.masks
        for at in range(0, len(order), SCAN_CHUNK):
            hit = order[at : at + SCAN_CHUNK][(masks[at : at + SCAN_CHUNK] & m) == m]
            if len(hit):
                yield hit

    def containing(self, q: bytes) -> Iterator[NDArray[np.uint32]]:
        """Entries that may contain `q` (verify!), shortest first, in chunks.

        Trigrams are indexed at even offsets of a name only. A match of `q`
        starting at an even offset has every even-offset trigram of `q` at
        an even offset of the name, one starting at an odd offset every
        odd-offset one; so the candidates are the names holding all the
        even ones, plus those holding all the odd ones. Three bytes at an
        odd offset p leave the trigram (name[p-1], q0, q1) at the even
        offset p-1: the lists of every trigram ending in q0 q1. Under three
        bytes the character masks decide.
        """
        if len(q) < 3:
            yield from self._with_mask(char_mask(q))
            return
        found: list[NDArray[np.uint32]] = []
        if len(q) == 3:
            even = self._trigram(q[0] << 16 | q[1] << 8 | q[2])
            if even is not None:
                found.append(even)
            suffix = q[0] << 8 | q[1]
            lo = int(np.searchsorted(self.tri_suffix, suffix))
            hi = int(np.searchsorted(self.tri_suffix, suffix, side="right"))
            found.extend(self.trigram_list(int(t)) for t in self.tri_suffix_order[lo:hi].tolist())
        else:
            for parity in (0, 1):
                lists: list[NDArray[np.uint32]] = []
                for i in range(parity, len(q) - 2, 2):
                    got = self._trigram(q[i] << 16 | q[i + 1] << 8 | q[i + 2])
                    if got is None:
                        lists = []
                        break
                    lists.append(got)
                if not lists:
                    continue
                lists.sort(key=len)
                ids = lists[0]
                for other in lists[1:]:
                    if len(ids) < 32:
                        break  # few enough to verify one by one
                    ids = intersect_sorted(ids, other)
                found.append(ids)
        if not found:
            return
        ids = found[0] if len(found) == 1 else sorted_unique(np.concatenate(found), len(self))
        yield np.asarray(ids[self._shortest_first(ids)], dtype=U32)

    def _trigram(self, code: int) -> NDArray[np.uint32] | None:
        at = int(np.searchsorted(self.tri_codes, code))
        if at >= len(self.tri_codes) or int(self.tri_codes[at]) != code:
            return None
        return self.trigram_list(at)

    def trigram_list(self, at: int) -> NDArray[np.uint32]:
        """The sorted entries of trigram number `at`."""
        off, n = int(self.tri_off[at]), int(self.tri_len[at])
        if not self.tri_small[at]:
            raw: NDArray[np.uint32] = self.tri32[off : off + n]
            return raw
        out = np.empty(n, dtype=U32)
        out[0] = self.tri_base[at]
        if n > 1:
            gaps = self.tri16[off : off + n - 1].astype(U32)
            wide = np.flatnonzero(gaps == 0)
            if len(wide):
                first = int(self.tri_big_off[at])
                gaps[wide] = self.tri_big[first : first + len(wide)]
            np.cumsum(gaps, dtype=U32, out=out[1:])
            out[1:] += self.tri_base[at]
        return out

    def subsequence(self, q: bytes) -> Iterator[NDArray[np.uint32]]:
        """Entries holding every character of `q` (verify!), shortest first,
        in chunks."""
        yield from self._with_mask(char_mask(q))

    def owners(self, q: bytes) -> NDArray[np.uint32]:
        """Containers holding every character of `q` (verify!), shortest first."""
        m = U32(char_mask(q))
        ids = np.flatnonzero((self.cont_masks & m) == m).astype(U32)
        return ids[_by_length(self.cont_lengths[ids])]

    def owner_keys(self, ids: NDArray[Any]) -> list[bytes]:
        """The lower-cased names of containers `ids`."""
        return _slices(self.cont_lower, self.cont_off, ids)

    def rows_owned(self, c: int) -> NDArray[np.uint32]:
        """The live rows whose container is `c`, in row order."""
        rows = self.cont_post[int(self.cont_post_start[c]) : int(self.cont_post_start[c + 1])]
        return self._live(rows)

    def rows_of(self, e: int) -> NDArray[np.uint32]:
        """The live rows of entry `e`, in row (path, position) order."""
        first, last = self.post_starts(np.asarray([e, e + 1])).tolist()
        rows = self.post[first:last]
        return self._live(rows)

    def rows_of_many(self, ids: NDArray[np.uint32]) -> tuple[NDArray[np.uint32], list[int]]:
        """`rows_of` for many entries at once: their live rows one entry after
        another, and how many each has."""
        starts = self.post_starts(ids)
        counts = self.post_starts(ids + 1) - starts
        rows = self.post[_ranges(starts, counts)]
        if self.live_rows == self.rows:
            return rows, counts.tolist()
        files = np.searchsorted(self.file_start, rows, side="right") - 1
        keep = self.alive[files]
        owner = np.repeat(np.arange(len(ids)), counts)
        return rows[keep], np.bincount(owner[keep], minlength=len(ids)).tolist()

    def _live(self, rows: NDArray[np.uint32]) -> NDArray[np.uint32]:
        if self.live_rows == self.rows:
            return rows
        files = np.searchsorted(self.file_start, rows, side="right") - 1
        return rows[self.alive[files]]

    def file_rows(self, file_id: int) -> range:
        pos = self.file_pos(file_id)
        if pos is None or not self.alive[pos]:
            return range(0)
        return range(int(self.file_start[pos]), int(self.file_start[pos + 1]))


def _trigrams(
    low: NDArray[np.uint8],
) -> tuple[NDArray[np.uint32], NDArray[np.int64], NDArray[np.uint32]]:
    """For each trigram code in the blob, the sorted entries holding it at
    an even offset.

    Only trigrams at even offsets in their name are kept: any four or more
    characters hold one there (see `containing`), at half the memory. The
    blob is read a slice of names at a time, so the temporaries stay a few
    times the slice, not the blob."""
    seps = np.flatnonzero(low == 10)
    names = len(seps) - 1
    if names <= 0:
        return np.zeros(0, U32), np.zeros(1, np.int64), np.zeros(0, U32)
    pieces: list[NDArray[np.uint64]] = []
    step = max(1, names * TRIGRAM_SLICE // max(1, len(low)))
    for first in range(0, names, step):
        last = min(names, first + step)
        lo, hi = int(seps[first]), int(seps[last])  # the slice's names lie between
        part = low[lo : hi + 1]
        if len(part) < 3:
            continue
        a, b, c = part[:-2], part[1:-1], part[2:]
        valid = (a != 10) & (b != 10) & (c != 10)
        counted = np.cumsum(part == 10, dtype=np.int32)[:-2] - 1  # name number in the slice
        entry = (counted + first).astype(U32)
        local = seps[first : last + 1] - lo
        start = local[np.minimum(counted, len(local) - 1)] + 1
        valid &= ((np.arange(len(a), dtype=np.int32) - start.astype(np.int32)) & 1) == 0
        codes = (a.astype(U32) << 16) | (b.astype(U32) << 8) | c.astype(U32)
        pieces.append((codes[valid].astype(U64) << U64(32)) | entry[valid].astype(U64))
    pairs = np.concatenate(pieces) if pieces else np.zeros(0, U64)
    del pieces
    pairs.sort()
    if len(pairs):
        pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
    tri = (pairs >> U64(32)).astype(U32)
    entries = (pairs & U64(0xFFFFFFFF)).astype(U32)
    del pairs
    if len(tri) == 0:
        return np.zeros(0, U32), np.zeros(1, np.int64), entries
    first_of = np.flatnonzero(np.concatenate(([True], tri[1:] != tri[:-1])))
    bounds = np.append(first_of, len(tri)).astype(np.int64)
    return tri[first_of], bounds, entries


def _ranges(starts: NDArray[np.int64], counts: NDArray[np.int64]) -> NDArray[np.int64]:
    """The concatenation of `range(start, start + count)` for each pair."""
    total = int(counts.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    # Each output position's start, minus the outputs before its range.
    shift = np.repeat(starts - (ends - counts), counts)
    return shift + np.arange(total, dtype=np.int64)


def _slices(blob: bytes, offsets: NDArray[Any], ids: NDArray[Any]) -> list[bytes]:
    """The keys `ids` of a newline-joined blob whose newlines sit at
    `offsets` (key i lies between offsets[i] and offsets[i + 1])."""
    starts = (offsets[ids] + 1).tolist()
    return [blob[a:b] for a, b in zip(starts, offsets[ids + 1].tolist(), strict=True)]


def _joined(strings: list[str]) -> bytes:
    """Strings as one blob: a newline before each and after the last (just
    one newline for none), so string i lies between newlines i and i+1."""
    return ("\n" + "\n".join(strings) + "\n").encode() if strings else b"\n"


def _pack(
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
    gaps = np.zeros(len(entries), dtype=np.int64)
    gaps[1:] = entries[1:].astype(np.int64) - entries[:-1]
    first = np.zeros(len(entries), dtype=bool)
    first[start[:-1]] = True
    gaps[first] = 0  # a list's first entry is its base, not a gap
    wide = gaps >= 65536
    escapes = np.add.reduceat(wide, start[:-1]) if len(entries) else np.zeros(t, np.int64)
    small = 2 * (counts - 1) + 4 * escapes < 4 * counts
    member = np.repeat(small, counts)
    narrow = member & ~first
    tri16 = np.where(wide, 0, gaps)[narrow].astype(U16)
    big = gaps[narrow & wide].astype(U32)
    tri32 = entries[~member]
    len16 = np.where(small, counts - 1, 0)
    len32 = np.where(small, 0, counts)
    off16 = np.concatenate(([0], np.cumsum(len16)[:-1]))
    off32 = np.concatenate(([0], np.cumsum(len32)[:-1]))
    off = np.where(small, off16, off32).astype(U32)
    big_off = np.concatenate(([0], np.cumsum(np.where(small, escapes, 0))[:-1])).astype(U32)
    base = entries[start[:-1]]
    return codes, small.astype(U8), base, off, counts.astype(U32), tri16, tri32, big, big_off


def _pack_starts(starts: NDArray[np.int64]) -> tuple[Any, ...]:
    """Ascending offsets as a 32-bit base every `2**STARTS_BLOCK_BITS` and
    a 16-bit rest each (32-bit if a block's offsets span 65,536 or more):
    an entry's first row costs two reads, and on the Linux kernel its 2.8
    million entries take 5.8 MB instead of 11.3."""
    base = starts[:: 1 << STARTS_BLOCK_BITS]
    local = starts - np.repeat(base, 1 << STARTS_BLOCK_BITS)[: len(starts)]
    narrow = len(local) == 0 or int(local.max()) < 65536
    return base.astype(U32), local.astype(U16 if narrow else U32)


def _by_length(lengths: NDArray[Any]) -> NDArray[np.intp]:
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


def sorted_unique(a: Any, universe: int = 0) -> Any:
    """`np.unique` by sorting (numpy 2's hashing `unique` is several times
    slower on these arrays); when the values are ids below `universe` and
    many, by marking them in a table of that size instead (linear)."""
    if len(a) == 0:
        return a
    if universe and len(a) * 16 > universe:
        marks = np.zeros(universe, dtype=np.bool_)
        marks[a] = True
        return np.flatnonzero(marks).astype(a.dtype)
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))]


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
            for at in range(0, len(ids), 256):
                chunk = ids[at : at + 256]
                if check is not None and budget is not None:
                    if budget[0] <= 0:
                        return
                    budget[0] -= len(chunk)
                keys = _slices(blob, offsets, chunk)
                passing = check.passing(keys) if check is not None else None
                sizes = seg.cont_lengths[chunk].tolist() if owners else list(map(len, keys))
                for i, (e, n) in enumerate(zip(chunk.tolist(), sizes, strict=True)):
                    if passing is None or passing[i]:
                        yield (n, keys[i], s_no, e)

    return heapq.merge(*(walk(s_no, seg, chunks) for s_no, seg, chunks in sources))
