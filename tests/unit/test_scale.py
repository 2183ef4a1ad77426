"""The scale machinery: segments, retrieval over several segments, the process
pool, and the on-disk cache. Figures (speed, memory) live in `nearsym
bench`, never here."""

from __future__ import annotations

import logging
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from nearsym.core.filedefs import FileDefs
from nearsym.core.model import Kind, Span, Symbol
from nearsym.core.typos import TYPO_MIN_LENGTH, one_edit
from nearsym.core.words import is_subsequence
from nearsym.index import retrieval as retrieval_module
from nearsym.index.cache import Cache
from nearsym.index.retrieval import TYPOS_BELOW, _Retrieval
from nearsym.index.segment import Segment
from nearsym.index.store import SymbolIndex
from nearsym.workspace import indexer as indexer_module
from nearsym.workspace.config import Config
from nearsym.workspace.discovery import SourceFile
from nearsym.workspace.indexer import (
    ColdStats,
    IndexTarget,
    index_into,
    index_namespace,
    save_snapshot,
)
from nearsym.workspace.pool import Parsed, Result, Workers

from ..processes import running

POLYGLOT = Path(__file__).parent.parent / "fixtures" / "polyglot"


def sym(name: str, path: str, line: int = 0, container: str = "") -> Symbol:
    return Symbol(
        name, Kind.FUNCTION, container, "/ws", path, Span(line, 0, line, len(name)), "python"
    )


def _words(rng: random.Random) -> str:
    parts = ["get", "set", "spin", "lock", "irq", "save", "file", "status", "http", "client", "x"]
    name = "_".join(rng.choice(parts) for _ in range(rng.randint(1, 3)))
    return name if rng.random() < 0.7 else name.title().replace("_", "")


def test_fileDefs_round_trip() -> None:
    symbols = [sym("alpha", "a.py", 1), sym("béta", "a.py", 2, container="K")]
    defs = FileDefs.from_symbols("python", symbols)
    assert FileDefs.decode(defs.encode()).symbols("/ws", "a.py") == symbols
    with pytest.raises(ValueError):
        FileDefs.decode(b"not marshal at all")


@pytest.mark.parametrize("seed", range(6))
def test_retrieval_over_segments_matches_brute_force(seed: int) -> None:
    """With several segments and dead rows, the pool holds exactly the names
    the tiers promise: all of them when fewer than the width match."""
    rng = random.Random(seed)
    index = SymbolIndex("/ws")
    live: dict[str, list[Symbol]] = {}
    for step in range(60):
        path = f"f{rng.randrange(25)}.py"
        if rng.random() < 0.15:
            index.remove_file(path)
            live.pop(path, None)
            continue
        rows = [sym(_words(rng), path, line) for line in range(rng.randint(0, 12))]
        index.replace_file(path, rows)
        live[path] = rows
        if step % 20 == 19:
            assert len(index.segments) >= 1
    every = [s for rows in live.values() for s in rows]
    assert sorted(index.files) == sorted(live)
    assert len(index) == len(every)
    for query in ["get", "spin_lock", "sl", "gfs", "HC", "x", "tus", "zzz", "Lock", "irqsave"]:
        q = query.lower()
        pool = index.candidates(query, 10_000)
        true = [s for s in every if is_subsequence(q, s.name.lower())]
        expected = {(s.path, s.span.line) for s in true}
        if (
            len(true) < TYPOS_BELOW
            and len(q) >= TYPO_MIN_LENGTH
            and all(s.name.lower() != q for s in true)
        ):  # few true matches: the names one edit away come after them
            expected |= {(s.path, s.span.line) for s in every if one_edit(q, s.name.lower())}
        assert {(s.path, s.span.line) for s in pool} == expected, query
        # exact names first, then shorter names before longer ones per tier
        exact = [s for s in pool if s.name.lower() == q]
        assert pool[: len(exact)] == exact


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("small_group", [None, 0])
def test_a_narrow_pool_is_a_prefix_of_a_wide_one(
    seed: int, small_group: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over several segments with dead rows and names spelled in several
    cases (one group of rows per lower-cased name, cut at the width), the
    pool of width w is the first w rows of the widest pool; a group's first
    rows are its first rows whether they are all built and sorted (a small
    group) or chosen before they are built (`small_group` 0)."""
    if small_group is not None:
        monkeypatch.setattr(retrieval_module, "SMALL_GROUP", small_group)
    rng = random.Random(seed)
    index = SymbolIndex("/ws")
    for _step in range(40):
        path = f"d{rng.randrange(6)}/f{rng.randrange(12)}.py"
        if rng.random() < 0.1:
            index.remove_file(path)
            continue
        rows = []
        for line in range(rng.randint(1, 15)):
            name = _words(rng)
            name = rng.choice([name, name.upper(), name.lower(), name.title()])
            rows.append(sym(name, path, line))
        index.replace_file(path, rows)
    assert len(index.segments) > 1
    for query in ["get", "GET", "s", "sl", "lock", "x", "http_client", "gs", "Set"]:
        whole = index.candidates(query, 100_000)
        exact = sum(s.name.lower() == query.lower() for s in whole)
        for width in (1, 3, 10, 40, 200):
            assert index.candidates(query, width) == whole[: max(width, exact)], (query, width)
        walk = _Retrieval(index)
        for group in _case_groups(index, query):
            full = walk._group_rows(group)
            for limit in (1, 2, 5, len(full) + 1):
                assert walk._group_rows_first(group, limit) == full[:limit]


def _case_groups(index: SymbolIndex, query: str) -> list[list[tuple[int, int]]]:
    from nearsym.index.keys import merged_keys, name_groups

    sources = [(n, seg, seg.prefix(query.lower().encode())) for n, seg in enumerate(index.segments)]
    return [g for g in name_groups(merged_keys(sources)) if len(g) > 1]


def test_every_exact_match_survives_a_narrow_pool() -> None:
    index = SymbolIndex("/ws")
    index.replace_files(
        [(f"m{i}.py", FileDefs.from_symbols("python", [sym("run", f"m{i}.py")])) for i in range(80)]
    )
    index.replace_file("z.py", [sym("runner", "z.py")])
    pool = index.candidates("run", 50)
    assert sum(s.name == "run" for s in pool) == 80


def test_qualified_query_keeps_owner_order() -> None:
    index = SymbolIndex("/ws")
    index.replace_file(
        "a.py",
        [
            sym("Cart", "a.py", 0),
            sym("add", "a.py", 1, container="Cart"),
            sym("add", "a.py", 5, container="Basket"),
            sym("adder", "a.py", 7, container="shop.Cart"),
        ],
    )
    names = [(s.container, s.name) for s in index.candidates("Cart.add", 50)]
    assert names[0] == ("Cart", "add")
    assert ("Basket", "add") not in names
    assert ("shop.Cart", "adder") in names


def test_compact_keeps_changes_made_during_the_merge() -> None:
    index = SymbolIndex("/ws")
    index.bulk = True
    for i in range(30):
        index.replace_file(f"f{i}.py", [sym(f"name{i}", f"f{i}.py")])
    index.replace_file("f3.py", [sym("changed", "f3.py")])
    index.remove_file("f4.py")
    index.compact()
    assert len(index.segments) == 1
    assert [s.name for s in index.symbols_of("f3.py")] == ["changed"]
    assert "f4.py" not in index
    assert all(s.name != "name4" for s in index.candidates("name4", 50))


def test_compact_merges_whole_unless_the_big_segment_is_a_snapshot_just_loaded() -> None:
    """An index loaded file by file (no snapshot on disk) ends as one
    segment, so it can be written as a snapshot; a snapshot just loaded
    that holds most of the index stays as it is, the rest merged beside it."""
    index = SymbolIndex("/ws")
    index.bulk = True
    index.replace_file("near.py", [sym("near", "near.py")])  # the open file's folder, first
    index.replace_files(
        [
            (f"f{i}.py", FileDefs.from_symbols("python", [sym(f"n{i}", f"f{i}.py")]))
            for i in range(40)
        ]
    )
    index.compact()
    assert len(index.segments) == 1
    stamps = {p: (1, 1) for p in index.files}
    parts = index.snapshot(stamps)
    assert parts is not None
    restarted = SymbolIndex("/ws")
    restarted.bulk = True
    restarted.replace_file("near.py", [sym("near", "near.py")])
    restarted.install(parts)
    restarted.replace_file("new.py", [sym("new", "new.py")])
    restarted.compact()
    assert [s.live_rows for s in restarted.segments] == [40, 2]
    assert restarted.snapshot(stamps) is None  # the one on disk stays


def _cold(root: str, cache: Cache | None, workers: Workers | None) -> tuple[SymbolIndex, int, int]:
    index = SymbolIndex(root)
    stats = index_into(index, Config(), workers=workers, cache=cache)
    if cache is not None:
        save_snapshot(index, stats, cache)
    return index, stats.parsed, stats.from_cache + stats.from_snapshot


def _table(index: SymbolIndex) -> list[Symbol]:
    return sorted(index.all_symbols(), key=lambda s: (s.path, s.span.line, s.span.col, s.name))


def test_pool_cache_and_serial_agree(tmp_path: Path) -> None:
    root = str(tmp_path / "ws")
    shutil.copytree(POLYGLOT, root)
    serial, parsed, _ = _cold(root, None, None)
    assert parsed > 0
    workers = Workers(2)
    try:
        cache = Cache(root, str(tmp_path / "cache"))
        pooled, _, cached = _cold(root, cache, workers)
        cache.close()
        assert cached == 0
        assert _table(pooled) == _table(serial)
        # A restart loads from the cache: nothing parsed, the same table.
        cache = Cache(root, str(tmp_path / "cache"))
        warm, parsed, cached = _cold(root, cache, workers)
        cache.close()
    finally:
        workers.close(wait=True)
    assert _table(warm) == _table(serial)
    assert parsed == 0 and cached > 0
    # A file that changed (size and mtime) is parsed again.
    target = next(p for p in sorted(Path(root).rglob("*.py")))
    target.write_text(target.read_text() + "\n\ndef brand_new_function():\n    pass\n")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    cache = Cache(root, str(tmp_path / "cache"))
    again, parsed, _ = _cold(root, cache, None)
    cache.close()
    assert parsed == 1
    assert [s.name for s in again.candidates("brand_new_function", 10)] == ["brand_new_function"]


def test_a_snapshot_leaves_no_write_ahead_log_behind(tmp_path: Path) -> None:
    """The next start reads the snapshot from the database file, not from a
    log it must first index (hundreds of MB on a large tree)."""
    root = str(tmp_path / "ws")
    shutil.copytree(POLYGLOT, root)
    cache = Cache(root, str(tmp_path / "cache"))
    _cold(root, cache, None)
    cache.flush()
    log = cache.path + "-wal"
    assert not os.path.exists(log) or os.path.getsize(log) == 0
    cache.close()
    assert not os.path.exists(log)
    reopened = Cache(root, str(tmp_path / "cache"))
    assert reopened.load_snapshot() is not None
    reopened.close()


@pytest.mark.parametrize(
    "damage",
    [
        b"this is not a database" * 100,
        None,  # a SQLite file of somebody else's
    ],
)
def test_corrupt_or_foreign_cache_is_discarded(
    tmp_path: Path, damage: bytes | None, caplog: pytest.LogCaptureFixture
) -> None:
    root = str(tmp_path / "ws")
    os.makedirs(root)
    cache = Cache(root, str(tmp_path / "c"))
    cache.store([("a.py", 3, 1, FileDefs.from_symbols("python", [sym("a", "a.py")]).encode())])
    cache.close()
    if damage is None:
        os.unlink(cache.path)
        db = sqlite3.connect(cache.path)
        db.execute("CREATE TABLE other (x)")
        db.commit()
        db.close()
    else:
        Path(cache.path).write_bytes(damage)
    with caplog.at_level(logging.INFO):
        fresh = Cache(root, str(tmp_path / "c"))
    assert fresh.enabled
    assert fresh.load() == {}
    assert any("cache" in r.getMessage() for r in caplog.records)
    fresh.store([("b.py", 3, 1, b"x")])
    fresh.close()
    assert set(Cache(root, str(tmp_path / "c")).load()) == {"b.py"}


def test_cache_of_another_version_is_emptied(tmp_path: Path) -> None:
    root = str(tmp_path)
    cache = Cache(root, str(tmp_path / "c"))
    cache.store([("a.py", 3, 1, b"blob")])
    cache.close()
    db = sqlite3.connect(cache.path)
    db.execute("UPDATE meta SET value = 'older' WHERE key = 'stamp'")
    db.commit()
    db.close()
    assert Cache(root, str(tmp_path / "c")).load() == {}


def test_racy_entries_are_not_trusted(tmp_path: Path) -> None:
    """A file written in the same instant it was parsed may change again
    without its mtime moving: its entry must not be believed."""
    import time

    cache = Cache(str(tmp_path), str(tmp_path / "c"))
    cache.store([("a.py", 3, time.time_ns(), b"blob"), ("b.py", 3, 1, b"blob")])
    cache.close()
    loaded = Cache(str(tmp_path), str(tmp_path / "c")).load()
    assert loaded["a.py"][1] == -1 and loaded["b.py"][1] == 1


def _random_segment(
    rng: random.Random, letters: str, count: int, shortest: int, longest: int
) -> tuple[list[str], Segment]:
    """A segment of `count` random names (fewer once repeats are dropped) of
    `letters`, each `shortest` to `longest` long, one definition each."""
    from nearsym.index.build import batch_from_files, from_batch

    names = sorted(
        {
            "".join(rng.choice(letters) for _ in range(rng.randint(shortest, longest)))
            for _ in range(count)
        }
    )
    defs = FileDefs.from_symbols("python", [sym(n, "a.py", i) for i, n in enumerate(names)])
    return names, from_batch(batch_from_files([(0, defs)]))


@pytest.mark.parametrize("seed", range(4))
def test_substring_candidates_miss_nothing(seed: int) -> None:
    """Trigrams are kept at even offsets only: a substring starting at an odd
    offset must still be a candidate, for every query length."""
    rng = random.Random(seed)
    names, seg = _random_segment(rng, "abcdeé_x", 400, 1, 14)
    for _ in range(60):
        source = rng.choice(names)
        start = rng.randrange(len(source))
        q = source[start : start + rng.randint(1, 6)].lower().encode()
        got = {seg.key(e) for chunk in seg.containing(q) for e in chunk.tolist() if q in seg.key(e)}
        want = {n.lower().encode() for n in names if q in n.lower().encode()}
        assert got == want, q


@pytest.mark.parametrize("seed", range(3))
def test_many_substring_candidates_stream_in_the_same_order(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `WIDE_RANGE` candidates (a three-byte query's odd offsets on a
    large index), `containing` reads them from the shortest-first order in
    chunks of whole key pieces instead of sorting them: the same entries in
    the same order, and every chunk but the last a whole number of pieces
    (so a walk's budget is spent as before)."""
    from nearsym.index import segment as segment_module
    from nearsym.index import streams
    from nearsym.index.encoding import char_mask
    from nearsym.index.streams import KEY_PIECE

    _, seg = _random_segment(random.Random(seed), "abcd_", 20_000, 2, 12)
    queries = [b"abc", b"a_b", b"dab", b"cc_", b"abcd", b"d_"]
    sorted_first = {q: [c.tolist() for c in seg.containing(q)] for q in queries}
    monkeypatch.setattr(segment_module, "WIDE_RANGE", 0)
    monkeypatch.setattr(streams, "SCAN_CHUNK", 512)  # several chunks of a small index
    pieced = 0
    for q in queries:
        streamed = [c.tolist() for c in seg.containing(q)]
        assert np.concatenate(streamed).tolist() == np.concatenate(sorted_first[q]).tolist(), q
        if len(q) == 3:
            assert all(len(c) % KEY_PIECE == 0 for c in streamed[:-1]), q
            pieced += len(streamed) > 1
    assert pieced
    # The subsequence tier's stream (entries whose character mask holds the
    # query's) comes in whole pieces too, in the shortest-first order.
    for q in (b"ab", b"d_a", b"abcd"):
        streamed = [c.tolist() for c in seg.subsequence(q)]
        m = np.uint32(char_mask(q))
        assert sum(map(len, streamed)) > 4 * KEY_PIECE, q
        assert all(len(c) % KEY_PIECE == 0 for c in streamed[:-1]), q
        masks = seg.masks.tolist()  # in `by_length` order
        want = [e for k, e in enumerate(seg.by_length.tolist()) if masks[k] & m == m]
        assert np.concatenate(streamed).tolist() == want, q


def test_trigram_lists_with_wide_gaps_decode() -> None:
    """A trigram list is stored as 16-bit gaps, as 16-bit gaps with the
    odd wide one kept whole, or (most gaps wide) as 32-bit entries; each
    decodes to its list. Entries: `a_qzq` 0, `aan00` 1, `b...` 2-70,001,
    `m_qzq` 70,002, `n...` 70,003-140,002, `zzqzq` 140,003; so `qzq`
    (at even offsets) is 32-bit, `n00` escapes one gap, `b00` has none."""
    from nearsym.index.build import batch_from_files, from_batch

    names = ["a_qzq", "aan00", "m_qzq", "zzqzq"]
    names += [f"{g}{i:06d}" for g in "bn" for i in range(70_000)]
    defs = FileDefs.from_symbols("python", [sym(n, "a.py", i) for i, n in enumerate(names)])
    seg = from_batch(batch_from_files([(0, defs)]))
    forms = set()
    for code in (b"qzq", b"n00", b"b00"):
        at = int(np.searchsorted(seg.tri_codes, int.from_bytes(code, "big")))
        assert int(seg.tri_codes[at]) == int.from_bytes(code, "big")
        listed = seg.trigram_list(at).tolist()
        assert listed == sorted(e for e in range(len(seg)) if code in seg.key(e)), code
        escaped = int(seg.tri_big_off[at + 1]) > int(seg.tri_big_off[at])
        forms.add((int(seg.tri_small[at]), escaped))
    assert forms == {(0, False), (1, True), (1, False)}
    for q in [b"qzq", b"zqzq", b"n00", b"n0000", b"06999", b"123", b"aan"]:
        got = {seg.key(e) for chunk in seg.containing(q) for e in chunk.tolist() if q in seg.key(e)}
        want = {n.encode() for n in names if q in n.encode()}
        assert got == want, q


@pytest.mark.parametrize("repeats", [3, 70_000])
def test_rows_of_each_name_read_back(repeats: int) -> None:
    """Each name's rows, whose offsets are stored as a 32-bit base per 64
    names and a 16-bit rest (32-bit when 64 names hold 65,536 rows or more:
    here one name defined 70,000 times), read back as written, one name or
    many at a time, through a snapshot too."""
    from nearsym.index.build import batch_from_files, from_batch
    from nearsym.index.segment import Segment

    rng = random.Random(repeats)
    names = ["x"] * repeats + [f"n{rng.randrange(400)}" for _ in range(600)]
    rng.shuffle(names)
    defs = FileDefs.from_symbols("python", [sym(n, "a.py", i) for i, n in enumerate(names)])
    seg = from_batch(batch_from_files([(0, defs)]))
    assert seg.post_local.dtype == (np.uint16 if repeats < 65536 else np.uint32)
    again = Segment.from_parts(seg.to_bytes(seg.alive), seg.file_ids.tolist())
    every = np.arange(len(seg), dtype=np.uint32)
    for built in (seg, again):
        want = [np.flatnonzero(built.entry == e).tolist() for e in range(len(built))]
        assert [built.rows_of(e).tolist() for e in range(len(built))] == want
        rows, counts = built.rows_of_many(every)
        assert counts == [len(w) for w in want]
        assert rows.tolist() == [r for w in want for r in w]


def test_unusual_spans_survive_merge_and_snapshot() -> None:
    """Columns and widths are 16 bits; a name past column 65,535 or spanning
    lines keeps its whole span, through merges and a snapshot."""
    odd = [
        Symbol("far", Kind.FUNCTION, "", "/ws", "a.py", Span(3, 70_000, 3, 70_003), "python"),
        Symbol("tall", Kind.FUNCTION, "", "/ws", "a.py", Span(5, 4, 7, 2), "python"),
        Symbol("plain", Kind.FUNCTION, "", "/ws", "a.py", Span(9, 0, 9, 5), "python"),
        Symbol("deep", Kind.FUNCTION, "", "/ws", "a.py", Span(70_001, 2, 70_001, 6), "python"),
    ]
    index = SymbolIndex("/ws")
    index.replace_file("a.py", odd)
    index.replace_file("b.py", [sym("other", "b.py")])
    index.compact()
    assert list(index.symbols_of("a.py")) == odd
    parts = index.snapshot({"a.py": (1, 2), "b.py": (3, 4)})
    assert parts is not None
    again = SymbolIndex("/ws")
    stamps = again.install(
        {k: bytes(v) if isinstance(v, memoryview) else v for k, v in parts.items()}
    )
    assert stamps == {"a.py": (1, 2), "b.py": (3, 4)}
    assert list(again.symbols_of("a.py")) == odd
    assert [s.name for s in again.candidates("tall", 10)] == ["tall"]


def test_a_file_s_definitions_of_some_kinds_only() -> None:
    """`symbols_of(path, kinds)` builds only the rows of those kinds, in
    file order, local and deprecated flags kept (the kind byte holds
    them beside the kind)."""
    rows = [
        Symbol("A", Kind.CLASS, "", "/ws", "a.py", Span(0, 6, 0, 7), "python"),
        Symbol("run", Kind.METHOD, "A", "/ws", "a.py", Span(1, 8, 1, 11), "python"),
        Symbol("I", Kind.INTERFACE, "", "/ws", "a.py", Span(3, 6, 3, 7), "python", True, True),
        Symbol("x", Kind.VARIABLE, "", "/ws", "a.py", Span(5, 0, 5, 1), "python"),
    ]
    index = SymbolIndex("/ws")
    index.replace_file("a.py", rows)
    index.replace_file(
        "b.py", [Symbol("B", Kind.CLASS, "", "/ws", "b.py", Span(0, 6, 0, 7), "python")]
    )
    assert list(index.symbols_of("a.py")) == rows
    classes = index.symbols_of("a.py", frozenset({Kind.CLASS, Kind.INTERFACE}))
    assert list(classes) == [rows[0], rows[2]]
    assert index.symbols_of("a.py", frozenset({Kind.ENUM})) == ()
    assert index.symbols_of("gone.py", frozenset({Kind.CLASS})) == ()


@pytest.mark.parametrize("slice_bytes", [5, 64, 4_000_000])
def test_trigram_lists_built_in_slices_match_one_pass(
    slice_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trigram lists are built a slice of names at a time (to bound
    memory); every slice size gives what one pass over the blob gives."""
    import numpy as np

    from nearsym.index import encoding

    rng = random.Random(slice_bytes)
    names = ["".join(rng.choice("abcde_") for _ in range(rng.randint(1, 12))) for _ in range(2000)]
    low = np.frombuffer(("\n" + "\n".join(names) + "\n").encode(), dtype=np.uint8)
    want = {
        (name[i : i + 3].encode(), n)
        for n, name in enumerate(names)
        for i in range(0, len(name) - 2, 2)
    }
    monkeypatch.setattr(encoding, "TRIGRAM_SLICE", slice_bytes)
    codes, start, entries = encoding.trigrams(low)
    got = {
        (int(c).to_bytes(3, "big"), int(e))
        for i, c in enumerate(codes.tolist())
        for e in entries[start[i] : start[i + 1]].tolist()
    }
    assert got == want


@pytest.mark.parametrize("seed", range(4))
def test_packed_trigram_lists_unpack_to_the_lists_packed(seed: int) -> None:
    """`unpack_trigrams` gives back what `pack_trigrams` packed: long dense
    lists (16-bit gaps), lists with gaps of 65,536 and more (kept aside),
    sparse lists (32-bit), lists of one entry, in any mix."""
    from nearsym.index import encoding

    rng = np.random.default_rng(seed)
    codes = np.sort(rng.choice(1 << 24, size=300, replace=False)).astype(np.uint32)
    lists = []
    for _ in codes:
        shape = rng.integers(4)
        if shape == 0:  # dense
            ids = rng.choice(5_000, size=rng.integers(1, 2_000), replace=False)
        elif shape == 1:  # dense with far jumps
            ids = np.concatenate(
                [rng.choice(3_000, 500, replace=False) + k * 200_000 for k in range(4)]
            )
        elif shape == 2:  # sparse
            ids = rng.choice(4_000_000, size=rng.integers(1, 6), replace=False)
        else:
            ids = rng.integers(4_000_000, size=1)
        lists.append(np.unique(ids).astype(np.uint32))
    bounds = np.zeros(len(codes) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in lists], out=bounds[1:])
    entries = np.concatenate(lists)
    packed = encoding.pack_trigrams(codes, bounds, entries)
    assert packed[1].any() and not packed[1].all() and len(packed[7])  # every layout
    got = encoding.unpack_trigrams(*packed)
    for want, have in zip((codes, bounds, entries), got, strict=True):
        assert np.array_equal(want, have)


@pytest.mark.parametrize(("seed", "aside"), [(0, False), (1, False), (2, True), (3, True)])
def test_a_merged_segment_equals_one_built_from_its_live_files(seed: int, aside: bool) -> None:
    """Merging segments (dead files among them, names shared between them,
    the trigram lists merged from the segments' own, here or on a thread
    aside) gives, column for column, the segment built from the live
    files' rows in path order."""
    from nearsym.index.build import batch_from_files, from_batch, merge

    rng = random.Random(seed)
    files: list[tuple[int, FileDefs]] = []
    for fid in range(40):
        rows = [
            sym(
                rng.choice(
                    [_words(rng), _words(rng).upper(), "ünï_" + _words(rng), "abababab", "x"]
                ),
                f"f{fid:02}.c",
                i,
                rng.choice(["", "Cart", "pkg.Cart"]),
            )
            for i in range(rng.randint(0, 60))
        ]
        files.append((fid, FileDefs.from_symbols("c", rows)))
    order = list(range(40))
    rng.shuffle(order)
    parts = [order[k : k + 8] for k in range(0, 40, 8)]
    segments = [from_batch(batch_from_files([files[f] for f in sorted(p)])) for p in parts]
    dead = set(rng.sample(range(40), 10))
    for seg in segments:
        for fid in seg.file_ids.tolist():
            if fid in dead:
                seg.kill(fid)
    merged = merge(segments, [f"f{fid:02}.c" for fid in range(40)], aside=aside)
    fresh = from_batch(batch_from_files([f for f in files if f[0] not in dead]))
    want = fresh.to_bytes(fresh.alive)
    have = merged.to_bytes(merged.alive)
    assert have.keys() == want.keys()
    assert [k for k in want if have[k] != want[k]] == []
    assert merged.file_ids.tolist() == fresh.file_ids.tolist()


def test_initials_codes_follow_the_word_start_rules() -> None:
    """The packed initials of every name of a blob, read byte by byte by
    vectorised rules, equal the rules applied name by name."""
    from nearsym.index import encoding

    rng = random.Random(5)
    alphabet = "aAbBzZ09_-.:$ #xyHTTPServerÜé"
    names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    names += ["HTTPServer", "getUserId", "ABc", "X_", "", "a", "__init__", "A", "aB"]

    def reference(name: str) -> tuple[int, int]:
        raw = name.encode()
        seps = set(b"_-./:$ #\\")
        starts = []
        for i, b in enumerate(raw):
            prev = raw[i - 1] if i else None
            nxt = raw[i + 1] if i + 1 < len(raw) else None
            upper = 65 <= b <= 90
            after_separator = b not in seps and (prev is None or prev in seps)
            after_lower = upper and prev is not None and (97 <= prev <= 122 or 48 <= prev <= 57)
            ends_capitals = (
                upper
                and prev is not None
                and 65 <= prev <= 90
                and nxt is not None
                and 97 <= nxt <= 122
            )
            if after_separator or after_lower or ends_capitals:
                starts.append(b)
        code = 0
        for k, b in enumerate(starts[: encoding.INITIALS_KEPT]):
            folded = b + 32 if 65 <= b <= 90 else b
            code |= folded << (8 * (encoding.INITIALS_KEPT - 1 - k))
        return code, len(starts)

    codes, numbers = encoding.initials(encoding.joined(names))
    assert list(zip(codes.tolist(), numbers.tolist(), strict=True)) == [reference(n) for n in names]


def test_merged_entries_equal_a_sort_of_the_live_names() -> None:
    """A merge's entries (the live rows' distinct names, by lower-cased key
    then spelling) and each segment's map to them equal sorting the set of
    names, with keys of several spellings spread over segments."""
    from nearsym.index import build

    rng = random.Random(23)
    spellings = ["id", "ID", "Id", "iD", "cart", "Cart", "CART", "cArt", "ünï", "ÜNÏ", "x"]
    segments = []
    for s_no in range(6):
        files = []
        for f in range(rng.randint(1, 5)):
            rows = [
                sym(
                    rng.choice([*spellings, _words(rng), _words(rng).upper()]), f"f{s_no}_{f}.py", i
                )
                for i in range(rng.randint(0, 9))
            ]
            files.append((s_no * 10 + f, FileDefs.from_symbols("python", rows)))
        seg = build.from_batch(build.batch_from_files(files))
        if s_no % 2 and len(files) > 1:
            seg.kill(files[0][0])
        segments.append(seg)
    entries, lowers, spelling, remaps = build.merged_entries(segments)
    live = set()
    for seg in segments:
        names = seg.entry_names()
        live.update(names[int(e)] for e in seg.entry[seg.live_row_mask()])
    want = sorted(live)
    want.sort(key=str.lower)
    assert entries == want
    assert lowers == [e.lower() for e in want]
    assert spelling == build.spelling_codes(want, lowers)
    for seg, remap in zip(segments, remaps, strict=True):
        names = seg.entry_names()
        for e in {int(e) for e in seg.entry[seg.live_row_mask()]}:
            assert entries[int(remap[e])] == names[e]


class Recorder(IndexTarget):
    """An index target that keeps each batch's files, in order."""

    def __init__(self, index: SymbolIndex) -> None:
        super().__init__(index)
        self.batches: list[list[str]] = []

    def apply(self, batch: list[tuple[SourceFile, Result]]) -> None:
        self.batches.append([sf.rel for sf, _ in batch])
        super().apply(batch)


def test_open_files_folder_is_indexed_first(tmp_path: Path) -> None:
    """With a file open, its folder's files reach the index in the first
    batch, before the walk of the rest; then nearer folders before farther."""
    root = tmp_path / "ws"
    for folder in ["a", "a/deep", "b", "c/d", "z"]:
        for n in range(30):
            path = root / folder / f"m{n}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"def f_{folder.replace('/', '_')}_{n}():\n    pass\n")
    open_file = str(root / "c" / "d" / "m0.py")
    index = SymbolIndex(str(root))
    target = Recorder(index)
    batches = target.batches
    stats = index_namespace(str(root), Config(), target, focus=lambda: open_file)
    assert stats.files == 150 and len(index.files) == 150
    order = [rel for batch in batches for rel in batch]
    assert order[0] == "c/d/m0.py"  # the open file itself, first
    assert all(rel.startswith("c/d/") for rel in order[:30])  # then its folder
    assert len(batches[0]) < 30  # searchable a few files at a time
    assert order.index("a/m0.py") > max(order.index(f"c/d/m{n}.py") for n in range(30))


def test_a_cold_index_hands_the_open_folder_to_the_pool_once_it_is_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cold, the pool starts and the tree is walked while the open file's
    folder is parsed here; once both are ready, the folder's files left go
    to the pool with the rest. Every file is indexed once, the open file
    first."""
    root = tmp_path / "ws"
    for folder, count in (("near", 80), ("far", 60)):
        for n in range(count):
            path = root / folder / f"m{n}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"def {folder}_{n}():\n    pass\n")
    here: list[str] = []
    real = indexer_module.parse_one

    def slow(path: str, rel: str, language: str, limit: int) -> Parsed:
        here.append(rel)
        time.sleep(0.05)  # a large folder: the pool is up before it is done
        return real(path, rel, language, limit)

    monkeypatch.setattr(indexer_module, "parse_one", slow)
    index = SymbolIndex(str(root))
    target = Recorder(index)
    batches = target.batches
    workers = Workers(2)
    try:
        stats = index_namespace(
            str(root),
            Config(),
            target,
            workers=workers,
            focus=lambda: str(root / "near" / "m0.py"),
        )
    finally:
        workers.close(wait=True)
    order = [rel for batch in batches for rel in batch]
    assert stats.files == 140 and len(index.files) == 140
    assert sorted(order) == sorted(set(order)) and len(order) == 140  # each once
    assert order[0] == "near/m0.py"
    assert 0 < len(here) < 80  # the pool took the rest of the folder
    assert all(rel.startswith("near/") for rel in here)


def _near_and_far_snapshotted(tmp_path: Path, files: int) -> tuple[Path, str, float]:
    """A workspace of two folders, `near` and `far`, of `files` Python files
    each, older than the racy window (the snapshot trusts them), indexed
    with its snapshot saved: (root, cache folder, the files' mtime)."""
    root = tmp_path / "ws"
    for folder in ["near", "far"]:
        for n in range(files):
            path = root / folder / f"m{n}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"def {folder}_{n}():\n    pass\n")
    old = time.time() - 60
    for path in root.rglob("*.py"):
        os.utime(path, (old, old))
    cache_dir = str(tmp_path / "cache")
    index = SymbolIndex(str(root))
    cache = Cache(str(root), cache_dir)
    save_snapshot(index, index_into(index, Config(), cache=cache), cache)
    cache.close()
    return root, cache_dir, old


def _parses_recorded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the indexer parses from now on, in order."""
    parsed: list[str] = []
    real = indexer_module.parse_one

    def recording(path: str, rel: str, language: str, limit: int) -> Parsed:
        parsed.append(rel)
        return real(path, rel, language, limit)

    monkeypatch.setattr(indexer_module, "parse_one", recording)
    return parsed


def _restart_near(root: Path, cache_dir: str) -> tuple[SymbolIndex, ColdStats]:
    """`root` indexed again from its cache, `near/m0.py` open."""
    restarted = SymbolIndex(str(root))
    cache = Cache(str(root), cache_dir)
    stats = index_namespace(
        str(root), Config(), IndexTarget(restarted), cache=cache,
        focus=lambda: str(root / "near" / "m0.py"),
    )  # fmt: skip
    cache.close()
    return restarted, stats


@pytest.mark.parametrize("small", [True, False])
def test_a_restart_parses_the_open_folder_only_where_a_small_snapshot_is_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    """A snapshot under `SNAPSHOT_FIRST_BYTES` is loaded before the open
    file's folder, so of that folder only the changed file is parsed; a
    larger one is loaded after the whole folder is parsed from source."""
    root, cache_dir, old = _near_and_far_snapshotted(tmp_path, 6)
    changed = root / "near" / "m3.py"
    changed.write_text("def near_changed():\n    pass\n")
    os.utime(changed, (old + 5, old + 5))
    if not small:
        monkeypatch.setattr(indexer_module, "SNAPSHOT_FIRST_BYTES", 0)
    parsed = _parses_recorded(monkeypatch)
    restarted, _ = _restart_near(root, cache_dir)
    names = {s.name for s in restarted.all_symbols()}
    assert {"near_0", "near_changed", "far_5"} <= names and "near_3" not in names
    if small:
        assert parsed == ["near/m3.py"]
    else:
        assert sorted(parsed) == [f"near/m{n}.py" for n in range(6)]
    # The unchanged files parsed before the snapshot take its rows (the
    # snapshot's segment holds all but the changed file's), each file's
    # mentions counted once.
    assert max(s.live_rows for s in restarted.segments) >= 11
    assert len(restarted) == 12
    assert restarted.mention_counts(["near_0", "near_changed", "far_5"]) == [1, 1, 1]


@pytest.mark.parametrize("edited", [False, True])
def test_a_restart_writes_a_new_snapshot_only_when_the_index_differs_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edited: bool
) -> None:
    """A restart with a snapshot over `SNAPSHOT_FIRST_BYTES` parses the
    open file's folder before it loads the snapshot. When the snapshot
    holds those files as they are, nothing new was found: no snapshot is
    due (the Linux kernel wrote its 284 MB again at every restart). A file
    of the folder edited since is."""
    root, cache_dir, old = _near_and_far_snapshotted(tmp_path, 4)
    if edited:
        changed = root / "near" / "m2.py"
        changed.write_text("def near_edited():\n    pass\n")
        os.utime(changed, (old + 5, old + 5))
    monkeypatch.setattr(indexer_module, "SNAPSHOT_FIRST_BYTES", 0)
    restarted, stats = _restart_near(root, cache_dir)
    assert stats.parsed_ok == 4  # the whole folder, before the snapshot
    assert stats.parsed_held == (3 if edited else 4)
    assert stats.changed is edited
    assert ("near_edited" in {s.name for s in restarted.all_symbols()}) is edited


def test_a_restart_does_not_read_again_the_files_the_snapshot_knows_it_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files a cold index passed over (a binary, one over the size cap)
    go into the snapshot with their stamps: a restart does not read them
    (the Linux kernel's restart started the process pool for its 87 alone
    and parsed its two broken files again). One changed since is read."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def here():\n    pass\n")
    (root / "blob.py").write_bytes(b"\0binary")
    (root / "big.py").write_text("x = 1\n" * 200_000)  # over the 1 MB cap
    old = time.time() - 60  # older than the racy window: the snapshot trusts it
    for path in root.iterdir():
        os.utime(path, (old, old))
    cache_dir = str(tmp_path / "cache")
    parsed = _parses_recorded(monkeypatch)

    def start() -> tuple[SymbolIndex, ColdStats]:
        parsed.clear()
        index = SymbolIndex(str(root))
        cache = Cache(str(root), cache_dir)
        stats = index_into(index, Config(), cache=cache)
        save_snapshot(index, stats, cache)
        cache.close()
        return index, stats

    index, stats = start()
    assert sorted(parsed) == ["a.py", "big.py", "blob.py"] and len(index.skipped) == 2
    assert stats.newly_skipped == 2
    index, stats = start()
    assert parsed == [] and stats.passed_over == 2 and not stats.changed
    assert {s.name for s in index.all_symbols()} == {"here"}
    (root / "blob.py").write_bytes(b"\0binary, longer")
    index, stats = start()
    assert parsed == ["blob.py"] and stats.passed_over == 1 and stats.changed
    index, stats = start()
    assert parsed == ["blob.py"]  # written just now: its stamp is not trusted yet
    os.utime(root / "blob.py", (old + 5, old + 5))
    index, stats = start()
    assert parsed == ["blob.py"]  # a new stamp, now one to trust
    index, stats = start()
    assert parsed == [] and stats.passed_over == 2


def test_the_walk_waits_for_the_gate_and_sees_what_changed_meanwhile(tmp_path: Path) -> None:
    """With a gate (the server's "file changes are watched"), the open
    file's folder is indexed at once and the walk waits; a file created, and
    a neighbourhood file changed, before the gate opens are indexed as they
    are when it opens."""
    root = tmp_path / "ws"
    (root / "near").mkdir(parents=True)
    (root / "far").mkdir()
    (root / "near" / "open.py").write_text("def opened_first():\n    pass\n")
    (root / "near" / "sibling.py").write_text("def sibling_before():\n    pass\n")
    (root / "far" / "old.py").write_text("def far_away():\n    pass\n")
    open_file = str(root / "near" / "open.py")
    gate = threading.Event()
    index = SymbolIndex(str(root))
    out: list[object] = []
    runner = threading.Thread(
        target=lambda: out.append(
            index_namespace(
                str(root), Config(), IndexTarget(index), focus=lambda: open_file, walk_gate=gate
            )
        )
    )
    runner.start()
    for _ in range(400):
        if "near/sibling.py" in index.files:
            break
        time.sleep(0.01)
    assert {"near/open.py", "near/sibling.py"} <= set(index.files)
    time.sleep(0.2)
    assert "far/old.py" not in index.files and runner.is_alive()  # the walk waits
    (root / "near" / "sibling.py").write_text("def sibling_after_a_change():\n    pass\n")
    (root / "far" / "created.py").write_text("def created_while_waiting():\n    pass\n")
    gate.set()
    runner.join(10)
    assert out, "the index never finished"
    names = {s.name for s in index.all_symbols()}
    assert {"opened_first", "far_away", "created_while_waiting"} <= names
    assert "sibling_after_a_change" in names and "sibling_before" not in names


def test_pool_workers_exit_with_the_server(tmp_path: Path) -> None:
    """A server killed outright (SIGKILL: no shutdown runs) must not leave
    its indexing workers behind, waiting on their task queue forever."""
    script = (
        "import sys, time\n"
        "from nearsym.workspace.pool import Workers\n"
        "w = Workers(2)\n"
        "w.warm()\n"
        "w.submit([], 0).result()\n"
        "print(' '.join(str(p) for p in w._pool._processes), flush=True)\n"  # type: ignore
        "time.sleep(60)\n"
    )
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert server.stdout is not None
    workers = [int(p) for p in server.stdout.readline().split()]
    assert len(workers) == 2
    server.kill()
    server.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(running(p) for p in workers):
        time.sleep(0.05)
    assert [p for p in workers if running(p)] == []


def test_compact_leaves_a_dominant_segment_alone() -> None:
    """After a snapshot loads, the few files parsed around it are merged
    among themselves; the snapshot's segment is not rebuilt."""
    before = SymbolIndex("/ws")
    before.replace_files(
        [
            (f"big{i}.py", FileDefs.from_symbols("python", [sym(f"n{i}", f"big{i}.py")]))
            for i in range(200)
        ]
    )
    parts = before.snapshot({p: (1, 1) for p in before.files})
    assert parts is not None
    index = SymbolIndex("/ws")
    index.bulk = True
    index.install(parts)
    big = index.segments[0]
    index.replace_file("s1.py", [sym("small1", "s1.py")])
    index.replace_file("s2.py", [sym("small2", "s2.py")])
    index.compact()
    assert index.segments[0] is big and len(index.segments) == 2
    assert [s.name for s in index.candidates("small2", 5)] == ["small2"]


@pytest.mark.parametrize("seed", range(20))
def test_sorted_intersection_equals_numpy(seed: int) -> None:
    """The trigram lists' intersection by binary search is numpy's, on
    sorted unique lists of every relative size, empty and disjoint ones
    included."""
    import numpy as np

    from nearsym.index.encoding import intersect_sorted

    rng = np.random.default_rng(seed)
    for _ in range(50):
        universe = int(rng.integers(1, 5000))
        a = np.unique(rng.integers(0, universe, int(rng.integers(0, 300)))).astype(np.uint32)
        b = np.unique(rng.integers(0, universe, int(rng.integers(0, 3000)))).astype(np.uint32)
        want = np.intersect1d(a, b, assume_unique=True)
        got = intersect_sorted(a, b)
        assert got.dtype == np.uint32 and got.tolist() == want.tolist()


def test_names_and_owners_of_rows_read_as_written() -> None:
    """Rows read back their names in every spelling the entries store (as
    the key, all capitals, a capital first, spelled otherwise), repeated
    and in any order, and their owners, as the whole-column readers do."""
    import numpy as np

    from nearsym.index.build import batch_from_files, from_batch

    names = ["id", "ID", "Id", "iD", "getId", "GetID", "x", "Ünïcode", "ÜNÏCODE", "snake_case"]
    owners = ["", "Cart", "cart", "pkg.Cart", "Ünï"]
    defs = FileDefs.from_symbols(
        "python",
        [sym(n, "a.py", i, owners[i % len(owners)]) for i, n in enumerate(names * 3)],
    )
    seg = from_batch(batch_from_files([(0, defs)]))
    written = seg.entry_names()
    assert sorted(set(written)) == sorted(set(names))
    rng = random.Random(7)
    entries = [rng.randrange(len(written)) for _ in range(200)]
    assert seg.names_of(np.asarray(entries, dtype=np.uint32)) == [written[e] for e in entries]
    every = list(range(seg.container_count))
    assert seg.containers_of(every) == {c: seg.container(c) for c in every}
    assert set(seg.containers_of(every).values()) == set(owners)


@pytest.mark.parametrize("owned", [0.1, 0.9])
def test_rows_read_back_their_container_and_span(owned: float) -> None:
    """Whether few rows have a container (C: stored as the rows that have
    one) or most do (a column), and whether a span is the name's own width
    (stored as its start) or not (kept whole): every row reads back as
    written, in a segment built here, rebuilt from its bytes and merged."""
    from nearsym.index.build import batch_from_files, from_batch, merge
    from nearsym.index.segment import Segment

    rng = random.Random(int(owned * 100))
    files: list[tuple[int, FileDefs]] = []
    written: list[list[Symbol]] = []
    for fid in range(6):
        path = f"f{fid}.c"
        symbols = []
        for i in range(80):
            name = rng.choice([_words(rng), "ünï_" + _words(rng), "x"])
            owner = rng.choice(["Cart", "pkg.Cart", "Ünï"]) if rng.random() < owned else ""
            line, col = rng.choice([i, 70_000 + i]), rng.choice([0, 4, 255, 256, 70_000])
            width = len(name) if rng.random() < 0.8 else len(name) + rng.randint(1, 5)
            end_line = line if rng.random() < 0.9 else line + 2
            span = Span(line, col, end_line, col + width)
            symbols.append(Symbol(name, Kind.FUNCTION, owner, "/ws", path, span, "c"))
        written.append(symbols)
        files.append((fid, FileDefs.from_symbols("c", symbols)))

    def read(seg: Segment, fid: int) -> list[tuple[str, str, tuple[int, ...]]]:
        rows = seg.file_rows(fid)
        names = seg.names_of(seg.entry[rows])
        owners = [seg.container(c) for c in seg.conts(rows).tolist()]
        spans = list(zip(*(a.tolist() for a in seg.spans_of(rows)), strict=True))
        return list(zip(names, owners, spans, strict=True))

    def expected(fid: int) -> list[tuple[str, str, tuple[int, ...]]]:
        return [
            (s.name, s.container, (s.span.line, s.span.col, s.span.end_line, s.span.end_col))
            for s in written[fid]
        ]

    built = [
        from_batch(batch_from_files(files[:3])),
        from_batch(batch_from_files(files[3:])),
    ]
    assert (len(built[0].cont) == 0) is (owned < 0.5)  # the layout under test
    shipped = [Segment.from_parts(seg.to_bytes(seg.alive), seg.file_ids.tolist()) for seg in built]
    merged = merge(shipped, [f"f{fid}.c" for fid in range(6)])
    for fid in range(6):
        assert read(built[fid // 3], fid) == expected(fid)
        assert read(shipped[fid // 3], fid) == expected(fid)
        assert read(merged, fid) == expected(fid)


@pytest.mark.parametrize("owned", [0.1, 0.9])
def test_nbytes_counts_every_column_and_a_snapshot_stores_them(owned: float) -> None:
    """`Segment.nbytes` counts every array and blob the segment holds (with
    few or most rows owned: the two container layouts), built, rebuilt from
    a snapshot and merged; a snapshot stores every column but the file ids
    and their order, which `from_parts` is given and rebuilds."""
    from nearsym.index.build import batch_from_files, from_batch, merge
    from nearsym.index.segment import Segment

    rng = random.Random(int(owned * 100))
    files = []
    for fid in range(4):
        symbols = [
            sym(_words(rng), f"f{fid}.c", i, "Cart" if rng.random() < owned else "")
            for i in range(50)
        ]
        files.append((fid, FileDefs.from_symbols("c", symbols)))
    built = from_batch(batch_from_files(files[:2]))
    other = from_batch(batch_from_files(files[2:]))
    again = Segment.from_parts(other.to_bytes(other.alive), other.file_ids.tolist())
    merged = merge([built, again], [f"f{fid}.c" for fid in range(4)])
    for seg in (built, again, merged):
        held = 0
        for name in Segment.__slots__:
            value = getattr(seg, name)
            if isinstance(value, np.ndarray):
                held += value.nbytes
            elif isinstance(value, bytes | memoryview):
                held += len(value)
        assert seg.nbytes() == held
    stored = {key.split(":")[0] for key in built.to_parts(built.alive)}
    apart = {"file_ids", "fid_order", "fid_sorted", "live_rows", "__weakref__"}
    assert stored == set(Segment.__slots__) - apart


def test_merges_on_a_worker_equal_merges_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold index's merges shipped to a pool worker (and a merger that
    fails, merged here instead) give the index an in-process merge gives:
    through bulk merges, replaced and removed files, and the final compact."""
    import nearsym.index.store as index_module

    monkeypatch.setattr(index_module, "MERGE_ELSEWHERE_ROWS", 0)
    rng = random.Random(11)
    batches: list[list[tuple[str, list[Symbol]]]] = []
    for _ in range(40):  # more batches than BULK_SEGMENTS: bulk merges happen
        batch = []
        for _ in range(rng.randint(1, 6)):
            path = f"d{rng.randint(0, 4)}/f{rng.randint(0, 60)}.py"
            owner = rng.choice(["", "Cart", "cart", "Ünï", "pkg.Cart"])
            rows = [
                sym(rng.choice([_words(rng), _words(rng).upper(), "id", "ID"]), path, i, owner)
                for i in range(rng.randint(0, 12))
            ]
            batch.append((path, rows))
        batches.append(batch)
    removed = [f"d{rng.randint(0, 4)}/f{rng.randint(0, 60)}.py" for _ in range(10)]

    def build(merger: index_module.Merger | None) -> SymbolIndex:
        index = SymbolIndex("/ws")
        index.bulk = True
        index.merger = merger
        for n, batch in enumerate(batches):
            index.replace_files([(p, FileDefs.from_symbols("python", rows)) for p, rows in batch])
            if n == 30:
                for path in removed:
                    index.remove_file(path)
        index.compact()
        return index

    here = build(None)
    shipped: list[int] = []
    workers = Workers(1)
    try:

        def counted(inputs: index_module.MergeInput) -> tuple[dict[str, bytes], list[str]]:
            shipped.append(len(inputs))
            return workers.merge(inputs)

        elsewhere = build(counted)
    finally:
        workers.close(wait=True)

    def broken(inputs: index_module.MergeInput) -> tuple[dict[str, bytes], list[str]]:
        raise OSError("no pool")

    fallback = build(broken)
    assert len(shipped) > 2
    for index in (elsewhere, fallback):
        assert len(index) == len(here) and len(index.segments) == 1
        assert _table(index) == _table(here)
        for q in ["id", "Cart.", "cart.id", "ÜNÏ", "a", "zz"]:
            assert index.candidates(q, 50) == here.candidates(q, 50), q


@pytest.mark.parametrize("n", [0, 5, 1 << 20, 3_160_000])
def test_a_table_of_flags_is_zeroed_and_as_long_as_asked(n: int) -> None:
    """`encoding.table`, padded to a huge-paged size from a million flags,
    is still `n` zeroed flags, and a fresh one after flags were set."""
    from nearsym.index.encoding import table

    flags = table(n)
    assert flags.shape == (n,) and flags.dtype == np.bool_ and not flags.any()
    flags[::7] = True
    again = table(n)
    assert again.shape == (n,) and not again.any()
