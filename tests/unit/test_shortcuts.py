"""The query path's shortcuts against the slow ways they replace.

Each shortcut of retrieval (a look-up made cheaper, a scan made in numpy)
must give what the slow way gives: the same keys, the same entries, the
same pool. These tests build small generated trees and compare the two,
pools rather than final answers, so a difference cannot hide behind the
rerank.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nearsym.core.model import Kind
from nearsym.index import keys as key_walk
from nearsym.index import nearby, subset, where
from nearsym.index.encoding import joined, slices
from nearsym.index.keys import KeyCheck, Subsequence, Substring, merged_keys
from nearsym.index.retrieval import _Retrieval
from nearsym.index.segment import Segment
from nearsym.index.store import SymbolIndex
from nearsym.index.subset import Starting, exact_many, shared_start

from .helpers import sym

_PIECES = ["r", "rx", "tx", "a", "aa", "ab", "ring", "reader", "/", ".", "_", "x"]


def _blob(rng: random.Random, count: int) -> tuple[bytes, object]:
    import numpy as np

    keys = ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 6))) for _ in range(count)]
    blob = joined(keys)
    offsets = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 10)
    return blob, offsets


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    needle=st.sampled_from(["r", "a", "aa", "aaa", "ab", "aba", "rx", "x.r", "/r", "ring", "q"]),
    limit=st.sampled_from([0, 1, 3, 10, 20_000]),
)
def test_starting_in_numpy_finds_the_keys_the_find_loop_finds(
    seed: int, needle: str, limit: int
) -> None:
    """`_starting` (numpy over the blob) and `_starting_slowly` (one `find`
    per occurrence) agree, including when they give up (`_MOST_STARTS`,
    overlapping occurrences counted: `aa` in `aaaa`)."""
    import numpy as np

    rng = random.Random(seed)
    blob, offsets = _blob(rng, rng.randint(0, 60))
    saved = where._MOST_STARTS
    where._MOST_STARTS = limit
    try:
        for after in (b"\n/.", b"\n."):
            for dtype in (np.int64, np.uint32):
                typed = np.asarray(offsets, dtype=dtype)
                fast = where._starting(blob, typed, needle.encode(), after)
                slow = where._starting_slowly(blob, typed, needle.encode(), after)
                if slow is None:
                    assert fast is None
                else:
                    assert fast is not None and fast.tolist() == slow.tolist()
    finally:
        where._MOST_STARTS = saved


def test_shared_counts_the_common_start() -> None:
    rng = random.Random(7)
    for _ in range(2_000):
        a = bytes(rng.choice(b"ab\xff\x00") for _ in range(rng.randint(0, 9)))
        b = bytes(rng.choice(b"ab\xff\x00") for _ in range(rng.randint(0, 9)))
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        assert shared_start(a, b) == n, (a, b)


def _names_index(rng: random.Random, files: int = 30) -> SymbolIndex:
    """Names close to one another (one edit apart, or differing only in
    case), so that typo look-ups find many."""
    stems = ["reader", "readers", "raeder", "reder", "Reader", "READER", "ring", "rings", "rign"]
    index = SymbolIndex("/ws")
    for f in range(files):
        rel = f"pkg{f % 4}/m{f}.go"
        defs = [
            sym(rng.choice(stems) + rng.choice(["", "x", "X", "_b", "Buf", "buf"]), rel, line=line)
            for line in range(rng.randint(1, 9))
        ]
        index.replace_file(rel, defs)
    return index


@pytest.mark.parametrize("seed", range(6))
def test_span_look_ups_are_the_segments_exact_look_ups(seed: int) -> None:
    rng = random.Random(seed)
    index = _names_index(rng)
    probes = [b"reader", b"readerx", b"ring", b"rin", b"r", b"", b"zzz", b"reader_b", b"ringsbuf"]
    for seg in index.segments:
        for start in [b"", b"r", b"re", b"read", b"reader", b"rings", b"q"]:
            among = seg.starting(start)
            for small in (True, False):
                saved = subset.SMALL_SPAN
                subset.SMALL_SPAN = 1 << 30 if small else -1
                try:
                    span = Starting(seg, among)
                finally:
                    subset.SMALL_SPAN = saved
                for key in probes:
                    want = seg.exact(key, among)
                    got = span.exact(key)
                    assert list(got) == list(want), (start, key, small)


@pytest.mark.parametrize("seed", range(6))
def test_many_keys_bisected_at_once_are_the_segments_exact_look_ups(seed: int) -> None:
    """`exact_many` (every key's bisection in one) finds what `Segment.exact`
    finds, key by key: keys present, absent, prefixes and extensions of
    present ones, non-ASCII, with a NUL, empty; in whole and partial spans."""
    rng = random.Random(seed)
    index = _names_index(rng)
    index.replace_file(
        "u/m.go",
        [
            sym(n, "u/m.go", line=i)
            for i, n in enumerate(["Äpfel", "äpfelx", "a\x00b", "a\x00", "a", "ab"])
        ],
    )
    for seg in index.segments:
        present = [seg.key(e) for e in range(len(seg))]
        keys = present + [k[:-1] for k in present] + [k + b"a" for k in present]
        keys += [b"", b"\x00", b"a\x00", b"\xff", b"zzz", "äpfel".encode(), b"r" * 40]
        rng.shuffle(keys)
        spans = []
        for k in keys:
            cut = rng.randint(0, len(k))
            spans.append(seg.starting(k[:cut]) if rng.random() < 0.7 else range(len(seg)))
        got = exact_many(seg, keys, spans)
        assert [list(r) for r in got] == [
            list(seg.exact(k, s)) for k, s in zip(keys, spans, strict=True)
        ]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("text", ["reader", "readerbuf", "rings", "raederx", "rignbuf"])
def test_typo_pool_is_the_same_with_and_without_span_dicts(seed: int, text: str) -> None:
    """The typo fallback's rows do not depend on how its exact look-ups
    are made (a dict of a small span, or a bisection)."""
    rng = random.Random(seed)
    index = SymbolIndex("/ws")
    # Several segments: a file replaced on its own gets a segment of its own.
    big = _names_index(rng, 40)
    for rel in big.files:
        index.replace_file(rel, list(big.symbols_of(rel)))
    index.replace_file("extra/one.go", [sym("readr", "extra/one.go", Kind.STRUCT)])

    def pool(small: int) -> list[tuple[str, int, str]]:
        saved = subset.SMALL_SPAN
        subset.SMALL_SPAN = small
        try:
            rows = _Retrieval(index).typos(text, 500, [])
        finally:
            subset.SMALL_SPAN = saved
        return [(s.path, s.span.line, s.name) for s in rows]

    assert pool(1 << 30) == pool(-1)


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    text=st.sampled_from(["r", "rx", "ra", "aa", "aaa", "x.r", "ring", "rb_", "_", "q"]),
)
def test_holding_in_order_is_the_subsequence_regex(seed: int, text: str) -> None:
    """`encoding.holding_in_order` (numpy) and `keys.Subsequence` (a regex
    over the sliced keys) pass the same keys."""
    import numpy as np

    from nearsym.index import encoding
    from nearsym.index.encoding import holding, holding_in_order

    rng = random.Random(seed)
    blob, offsets = _blob(rng, rng.randint(0, 80))
    count = len(offsets) - 1  # type: ignore[arg-type]
    ids = np.asarray(sorted(rng.sample(range(count), rng.randint(0, count))), dtype=np.uint32)
    rng.shuffle(ids)
    keys = slices(blob, offsets, ids)  # type: ignore[arg-type]
    want = Subsequence(text.encode()).passing(keys)
    got = holding_in_order(blob, offsets, ids, text.encode())  # type: ignore[arg-type]
    assert got.tolist() == want
    # in blocks of a few keys, as past `HOLDING_BLOCK`
    saved = encoding.HOLDING_BLOCK
    encoding.HOLDING_BLOCK = rng.randint(1, 9)
    try:
        blocked = holding_in_order(blob, offsets, ids, text.encode())  # type: ignore[arg-type]
    finally:
        encoding.HOLDING_BLOCK = saved
    assert blocked.tolist() == want
    # and the substrings (`encoding.holding`, `keys.Substring`)
    held = holding(blob, offsets, ids, text.encode())  # type: ignore[arg-type]
    assert held.tolist() == Substring(text.encode()).passing(keys)


@pytest.mark.parametrize("owner", ["r", "rd", "rdr", "reader", "ringbuf", "x", "ab", "_b"])
def test_owners_like_is_the_same_in_numpy_and_by_regex(owner: str) -> None:
    index = _names_index(random.Random(3), 40)
    for f in range(60):
        rel = f"own/f{f}.go"
        owners = ["Reader", "RingBuf", "rdr", "ab_b", "x.Reader", "Rx", "AB"]
        index.replace_file(
            rel,
            [sym(f"m{k}", rel, Kind.METHOD, owners[(f + k) % len(owners)], k) for k in range(5)],
        )
    for seg in index.segments:
        saved = key_walk.OWNERS_IN_NUMPY
        try:
            key_walk.OWNERS_IN_NUMPY = 0
            fast = key_walk.owners_like(seg, owner.encode())
            key_walk.OWNERS_IN_NUMPY = 1 << 30
            slow = key_walk.owners_like(seg, owner.encode())
        finally:
            key_walk.OWNERS_IN_NUMPY = saved
        assert fast.tolist() == slow.tolist(), owner


@pytest.mark.parametrize("seed", range(4))
def test_the_open_file_s_names_are_found_alike_one_by_one_and_all_at_once(seed: int) -> None:
    rng = random.Random(seed)
    index = _names_index(rng, 40)
    names = ["reader", "Reader", "readers", "readerX", "ringbuf", "rign_b", "absent", "r", ""]
    names += [f"reader{rng.choice(['x', 'X', '_b', 'Buf', 'zz'])}{k}" for k in range(40)]
    keys = nearby.starting_with(frozenset(names), "r")
    assert b"r" not in keys and b"absent" not in keys and keys == sorted(keys)
    every: set[bytes] = set()
    for seg in index.segments:
        saved = nearby.ONE_BY_ONE
        try:
            nearby.ONE_BY_ONE = 0
            together = nearby.entries_of(seg, keys, None)
            nearby.ONE_BY_ONE = 1 << 30
            alone = nearby.entries_of(seg, keys, None)
        finally:
            nearby.ONE_BY_ONE = saved
        assert [c.tolist() for c in together] == [c.tolist() for c in alone]
        found = {seg.key(int(e)) for c in alone for e in c}
        assert found == {k for k in keys if seg.exact(k)}
        every |= found
    assert {b"reader", b"readers"} <= every


def _merged_slowly(sources, owners, check, budget):  # type: ignore[no-untyped-def]
    """`keys.merged_keys` as it was: a Python step per key, and a merge
    even of one source (the reference for the budget's spending)."""
    import heapq

    def walk(s_no, seg, chunks):  # type: ignore[no-untyped-def]
        blob = seg.cont_lower if owners else seg.lower
        offsets = seg.cont_off if owners else seg.lo_off
        for ids in chunks:
            for at in range(0, len(ids), 256):
                chunk = ids[at : at + 256]
                if check is not None and budget is not None:
                    if budget[0] <= 0:
                        return
                    budget[0] -= len(chunk)
                keys = slices(blob, offsets, chunk)
                passing = check.passing(keys) if check is not None else None
                sizes = seg.cont_lengths[chunk].tolist() if owners else list(map(len, keys))
                for i, (e, n) in enumerate(zip(chunk.tolist(), sizes, strict=True)):
                    if passing is None or passing[i]:
                        yield (n, keys[i], s_no, e)

    return heapq.merge(*(walk(s_no, seg, chunks) for s_no, seg, chunks in sources))


def _sources(segs: list[Segment], q: bytes, owners: bool) -> list[Any]:
    if owners:
        return [(n, seg, [seg.owners(q)]) for n, seg in enumerate(segs)]
    return [(n, seg, seg.subsequence(q)) for n, seg in enumerate(segs)]


@pytest.mark.parametrize("block", [1, 256, 1_024])
@pytest.mark.parametrize("seed", range(8))
def test_merged_keys_spend_the_budget_as_the_key_by_key_walk_did(seed: int, block: int) -> None:
    """Read the same number of keys from `merged_keys` and from the
    key-by-key reference: the same keys, and the same budget left (the
    next tier starts from it), with one segment or several."""
    rng = random.Random(seed)
    index = SymbolIndex("/ws")
    words = ["reader", "ring", "buf", "scan", "tx", "rx", "at", "pos"]
    for f in range(rng.choice([1, 3])):
        for g in range(300):
            rel = f"d{f}/m{g}.go"
            names = ["_".join(rng.sample(words, rng.randint(1, 3))) for _ in range(4)]
            rows = [sym(n, rel, Kind.METHOD, rng.choice(words), k) for k, n in enumerate(names)]
            index.replace_file(rel, rows)
    segs = index.segments
    checks: list[tuple[bytes, KeyCheck | None]] = [
        (b"r", Subsequence(b"r")),
        (b"rb", Subsequence(b"rb")),
        (b"ing", Substring(b"ing")),
        (b"x", None),
        (b"t", KeyCheck()),
    ]
    for q, check in checks:
        for owners in (False, True):
            for take in (0, 1, 100, 700, 10_000):
                for start in (300, 2_000, 100_000):
                    spent, reference = [start], [start]
                    key_walk.FIRST_BLOCK = block
                    key_walk.NUMPY_KEYS = block // 2
                    fast = merged_keys(_sources(segs, q, owners), owners, check, spent)
                    slow = _merged_slowly(_sources(segs, q, owners), owners, check, reference)
                    assert list(itertools.islice(fast, take)) == list(itertools.islice(slow, take))
                    assert spent == reference, (q, owners, take, start, len(segs))
    key_walk.FIRST_BLOCK = key_walk.NUMPY_KEYS = 1_024
