"""An immutable, columnar slice of an index: the definitions of some files.

Design note
-----------
A namespace's index is a short list of segments (see `store`). A segment
stores its definitions as numpy columns, 14 to 16 bytes a row, and its
distinct names ("entries") once each:

- rows, in file order (files sorted by path, definitions by position):
  entry id, line and column (the end is the name's width; other spans are
  kept whole aside), kind byte (`filedefs.LOCAL_BIT` marks a local), and
  the container id (a column, or where most rows have none, the rows that
  have one);
- entries, sorted by lower-cased name: the lower-cased names joined by
  newlines into one bytes blob and the original names into another, each
  with a `uint32` offset per entry, a length, a 32-bit mask of the
  characters the name holds, and its rows (`post`, grouped by entry, in row
  order);
- a trigram index over the lower-cased entries: for each trigram code, the
  sorted entries holding it (as 16-bit gaps where that is smaller);
- an initials index: the entries of two words or more, sorted by the code
  of their first four word initials (`encoding.initials`), 8 bytes each.

The fields of `Segment` are its columns, listed once: the snapshot
(`to_parts`, `from_parts`) and `nbytes` read that list. `build` makes
segments and `encoding` holds the encodings.

Candidate retrieval asks five questions of every segment, each answered
without a Python loop over the entries:

- exact: the entries equal to the query (two bisections over the blob);
- prefix: the entries between `q` and `q + 0xff` (two bisections);
- initials: the entries whose initials code equals the query's, or lies
  in the range of codes that start with it (two bisections; a query over
  four characters is checked against each candidate's initials);
- substring: the intersection of the query's trigram lists (verified), or
  for one or two characters the entries whose mask holds the query's;
- subsequence: the entries whose mask holds every query character,
  verified in order by a regex that cannot backtrack (`[^a]*a[^b]*b`).

Each question's entries come out shortest first (a stable radix sort of a
`uint16` length column), so the index can merge segments lazily and stop as
soon as the pool is full (`keys.merged_keys`).

A file that is replaced or removed is not touched in its segment: its rows
become dead (`alive` is cleared), and merging segments drops them.
"""

from __future__ import annotations

import bisect
import marshal
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nearsym.core.words import name_initials
from nearsym.index import streams
from nearsym.index.encoding import (
    INITIALS_KEPT,
    STARTS_BLOCK_BITS,
    U32,
    by_length,
    char_mask,
    find_sorted,
    initials_code,
    intersect_sorted,
    ranges,
    slices,
    sorted_unique,
    table,
)
from nearsym.index.subset import Within

WIDE_RANGE = 65_536
"""A prefix range wider than this is read in shortest-first chunks."""


# How a snapshot stores each field of `Segment`: as its bytes and dtype, as
# is (bytes), or not as itself (`from_parts` rebuilds it, or `to_parts`
# encodes it its own way).
_ARRAY = {"stored": "array"}
_BLOB = {"stored": "blob"}
_APART = {"stored": ""}


@dataclass(slots=True, eq=False, repr=False, weakref_slot=True)
class Segment:
    """Immutable definitions of a set of files, plus their liveness."""

    # -- rows, in file order ---------------------------------------------------
    entry: NDArray[np.uint32] = field(metadata=_ARRAY)
    """Each row's entry id."""
    cont: NDArray[np.uint32] = field(metadata=_ARRAY)
    """Each row's container id, or empty where `cont_rows` holds them."""
    cont_rows: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The rows that have a container, where `cont` is empty (else empty)."""
    cont_ids: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The container of each of `cont_rows`."""
    line: NDArray[np.uint16] = field(metadata=_ARRAY)
    col: NDArray[np.uint8] = field(metadata=_ARRAY)
    """A row's start, where its span is the name's own width (else 0)."""
    extra_rows: NDArray[np.uint32] = field(metadata=_ARRAY)
    extra_spans: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The rows whose span is kept whole, and those spans (4 per row)."""
    kind: NDArray[np.uint8] = field(metadata=_ARRAY)
    file_start: NDArray[np.int64] = field(metadata=_ARRAY)
    """Each file's first row, and the row count last."""
    # -- entries, sorted by lower-cased name -------------------------------------
    lo_off: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The newlines of `lower`: entry i lies between i and i + 1."""
    case_kind: NDArray[np.uint8] = field(metadata=_ARRAY)
    """How each entry is spelled: 0 as its key, 1 all capitals, 2 a capital
    first, 3 otherwise (in `case_blob`)."""
    case_ids: NDArray[np.uint32] = field(metadata=_ARRAY)
    case_off: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The entries spelled otherwise, and the newlines of `case_blob`."""
    masks: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The character mask of each entry, in `by_length` order."""
    post: NDArray[np.uint32] = field(metadata=_ARRAY)
    post_base: NDArray[np.uint32] = field(metadata=_ARRAY)
    post_local: NDArray[Any] = field(metadata=_ARRAY)
    """The rows of each entry in turn; where each entry's start (`pack_starts`)."""
    tri_codes: NDArray[np.uint32] = field(metadata=_ARRAY)
    tri_small: NDArray[np.uint8] = field(metadata=_ARRAY)
    tri_base: NDArray[np.uint32] = field(metadata=_ARRAY)
    tri_off: NDArray[np.uint32] = field(metadata=_ARRAY)
    tri_len: NDArray[np.uint32] = field(metadata=_ARRAY)
    tri16: NDArray[np.uint16] = field(metadata=_ARRAY)
    tri32: NDArray[np.uint32] = field(metadata=_ARRAY)
    tri_big: NDArray[np.uint32] = field(metadata=_ARRAY)
    tri_big_off: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The trigram lists (`pack_trigrams`)."""
    by_length: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The entries, shortest first."""
    tri_suffix: NDArray[np.uint32] = field(metadata=_ARRAY)
    tri_suffix_order: NDArray[np.uint32] = field(metadata=_ARRAY)
    """Trigram numbers by their last two bytes, and those two bytes."""
    ini_codes: NDArray[np.uint32] = field(metadata=_ARRAY)
    ini_ids: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The entries of two words or more by their packed initials
    (`encoding.initials`): the codes sorted, and the entry of each."""
    # -- containers ----------------------------------------------------------------
    cont_off: NDArray[np.uint32] = field(metadata=_ARRAY)
    cont_lengths: NDArray[np.uint16] = field(metadata=_ARRAY)
    cont_masks: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The newlines of `cont_lower`, each container's length and mask."""
    cont_post: NDArray[np.uint32] = field(metadata=_ARRAY)
    cont_post_start: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The rows of each container in turn, and where each starts."""
    cont_boff: NDArray[np.uint32] = field(metadata=_ARRAY)
    """The newlines of `cont_blob`."""
    # -- files -----------------------------------------------------------------------
    file_lang: NDArray[np.uint8] = field(metadata=_ARRAY)
    """Each file's language, a number into `languages`."""
    # -- blobs: newline-joined strings (`encoding.joined`) -----------------------------
    lower: bytes = field(metadata=_BLOB)
    """The entries, lower-cased: the keys."""
    case_blob: bytes = field(metadata=_BLOB)
    """The entries spelled otherwise (`case_kind` 3), as written."""
    cont_lower: bytes = field(metadata=_BLOB)
    cont_blob: bytes = field(metadata=_BLOB)
    """The containers, lower-cased and as written."""
    # -- rebuilt or encoded apart ------------------------------------------------------
    languages: tuple[str, ...] = field(metadata=_APART)
    alive: NDArray[np.bool_] = field(metadata=_APART)
    """Per file, whether its rows are live (the only column that changes)."""
    file_ids: NDArray[np.uint32] = field(metadata=_APART)
    fid_order: NDArray[np.uint32] = field(metadata=_APART)
    fid_sorted: NDArray[np.uint32] = field(metadata=_APART)
    """Each file's id in the index, and the ids sorted (for `file_pos`)."""
    live_rows: int = field(metadata=_APART)

    # -- snapshots ------------------------------------------------------------
    def to_parts(self, alive: NDArray[np.bool_]) -> dict[str, Any]:
        """The segment as named byte strings (the cache's snapshot), with
        `alive` as its files' liveness."""
        parts: dict[str, Any] = {}
        for name in ARRAYS:
            array = getattr(self, name)
            # The columns are immutable: hand over views, not copies.
            parts[f"{name}:{array.dtype.str}"] = np.ascontiguousarray(array).data.cast("B")
        for name in BLOBS:
            parts[name] = getattr(self, name)
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
        arrays = {k.split(":", 1)[0]: (k.split(":", 1)[1], v) for k, v in parts.items() if ":" in k}
        columns: dict[str, Any] = {}
        for name in ARRAYS:
            dtype, data = arrays[name]
            columns[name] = np.frombuffer(data, dtype=np.dtype(dtype))
        for name in BLOBS:
            columns[name] = parts[name]
        ids = np.asarray(file_ids, dtype=U32)
        order = np.argsort(ids, kind="stable").astype(U32)
        seg = Segment(
            **columns,
            languages=tuple(marshal.loads(parts["languages"])),
            alive=np.frombuffer(parts["alive"], dtype=bool).copy(),
            file_ids=ids,
            fid_order=order,
            fid_sorted=ids[order],
            live_rows=0,
        )
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
            and len(seg.ini_codes) == len(seg.ini_ids)
        ):
            raise ValueError("snapshot columns disagree")
        seg.live_rows = int(np.diff(seg.file_start)[seg.alive].sum()) if files else 0
        return seg

    # -- liveness -------------------------------------------------------------
    def file_pos(self, file_id: int) -> int | None:
        """Where file `file_id` is in this segment's file order, if here."""
        at = find_sorted(self.fid_sorted, file_id)
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
        """Bytes held by the columns: every array and blob field."""
        total = 0
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                total += value.nbytes
            elif isinstance(value, bytes | memoryview):
                total += len(value)
        return total

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
        for e, key, k in zip(distinct, slices(self.lower, self.lo_off, ids), kinds, strict=True):
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
            for e, key in zip(explicit, slices(self.case_blob, self.case_off, at), strict=True):
                spelled[e] = key.decode()
        return [spelled[e] for e in ents]

    def containers_of(self, ids: Sequence[int]) -> dict[int, str]:
        """Container id -> its name, for each of `ids`."""
        keys = slices(self.cont_blob, self.cont_boff, np.asarray(ids, dtype=np.int64))
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
        return by_length(self.lengths(ids))

    def lengths(self, ids: NDArray[Any]) -> NDArray[np.int64]:
        """Byte length of each entry's key."""
        out: NDArray[np.int64] = self.lo_off[ids + 1].astype(np.int64) - self.lo_off[ids] - 1
        return out

    def __len__(self) -> int:  # entries, for bisect
        return len(self.lo_off) - 1

    def __getitem__(self, e: int) -> bytes:
        return self.key(e)

    def exact(self, q: bytes, among: range | None = None) -> range:
        """Entries equal to `q`, searched in `among` (a prefix's `starting`)."""
        end = len(self) if among is None else among.stop
        lo = bisect.bisect_left(self, q, 0 if among is None else among.start, end)
        return range(lo, bisect.bisect_right(self, q, lo, end))

    def starting(self, q: bytes) -> range:
        """Entries starting with `q`, in entry order."""
        lo = bisect.bisect_left(self, q)
        return range(lo, bisect.bisect_left(self, q + b"\xff", lo))

    def prefix(self, q: bytes, within: Within | None = None) -> Iterator[NDArray[np.uint32]]:
        """Entries starting with `q` (equal ones too), shortest first, in
        chunks; of `within` only, when given (so for every lookup)."""
        lo, hi = (r := self.starting(q)).start, r.stop
        if within is not None:
            ids = within.between(lo, hi)
        elif hi - lo <= WIDE_RANGE:
            ids = np.arange(lo, hi, dtype=U32)
        else:
            # A wide range (`s` of millions): the shortest first, as far as needed.
            yield from streams.in_range(self.by_length, lo, hi)
            return
        yield ids[self._shortest_first(ids)]

    def _with_mask(self, mask: int, within: Within | None = None) -> Iterator[NDArray[np.uint32]]:
        """Entries whose character mask holds `mask`, shortest first, in
        chunks of whole key pieces (`streams.whole_pieces`: a chunk's few
        hits alone would be tested by the regex, and more than a thousand
        in numpy, slicing only the keys that pass): read only as far as
        the caller goes."""
        m = U32(mask)
        if within is not None:
            order, masks = within.shortest_first()
            hit = order[(masks & m) == m]
            if len(hit):
                yield hit
            return
        yield from streams.whole_pieces(streams.masked(self.by_length, self.masks, m))

    def containing(self, q: bytes, within: Within | None = None) -> Iterator[NDArray[np.uint32]]:
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
            yield from self._with_mask(char_mask(q), within)
            return
        found: list[NDArray[np.uint32]] = []
        if len(q) == 3:
            even = self._trigram(q[0] << 16 | q[1] << 8 | q[2])
            if even is not None:
                found.append(even)
            suffix = q[0] << 8 | q[1]
            lo = find_sorted(self.tri_suffix, suffix)
            hi = find_sorted(self.tri_suffix, suffix, side="right")
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
        if within is None and sum(len(f) for f in found) > WIDE_RANGE:
            # Many candidates (a three-byte query's odd offsets: `teq` has
            # 172,000 of the Linux kernel's names): read in the shortest-first
            # order as far as the caller goes, not all sorted first.
            marks = table(len(self))
            for part in found:
                marks[part] = True
            yield from streams.whole_pieces(streams.chosen(self.by_length, marks))
            return
        ids = found[0] if len(found) == 1 else sorted_unique(np.concatenate(found), len(self))
        if within is not None:
            ids = within.of(np.asarray(ids, dtype=U32))
        yield np.asarray(ids[self._shortest_first(ids)], dtype=U32)

    def _trigram(self, code: int) -> NDArray[np.uint32] | None:
        at = find_sorted(self.tri_codes, code)
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

    def initials(
        self, q: bytes, exact: bool, within: Within | None = None
    ) -> Iterator[NDArray[np.uint32]]:
        """Entries whose word initials are `q` (`exact`; of a query over
        `INITIALS_KEPT` bytes, those whose first initials are its first), or
        start with it and go on (not `exact`), shortest first, in chunks."""
        low, high = initials_code(q)
        codes = self.ini_codes
        lo = find_sorted(codes, low)
        long = len(q) >= INITIALS_KEPT  # a code holds four initials: read them all
        if exact or long:
            hi = find_sorted(codes, low, side="right")
        else:
            lo = find_sorted(codes, low, side="right")
            hi = find_sorted(codes, high)
        if hi <= lo:
            return
        ids = self.ini_ids[lo:hi]
        if within is not None:
            ids = within.of(ids)
        if long:
            wanted = q.decode("utf-8", "replace")
            spelled = [name_initials(n) for n in self.names_of(ids)]
            if exact:
                ids = ids[np.asarray([w == wanted for w in spelled], dtype=bool)]
            else:
                keep = [w != wanted and w.startswith(wanted) for w in spelled]
                ids = ids[np.asarray(keep, dtype=bool)]
            if not len(ids):
                return
        if len(ids) <= WIDE_RANGE:
            yield ids[self._shortest_first(ids)]
            return
        chosen = table(len(self))
        chosen[ids] = True
        yield from streams.chosen(self.by_length, chosen)

    def subsequence(self, q: bytes, within: Within | None = None) -> Iterator[NDArray[np.uint32]]:
        """Entries holding every character of `q` (verify!), shortest first,
        in chunks."""
        yield from self._with_mask(char_mask(q), within)

    def owners(self, q: bytes) -> NDArray[np.uint32]:
        """Containers holding every character of `q` (verify!), shortest first."""
        m = U32(char_mask(q))
        ids = np.flatnonzero((self.cont_masks & m) == m).astype(U32)
        return ids[by_length(self.cont_lengths[ids])]

    def owner_keys(self, ids: NDArray[Any]) -> list[bytes]:
        """The lower-cased names of containers `ids`."""
        return slices(self.cont_lower, self.cont_off, ids)

    def rows_owned(self, c: int) -> NDArray[np.uint32]:
        """The live rows whose container is `c`, in row order."""
        rows = self.cont_post[int(self.cont_post_start[c]) : int(self.cont_post_start[c + 1])]
        return self._live(rows)

    def rows_owned_many(self, ids: NDArray[Any]) -> NDArray[np.int64]:
        """The rows (live or not) whose container is one of `ids`."""
        starts = self.cont_post_start[ids].astype(np.int64)
        counts = self.cont_post_start[np.asarray(ids) + 1].astype(np.int64) - starts
        return self.cont_post[ranges(starts, counts)].astype(np.int64)

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
        rows = self.post[ranges(starts, counts)]
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


ARRAYS = tuple(f.name for f in fields(Segment) if f.metadata["stored"] == "array")
"""The columns a snapshot stores as arrays, each under `name:dtype`."""
BLOBS = tuple(f.name for f in fields(Segment) if f.metadata["stored"] == "blob")
"""The columns a snapshot stores as bytes, under their names."""
