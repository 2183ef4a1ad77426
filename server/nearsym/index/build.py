"""Building segments: from the definitions of some files, and by merging.

A segment is built once and never changed (but for its files' liveness):
`build` computes every column of `Segment` from rows in file order, and
`merge` rebuilds one segment from the live files of several, moving rows
as whole columns; only distinct names and containers are touched one by
one. Both sort entries by (lower-cased, original) name, so a segment's
keys can be bisected.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nearsym.core.filedefs import FileDefs
from nearsym.index.encoding import (
    MISSING,
    U8,
    U16,
    U32,
    U64,
    initials,
    joined,
    masks_of,
    merged_trigrams,
    pack_starts,
    pack_trigrams,
    ranges,
    sorted_unique,
    trigrams,
    unpack_trigrams,
)
from nearsym.index.filetable import Paths
from nearsym.index.segment import Segment


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


def build(
    entries: list[str],
    row_entry: NDArray[np.uint32],
    containers: list[str],
    row_cont: NDArray[np.uint32],
    spans: NDArray[np.uint32],
    kinds: NDArray[np.uint8],
    fids: list[int],
    file_languages: list[str],
    file_counts: Sequence[int],
    *,
    lowers: list[str] | None = None,
    spelling: bytes | None = None,
    trigram_lists: Callable[[], tuple[Any, ...]] | None = None,
    initials_index: tuple[NDArray[np.uint32], NDArray[np.uint32]] | None = None,
) -> Segment:
    """The segment of rows in file order: per row its entry and container
    (ids into `entries` and `containers`), span and kind; per file its id,
    language and row count. `entries` sorted by (lower-cased, original),
    no newlines in them; their lower-cased forms, `spelling_codes`, packed
    trigram lists (a function giving them, asked last: a merge computes
    them on another thread) and initials index (`ini_codes`, `ini_ids`),
    when the caller has them already (a merge does)."""
    cont = row_cont
    # Containers and languages as a blob and codes, not Python objects:
    # millions of long-lived small objects would pin the allocator's
    # arenas that the build's garbage frees.
    cont_blob = joined(containers)
    cont_boff = np.flatnonzero(np.frombuffer(cont_blob, dtype=U8) == 10).astype(U32)
    file_ids = np.asarray(fids, dtype=U32)
    languages = tuple(sorted(set(file_languages)))
    code = {name: i for i, name in enumerate(languages)}
    file_lang = np.asarray([code[n] for n in file_languages], dtype=U8)
    fid_order = np.argsort(file_ids, kind="stable").astype(U32)
    fid_sorted = file_ids[fid_order]
    file_start = np.zeros(len(file_counts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(file_counts, dtype=np.int64), out=file_start[1:])
    alive = np.ones(len(fids), dtype=bool)
    live_rows = len(row_entry)

    if lowers is None:
        lowers = list(map(str.lower, entries))
    lower = joined(lowers)
    low = np.frombuffer(lower, dtype=U8)
    lo_off = np.flatnonzero(low == 10).astype(U32)
    # Spans: line and column, 16 and 8 bits; the end is the name's own
    # width (its key's length: ASCII names, nearly all). A name past
    # line 65,535 or column 255 (none of the Linux kernel's 4 million),
    # spanning other text (`ns::add` named `add`, a quoted key), not
    # ASCII, or ending on a later line keeps its whole span in
    # `extra_spans`.
    s_line, s_col, s_end_line, s_end_col = (spans[:, k].astype(np.int64) for k in range(4))
    key_width = (np.diff(lo_off).astype(np.int64) - 1)[row_entry]
    simple = (s_end_line == s_line) & (s_end_col - s_col == key_width)
    simple &= (s_line <= 65535) & (s_col <= 255)
    line = np.where(simple, s_line, 0).astype(U16)
    col = np.where(simple, s_col, 0).astype(U8)
    extra = np.flatnonzero(~simple)
    extra_rows = extra.astype(U32)
    extra_spans = np.ascontiguousarray(spans[extra]).reshape(-1).astype(U32)
    del s_line, s_col, s_end_line, s_end_col, key_width, simple
    # Original spellings only where they differ from the lower-cased key
    # (C and Python names mostly do not).
    if spelling is None:
        spelling = spelling_codes(entries, lowers)
    case_kind = np.frombuffer(spelling, dtype=U8)
    case_ids = np.flatnonzero(case_kind == 3).astype(U32)
    differ = case_ids.tolist()
    case_blob = joined([entries[i] for i in differ])
    case_off = np.flatnonzero(np.frombuffer(case_blob, dtype=U8) == 10).astype(U32)
    lengths = np.minimum(np.diff(lo_off) - 1, 65535).astype(U16)
    masks = masks_of(low, lo_off) if entries else np.zeros(0, dtype=U32)
    m = len(entries)
    post = np.argsort(row_entry, kind="stable").astype(U32)
    counts = np.bincount(row_entry, minlength=m) if len(row_entry) else np.zeros(m, np.int64)
    post_start = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts, out=post_start[1:])
    post_base, post_local = pack_starts(post_start)
    del post_start
    # Entries shortest first, for tiers read in that order a chunk at a
    # time.
    by_length = np.argsort(lengths, kind="stable").astype(U32)
    # The masks are only ever scanned in that order: store them so, and
    # a scan reads memory front to back.
    masks = masks[by_length]
    # Word initials of the names of two words or more (`AC` reaches
    # `AsyncClient`); a name of one word is reached by its prefix.
    if initials_index is None:
        codes, numbers = initials(joined(entries))
        several = np.flatnonzero(numbers >= 2)
        ini_order = np.argsort(codes[several], kind="stable")
        ini_ids = several[ini_order].astype(U32)
        ini_codes = codes[ini_ids].astype(U32)
        del codes, numbers, several, ini_order
    else:
        ini_codes, ini_ids = initials_index
    # Containers: lower-cased, masks, and their rows, for the owner tier
    # (`SyncQueue` reaches `SyncQueue.push`). Rows without a container
    # are not listed.
    cont_lower = joined([c.lower().replace("\n", " ") for c in containers])
    clow = np.frombuffer(cont_lower, dtype=U8)
    cont_off = np.flatnonzero(clow == 10).astype(U32)
    cont_lengths = np.minimum(np.diff(cont_off) - 1, 65535).astype(U16)
    cont_masks = masks_of(clow, cont_off) if containers else np.zeros(0, dtype=U32)
    named = np.flatnonzero(cont_lengths[row_cont] > 0) if len(row_cont) else np.zeros(0, np.int64)
    owners = row_cont[named]
    cont_post = named[np.argsort(owners, kind="stable")].astype(U32)
    ccounts = (
        np.bincount(owners, minlength=len(containers))
        if len(owners)
        else np.zeros(len(containers), np.int64)
    )
    cont_post_start = np.zeros(len(containers) + 1, dtype=U32)
    np.cumsum(ccounts, out=cont_post_start[1:])
    # Each row's container: a column, or where most rows have none (C
    # functions), the rows that have one and their containers (`conts`).
    if len(containers) and cont_lengths[0] == 0 and 2 * len(named) < len(row_cont):
        cont = np.zeros(0, dtype=U32)
        cont_rows = named.astype(U32)
        cont_ids = owners.astype(U32)
    else:
        cont_rows = cont_ids = np.zeros(0, dtype=U32)
    (
        tri_codes,
        tri_small,
        tri_base,
        tri_off,
        tri_len,
        tri16,
        tri32,
        tri_big,
        tri_big_off,
    ) = trigram_lists() if trigram_lists is not None else pack_trigrams(*trigrams(low))
    # Trigram numbers by their last two bytes, for three-byte queries at
    # odd offsets.
    tri_suffix_order = np.argsort(tri_codes & U32(0xFFFF), kind="stable").astype(U32)
    tri_suffix = (tri_codes[tri_suffix_order] & U32(0xFFFF)).astype(U32)
    return Segment(
        entry=row_entry,
        cont=cont,
        cont_rows=cont_rows,
        cont_ids=cont_ids,
        line=line,
        col=col,
        extra_rows=extra_rows,
        extra_spans=extra_spans,
        kind=kinds,
        file_start=file_start,
        lo_off=lo_off,
        case_kind=case_kind,
        case_ids=case_ids,
        case_off=case_off,
        masks=masks,
        post=post,
        post_base=post_base,
        post_local=post_local,
        tri_codes=tri_codes,
        tri_small=tri_small,
        tri_base=tri_base,
        tri_off=tri_off,
        tri_len=tri_len,
        tri16=tri16,
        tri32=tri32,
        tri_big=tri_big,
        tri_big_off=tri_big_off,
        by_length=by_length,
        tri_suffix=tri_suffix,
        tri_suffix_order=tri_suffix_order,
        ini_codes=ini_codes,
        ini_ids=ini_ids,
        cont_off=cont_off,
        cont_lengths=cont_lengths,
        cont_masks=cont_masks,
        cont_post=cont_post,
        cont_post_start=cont_post_start,
        cont_boff=cont_boff,
        file_lang=file_lang,
        lower=lower,
        case_blob=case_blob,
        cont_lower=cont_lower,
        cont_blob=cont_blob,
        languages=languages,
        alive=alive,
        file_ids=file_ids,
        fid_order=fid_order,
        fid_sorted=fid_sorted,
        live_rows=live_rows,
    )


def merged_trigram_index(
    segments: Sequence[Segment], remaps: Sequence[NDArray[np.uint32]]
) -> tuple[Any, ...]:
    """The packed trigram lists of a merge's entries (`pack_trigrams`), from
    its segments' own lists and their maps to the merged entries (see
    `merged_entries`)."""
    own = [
        unpack_trigrams(
            seg.tri_codes,
            seg.tri_small,
            seg.tri_base,
            seg.tri_off,
            seg.tri_len,
            seg.tri16,
            seg.tri32,
            seg.tri_big,
            seg.tri_big_off,
        )
        for seg in segments
    ]
    return pack_trigrams(*merged_trigrams(own, remaps))


def merged_initials(
    segments: Sequence[Segment], remaps: Sequence[NDArray[np.uint32]]
) -> tuple[NDArray[np.uint32], NDArray[np.uint32]]:
    """The initials index (`ini_codes`, `ini_ids`) of a merge's entries,
    from its segments' own: a name's initials are the same in every
    segment, so the index is their union, sorted by (code, entry) as
    `build` sorts it. The Linux kernel's final merge: 1.2 s from the names,
    0.2 s this way."""
    pairs = []
    for seg, remap in zip(segments, remaps, strict=True):
        new = remap[seg.ini_ids]
        kept = new != MISSING
        pairs.append((seg.ini_codes[kept].astype(U64) << U64(32)) | new[kept])
    merged = sorted_unique(np.concatenate(pairs)) if pairs else np.zeros(0, U64)
    return (merged >> U64(32)).astype(U32), (merged & U64(0xFFFFFFFF)).astype(U32)


def spelling_codes(entries: Sequence[str], lowers: Sequence[str]) -> bytes:
    """Per entry how it is spelled against its lower-cased key: 0 as the
    key, 1 all capitals (C macros), 2 a capital first, 3 otherwise (the
    segment keeps those spellings whole)."""
    codes = bytearray(len(entries))
    for i, (e, k) in enumerate(zip(entries, lowers, strict=True)):
        if e == k:
            continue
        if e == k.upper():
            codes[i] = 1
        elif e == k[:1].upper() + k[1:]:
            codes[i] = 2
        else:
            codes[i] = 3
    return bytes(codes)


def merged_entries(
    segments: Sequence[Segment],
) -> tuple[list[str], list[str], bytes, list[NDArray[np.uint32]]]:
    """The distinct names of the live rows of `segments` sorted by
    (lower-cased, original), their lower-cased keys and spelling codes, and
    per segment a map from its entry ids to theirs (`MISSING` for an entry
    no live row holds).

    Each segment's keys are sorted already, so a stable sort of their
    concatenation by key alone merges runs (a fraction of a second for the
    Linux kernel's 3 million, where sorting the set of names took seconds);
    the names sharing a key then sort by spelling only where the spellings
    differ (`ID` and `id`), which is rare."""
    lows: list[str] = []
    origs: list[str] = []
    used_ids: list[NDArray[np.int64]] = []
    kind_parts: list[NDArray[np.uint8]] = []
    bounds = [0]
    for seg in segments:
        m = len(seg.lo_off) - 1
        used = sorted_unique(seg.entry[seg.live_row_mask()].astype(np.int64), m)
        if len(used):
            keys = seg.lower[1:-1].decode().split("\n")
            names = seg.entry_names()
            if len(used) < m:
                picked = used.tolist()
                keys = [keys[i] for i in picked]
                names = [names[i] for i in picked]
            lows.extend(keys)
            origs.extend(names)
        used_ids.append(used)
        kind_parts.append(seg.case_kind[used])
        bounds.append(len(lows))
    n = len(lows)
    remaps = [np.full(len(seg.lo_off) - 1, MISSING, dtype=U32) for seg in segments]
    if not n:
        return [], [], b"", remaps
    order = np.fromiter(sorted(range(n), key=lows.__getitem__), dtype=np.int64, count=n)
    # Object arrays: gathers and neighbour comparisons run in C.
    s_lows = np.array(lows, dtype=object)[order]
    s_origs = np.array(origs, dtype=object)[order]
    del lows, origs
    new_key = np.ones(n, dtype=bool)
    new_key[1:] = s_lows[1:] != s_lows[:-1]
    same_name = np.zeros(n, dtype=bool)
    same_name[1:] = s_origs[1:] == s_origs[:-1]
    starts = np.flatnonzero(new_key)
    group = np.cumsum(new_key) - 1
    # A key whose rows all spell it one way names one entry; the others
    # (two spellings or more) are sorted here, a key at a time.
    mixed = np.zeros(len(starts), dtype=bool)
    mixed[group[~new_key & ~same_name]] = True
    mixed_groups = np.flatnonzero(mixed).tolist()
    width = np.ones(len(starts), dtype=np.int64)
    rank = np.zeros(n, dtype=np.int64)
    spelled: list[list[str]] = []
    ends = np.append(starts[1:], n)
    for g in mixed_groups:
        lo, hi = int(starts[g]), int(ends[g])
        members = s_origs[lo:hi].tolist()
        distinct = sorted(set(members))
        at = {name: i for i, name in enumerate(distinct)}
        rank[lo:hi] = [at[name] for name in members]
        width[g] = len(distinct)
        spelled.append(distinct)
    first_id = np.zeros(len(starts), dtype=np.int64)
    np.cumsum(width[:-1], out=first_id[1:])
    glob = np.empty(n, dtype=U32)
    glob[order] = first_id[group] + rank
    for s_no, used in enumerate(used_ids):
        remaps[s_no][used] = glob[bounds[s_no] : bounds[s_no + 1]]
    head_entries: list[str] = s_origs[starts].tolist()
    head_lowers: list[str] = s_lows[starts].tolist()
    head_codes = np.concatenate(kind_parts)[order[starts]].tobytes()
    if not mixed_groups:
        return head_entries, head_lowers, head_codes, remaps
    # Splice in the keys of several spellings.
    entries: list[str] = []
    lowers: list[str] = []
    codes = bytearray()
    done = 0
    for g, names in zip(mixed_groups, spelled, strict=True):
        entries.extend(head_entries[done:g])
        lowers.extend(head_lowers[done:g])
        codes += head_codes[done:g]
        key = head_lowers[g]
        entries.extend(names)
        lowers.extend([key] * len(names))
        codes += spelling_codes(names, [key] * len(names))
        done = g + 1
    entries.extend(head_entries[done:])
    lowers.extend(head_lowers[done:])
    codes += head_codes[done:]
    return entries, lowers, bytes(codes), remaps


def from_batch(batch: RowBatch) -> Segment:
    """The segment of a batch of files' rows."""
    # Built-ins mapped over the lists, not generators: a batch's rows are
    # hundreds of thousands, and this runs in the server during a cold
    # index, beside the workers.
    names = batch.names
    if "\n" in "".join(names):
        names = [n.replace("\n", " ") for n in names]
    entries = sorted(set(names))
    entries.sort(key=str.lower)
    ids = dict(zip(entries, range(len(entries)), strict=True))
    row_entry = np.fromiter(map(ids.__getitem__, names), dtype=U32, count=len(names))
    owners = batch.containers
    if "\n" in "".join(owners):
        owners = [c.replace("\n", " ") for c in owners]
    containers = sorted(set(owners))
    cids = dict(zip(containers, range(len(containers)), strict=True))
    row_cont = np.fromiter(map(cids.__getitem__, owners), dtype=U32, count=len(names))
    return build(
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


def merge(segments: Sequence[Segment], path_of: Paths, aside: bool = False) -> Segment:
    """One segment holding the live files of `segments`, files in path
    order. Rows are moved as columns; only distinct names and containers
    are touched one by one, and the trigram lists are the segments' own,
    renumbered and merged (`merged_trigram_index`).

    With `aside`, the trigram lists are merged on a thread of their own
    while the rest is built (numpy lets go of the interpreter lock in its
    loops and sorts): for a worker whose neighbour core is idle, as in a
    cold index's final merge (`pool.merge_segments`)."""
    with ThreadPoolExecutor(1, "nearsym-merge") if aside else nullcontext() as thread:
        return _merge(segments, path_of, thread)


def _merge(
    segments: Sequence[Segment], path_of: Paths, thread: ThreadPoolExecutor | None
) -> Segment:
    files: list[tuple[str, int, int]] = []  # (path, segment number, file position)
    for s_no, seg in enumerate(segments):
        for pos in np.flatnonzero(seg.alive).tolist():
            path = path_of[int(seg.file_ids[pos])]
            if path is not None:
                files.append((path, s_no, pos))
    files.sort()
    entries, lowers, spelling, remap_e = merged_entries(segments)
    tri: Callable[[], tuple[Any, ...]]
    if thread is not None:
        tri = thread.submit(merged_trigram_index, segments, remap_e).result
    else:
        tri = functools.partial(merged_trigram_index, segments, remap_e)
    containers_set: set[str] = set()
    container_lists: list[list[str]] = []
    for seg in segments:
        container_lists.append(seg.container_names())
        used_c = sorted_unique(seg.conts(np.flatnonzero(seg.live_row_mask())))
        containers_set.update(container_lists[-1][i] for i in used_c.tolist())
    containers = sorted(containers_set)
    cids = {c: i for i, c in enumerate(containers)}
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
        rows = ranges(f_start[mine], counts)
        out = ranges(out_start[mine], counts)
        row_entry[out] = remap_e[s_no][seg.entry[rows]]
        row_cont[out] = remap_c[s_no][seg.conts(rows)]
        spans[out] = np.stack(seg.spans_of(rows), axis=1).astype(U32)
        kinds[out] = seg.kind[rows]
    return build(
        entries,
        row_entry,
        containers,
        row_cont,
        spans,
        kinds,
        file_ids,
        languages,
        f_count.tolist(),
        lowers=lowers,
        spelling=spelling,
        trigram_lists=tri,
        initials_index=merged_initials(segments, remap_e),
    )
