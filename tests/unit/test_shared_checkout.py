"""Which published repositories the open workspace already holds
(`nearsym.lsp.shared.local_checkout`): those answer from the live index;
a checkout the workspace holds but does not index opens shared rows."""

from __future__ import annotations

from pathlib import Path

from nearsym.core.model import Kind, Span, Symbol
from nearsym.index.namespace import Namespace
from nearsym.index.shared_query import Repository
from nearsym.index.store import SymbolIndex
from nearsym.lsp.shared import local_checkout


def namespace(root: Path, files: tuple[str, ...] = ()) -> Namespace:
    index = SymbolIndex(str(root))
    for rel in files:
        index.replace_file(
            rel, [Symbol("f", Kind.FUNCTION, "", str(root), rel, Span(0, 4, 0, 5), "python")]
        )
    return Namespace(str(root), index)


def repo(name: str, root_path: str) -> Repository:
    return Repository(1, name, root_path, None)


def test_a_folder_that_is_the_checkout_answers_live(tmp_path: Path) -> None:
    folder = tmp_path / "toolkit"
    folder.mkdir()
    found = local_checkout(repo("toolkit", "/ci/builds/toolkit"), [namespace(folder)])
    assert found == (str(folder), True)
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    assert local_checkout(repo("other", str(elsewhere)), [namespace(elsewhere)])[1]


def test_an_indexed_checkout_inside_a_folder_answers_live(tmp_path: Path) -> None:
    (tmp_path / "toolkit").mkdir()
    ns = namespace(tmp_path, ("toolkit/a.py",))
    assert local_checkout(repo("toolkit", "/ci/toolkit"), [ns]) == (str(tmp_path / "toolkit"), True)


def test_an_ignored_checkout_inside_a_folder_opens_the_shared_rows(tmp_path: Path) -> None:
    (tmp_path / "toolkit").mkdir()
    ns = namespace(tmp_path, ("app.py",))
    assert local_checkout(repo("toolkit", "/ci/toolkit"), [ns]) == (
        str(tmp_path / "toolkit"),
        False,
    )


def test_a_repository_not_checked_out_keeps_its_recorded_path(tmp_path: Path) -> None:
    ns = namespace(tmp_path, ("app.py",))
    assert local_checkout(repo("toolkit", "/ci/toolkit"), [ns]) == (None, False)
