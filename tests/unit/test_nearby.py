"""The empty query's pool: the definitions of the files nearest the open file."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nearsym.core.model import file_path
from nearsym.core.proximity import directory_distance
from nearsym.index import nearby
from nearsym.index.store import SymbolIndex

from .helpers import sym

PARTS = st.sampled_from(["a", "b", "lib", "x"])
PATHS = st.builds(
    lambda folders, name: "/".join([*folders, name]),
    st.lists(PARTS, max_size=4),
    st.sampled_from(["m.py", "n.c", "a.go", "z"]),
)


def by_file(root: str, paths: list[str], open_file: str) -> list[str]:
    """The order the pool follows, measured file by file."""

    def key(path: str) -> tuple[int, int, str]:
        file = file_path(root, path)
        same = 0 if os.path.normpath(file) == os.path.normpath(open_file) else 1
        return (same, directory_distance(file, open_file), path)

    return sorted(paths, key=key)


def make_index(root: str, paths: list[str]) -> SymbolIndex:
    index = SymbolIndex(root)
    for path in paths:
        index.replace_file(path, [sym("defined", path, root=root)])
    return index


@settings(max_examples=200, deadline=None)
@given(
    st.sets(PATHS, min_size=1, max_size=40),
    st.sampled_from(["/w", "/w/a", "/", "/w/x/y"]),
    st.one_of(
        PATHS.map(lambda p: ("in", p)),
        st.sampled_from(["/elsewhere/f.c", "/w/f.c", "/f.c", "/w/a/b/q.py"]).map(
            lambda p: ("at", p)
        ),
    ),
)
def test_the_files_come_nearest_first_as_a_file_by_file_sort_orders_them(
    paths: set[str], root: str, opened: tuple[str, str]
) -> None:
    how, where = opened
    open_file = file_path(root, where) if how == "in" else where
    index = make_index(root, sorted(paths))
    want = by_file(root, sorted(paths), open_file)
    pool = nearby.nearest(index, open_file, len(paths))
    assert [s.path for s in pool] == want


def test_a_distance_is_measured_once_a_folder_not_once_a_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths = [f"f{i % 5}/sub/m{i}.py" for i in range(200)]
    index = make_index("/w", paths)
    measured: list[tuple[Sequence[str], Sequence[str]]] = []
    real = nearby.parts_distance

    def counting(a: Sequence[str], b: Sequence[str]) -> int:
        measured.append((a, b))
        return real(a, b)

    monkeypatch.setattr(nearby, "parts_distance", counting)
    pool = nearby.nearest(index, "/w/f3/sub/m3.py", 10)
    assert [s.path for s in pool][:1] == ["f3/sub/m3.py"]
    assert len(measured) <= 5 + 1  # the five folders, and the root against the open file


def test_a_file_added_or_removed_is_seen_by_the_next_empty_query() -> None:
    index = make_index("/w", ["a/one.py", "b/two.py"])
    open_file = "/w/a/one.py"
    assert [s.path for s in nearby.nearest(index, open_file, 10)] == ["a/one.py", "b/two.py"]
    index.replace_file("a/three.py", [sym("three", "a/three.py", root="/w")])
    assert [s.path for s in nearby.nearest(index, open_file, 10)] == [
        "a/one.py",
        "a/three.py",
        "b/two.py",
    ]
    index.remove_file("b/two.py")
    assert [s.path for s in nearby.nearest(index, open_file, 10)] == ["a/one.py", "a/three.py"]
    # Only the folders as they stand now are kept (each listing of the
    # kernel's is 1.9 MB).
    assert [generation for root, (generation, _) in nearby._cached.items() if root == "/w"] == [
        index.files_generation
    ]
