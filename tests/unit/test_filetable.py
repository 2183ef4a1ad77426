"""`FileTable`: ids by path and paths by id, across freezes."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nearsym.index import filetable
from nearsym.index.filetable import FREEZE_AT, FileTable


def test_ids_and_paths_survive_freezes() -> None:
    rng = random.Random(5)
    table = FileTable()
    paths: list[str] = []
    odd = ["a/\udcff.py", "b/é/ü.ts", "c d/ e", "\ud800lone", "x\n/y", "nul\0in/it"]
    for n in range(3 * FREEZE_AT + 17):
        path = odd[n] if n < len(odd) else f"d{rng.randint(0, 99)}/f{n}.py"
        assert table.id_of(path) == n
        paths.append(path)
        if n == 100:
            table.freeze()
    assert table.extend(["late/1.py", paths[7], "late/2.py"]) == [len(paths), 7, len(paths) + 1]
    paths += ["late/1.py", "late/2.py"]
    assert len(table) == len(paths)
    assert table.all() == paths
    for fid in rng.sample(range(len(paths)), 400) + list(range(len(odd))):
        assert table[fid] == paths[fid]
        assert table.get(paths[fid]) == fid
        assert table.id_of(paths[fid]) == fid
    assert table.many([3, 3, 0]) == [paths[3], paths[3], paths[0]]
    assert table.get("absent.py") is None
    assert len(table) == len(paths)


def test_paths_whose_hashes_collide_are_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filetable, "path_hash", lambda p: len(p) % 3)
    table = FileTable()
    many = [f"p{i}" for i in range(2_000)]
    assert table.extend(many) == list(range(2_000))
    table.id_of("q")
    assert table.extend([*many[::-1], "r"]) == [*range(1_999, -1, -1), 2_001]
    for i, p in enumerate(many):
        assert table.get(p) == i
    assert table.get("p2000") is None and table.get("q") == 2_000


def test_an_empty_table() -> None:
    table = FileTable()
    assert len(table) == 0 and table.all() == [] and table.get("a") is None
    table.freeze()
    assert table.id_of("a") == 0 and table.all() == ["a"]


def test_frozen_ids_read_as_the_blob_holds_them_in_the_order_asked() -> None:
    table = FileTable()
    paths = ["a/b.py", "c.py", "d\udce9/e.go", "f.ts"]
    ids = table.extend(paths)

    def stored(*at: int) -> bytes:
        return "".join(paths[i] + "\0" for i in at).encode("utf-8", "surrogatepass")

    assert table.paths_bytes(np.array(ids[1:3])) == stored(1, 2)  # one run
    assert table.paths_bytes(np.array([ids[0], ids[2], ids[3]])) == stored(0, 2, 3)
    assert table.paths_bytes(np.array([ids[2], ids[1], ids[3], ids[0]])) == stored(2, 1, 3, 0)
    assert table.paths_bytes(np.array([ids[1], ids[1]])) == stored(1, 1)
    assert table.paths_bytes(np.zeros(0, dtype=np.int64)) == b""
    recent = table.id_of("new.py")  # not frozen yet
    assert table.paths_bytes(np.array([ids[-1], recent])) is None
    assert table.paths_bytes(np.array([recent, ids[0]])) is None
    other = FileTable()
    held = other.extend(["a.py", "b\0c.py", "d.py"])  # a NUL from a client's URI
    assert other.paths_bytes(np.array(held)) is None
    assert other.paths_bytes(np.array([held[2], held[0]])) == b"d.py\0a.py\0"


@given(st.lists(st.integers(0, 9), max_size=30))
def test_paths_bytes_are_the_paths_encoded(picks: list[int]) -> None:
    table = FileTable()
    ids = table.extend([f"dir{i}/f\u00e9{i}.py" for i in range(10)])
    fids = np.array([ids[p] for p in picks], dtype=np.int64)
    want = "".join(p + "\0" for p in table.many(fids)).encode("utf-8", "surrogatepass")
    assert table.paths_bytes(fids) == want
