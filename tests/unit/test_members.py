"""The open file's classes and their bases, and the packages' re-exports:
read from a real index of files on disk, and the rank rules that use them."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Collection
from pathlib import Path

import pytest

from nearsym.core.model import Kind, Symbol
from nearsym.core.rank import RankPolicy
from nearsym.extract.bases import class_bases
from nearsym.extract.languages import language_for_path
from nearsym.index.namespace import Namespace
from nearsym.index.search import answer
from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config
from nearsym.workspace.indexer import index_into
from nearsym.workspace.members import (
    OpenText,
    WorkspaceContext,
    identifiers_in,
    receiver_key,
    receivers_in,
)

FLASKISH = {
    "pkg/__init__.py": "from .app import Flask\nfrom .sub import helper\n",
    "pkg/app.py": "from .scaffold import Scaffold\n\nclass Flask(Scaffold):\n    def run(self): pass\n",
    "pkg/scaffold.py": "class Scaffold(Root):\n    def route(self): pass\n",
    "pkg/root.py": "class Root:\n    def finalize(self): pass\n",
    "pkg/sub/__init__.py": "from .impl import helper\n",
    "pkg/sub/impl.py": "def helper(): pass\n",
    "other/blue.py": "class Blueprint:\n    def route(self): pass\n    def finalize(self): pass\n",
    "other/web.py": "class Flask:\n    def run(self): pass\n",
    "tests/test_app.py": "from pkg import Flask\n\nclass Case:\n    def check(self): pass\n",
}


def workspace(tmp_path: Path, files: dict[str, str]) -> list[Namespace]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    index = SymbolIndex(str(tmp_path))
    index_into(index, Config())
    return [Namespace(str(tmp_path), index)]


def relative(tmp_path: Path, pairs: frozenset[tuple[str, str]]) -> set[tuple[str, str]]:
    return {(str(Path(p).relative_to(tmp_path)), n) for p, n in pairs}


ALL = RankPolicy(members=True, exported=True)


def test_classes_defined_imported_and_their_bases(tmp_path: Path) -> None:
    ns = workspace(tmp_path, FLASKISH)
    hints = WorkspaceContext().hints(str(tmp_path / "tests/test_app.py"), ns, ALL)
    assert relative(tmp_path, hints.members) == {
        ("tests/test_app.py", "Case"),  # defined here
        ("pkg/app.py", "Flask"),  # imported, through the package's __init__
        ("pkg/scaffold.py", "Scaffold"),  # its base, through app.py's import
        ("pkg/root.py", "Root"),  # the base's base: the only class named Root
    }


def test_each_file_is_read_once_a_computation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module imported under many names is searched for each, and its
    classes' bases are looked up there too: its rows are built once (they
    were built for every name, every base: Twisted's `internet/tcp.py`
    spent 25 of 38 ms of its hints on it after each edit)."""
    files = {
        "lib/shapes.py": "".join(f"class Shape{i}(Base):\n    pass\n" for i in range(8))
        + "class Base:\n    pass\n",
        "app.py": "from lib.shapes import " + ", ".join(f"Shape{i}" for i in range(8)) + "\n",
    }
    ns = workspace(tmp_path, files)
    index = ns[0].index
    reads: list[str] = []
    symbols_of = index.symbols_of

    def counted(path: str, kinds: Collection[Kind] | None = None) -> tuple[Symbol, ...]:
        reads.append(path)
        return symbols_of(path, kinds)

    monkeypatch.setattr(index, "symbols_of", counted)
    hints = WorkspaceContext().hints(str(tmp_path / "app.py"), ns, ALL)
    assert ("lib/shapes.py", "Base") in relative(tmp_path, hints.members)
    assert ("lib/shapes.py", "Shape7") in relative(tmp_path, hints.members)
    assert sorted(reads) == ["app.py", "lib/shapes.py"]


def test_an_ambiguous_base_name_that_is_not_imported_resolves_to_nothing(
    tmp_path: Path,
) -> None:
    files = {**FLASKISH, "other/root.py": "class Root:\n    pass\n"}
    ns = workspace(tmp_path, files)
    hints = WorkspaceContext().hints(str(tmp_path / "tests/test_app.py"), ns, ALL)
    assert ("pkg/root.py", "Root") not in relative(tmp_path, hints.members)
    assert ("pkg/scaffold.py", "Scaffold") in relative(tmp_path, hints.members)


def test_a_member_of_a_base_class_comes_first(tmp_path: Path) -> None:
    ns = workspace(tmp_path, FLASKISH)
    open_file = str(tmp_path / "tests/test_app.py")
    hints = WorkspaceContext().hints(open_file, ns, ALL)
    on = answer(ns, "route", 2, open_file, ALL, hints=hints)
    off = answer(ns, "route", 2, open_file, RankPolicy(members=False), hints=hints)
    assert [s.qualified_name for s in on] == ["Scaffold.route", "Blueprint.route"]
    assert [s.qualified_name for s in off] == ["Blueprint.route", "Scaffold.route"]


def test_typescript_imports_and_implements(tmp_path: Path) -> None:
    files = {
        "src/Observable.ts": (
            "import { Subscribable } from './types';\n"
            "export class Observable<T> implements Subscribable<T> {\n"
            "  pipe(): void {}\n}\n"
        ),
        "src/types.ts": "export interface Subscribable<T> {\n  subscribe(): void;\n}\n",
        "src/app.ts": "import { Observable } from './Observable';\nconst o = new Observable();\n",
        "src/index.ts": "export { Observable } from './Observable';\nexport * from './types';\n",
    }
    ns = workspace(tmp_path, files)
    hints = WorkspaceContext().hints(str(tmp_path / "src/app.ts"), ns, ALL)
    assert relative(tmp_path, hints.members) == {
        ("src/Observable.ts", "Observable"),
        ("src/types.ts", "Subscribable"),
    }
    assert relative(tmp_path, hints.exported) == {
        ("src/Observable.ts", "Observable"),
        ("src/types.ts", "*"),
    }


def test_reexports_are_followed_through_subpackages(tmp_path: Path) -> None:
    ns = workspace(tmp_path, FLASKISH)
    hints = WorkspaceContext().hints(None, ns, ALL)
    assert hints.members == frozenset()
    assert relative(tmp_path, hints.exported) == {
        ("pkg/app.py", "Flask"),
        ("pkg/sub/impl.py", "helper"),
    }


def test_reexports_follow_index_files_added_and_saved_but_not_other_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index files are listed again when a file enters or leaves the
    index, and one saved is read again; an edit elsewhere reads neither
    the list nor the files again."""
    ns = workspace(tmp_path, FLASKISH)
    index = ns[0].index
    context = WorkspaceContext()
    listed: list[int] = []
    files = type(index).files

    def counted(self: SymbolIndex) -> list[str]:
        listed.append(1)
        return files.fget(self)  # type: ignore[no-any-return]

    monkeypatch.setattr(type(index), "files", property(counted))
    exported = lambda: relative(tmp_path, context.hints(None, ns, ALL).exported)  # noqa: E731
    assert ("pkg/app.py", "Flask") in exported()
    reads = len(listed)
    index.replace_file("pkg/app.py", [*index.symbols_of("pkg/app.py")])  # an edit
    assert ("pkg/app.py", "Flask") in exported()
    assert len(listed) == reads  # neither the index files nor the layout listed again
    (tmp_path / "other/__init__.py").write_text("from .blue import Blueprint\n")
    index_into(index, Config())  # other/__init__.py enters the index
    assert ("other/blue.py", "Blueprint") in exported()
    init = tmp_path / "pkg/__init__.py"
    init.write_text("from .app import Flask\nfrom .scaffold import Scaffold\n")
    os.utime(init, ns=(2_000_000_000, 2_000_000_000))  # saved: a new modification time
    index.replace_file("pkg/__init__.py", [])
    assert ("pkg/scaffold.py", "Scaffold") in exported()


def test_a_reexported_name_wins_a_name_tie(tmp_path: Path) -> None:
    ns = workspace(tmp_path, FLASKISH)
    open_file = str(tmp_path / "other/blue.py")  # next to other/web.py, whose Flask is not exported
    hints = WorkspaceContext().hints(open_file, ns, ALL)
    policy = RankPolicy(exported=True, imports=False)
    on = answer(ns, "Flask", 2, open_file, policy, hints=hints)
    off = answer(ns, "Flask", 2, open_file, RankPolicy(imports=False), hints=hints)
    assert [s.path for s in on] == ["pkg/app.py", "other/web.py"]
    assert [s.path for s in off] == ["other/web.py", "pkg/app.py"]


def test_unused_hints_are_not_read(tmp_path: Path) -> None:
    ns = workspace(tmp_path, FLASKISH)
    off = RankPolicy(members=False, exported=False)
    hints = WorkspaceContext().hints(str(tmp_path / "tests/test_app.py"), ns, off)
    assert hints.members == hints.exported == frozenset()


HERITAGE = {
    "a.py": (
        b"class A(B, a.b.C, Generic[T], metaclass=M):\n  class In(A): pass\nclass Z: pass\n",
        {(0, "A"): ("B", "C", "Generic"), (1, "In"): ("A",)},
    ),
    "a.ts": (
        b"class A extends B implements I, ns.J<T> {}\ninterface K extends L, M<X> {}\n"
        b"export abstract class Q extends R {}\n",
        {(0, "A"): ("B", "I", "J"), (1, "K"): ("L", "M"), (2, "Q"): ("R",)},
    ),
    "a.js": (
        b"class A extends B {}\nclass C extends mix(D) {}\n",
        {(0, "A"): ("B",), (1, "C"): ()},
    ),
    "a.java": (
        b"class A extends B implements I, J {}\ninterface K extends L {}\n",
        {(0, "A"): ("B", "I", "J"), (1, "K"): ("L",)},
    ),
    "a.go": (
        b"package p\ntype S struct {\n  Base\n  *io.Reader\n  x int\n}\n",
        {(1, "S"): ("Base", "Reader")},
    ),
    "a.cpp": (b"class A : public B, private ns::C {};\n", {(0, "A"): ("B", "C")}),
    "a.cs": (b"class A : B, I {}\n", {(0, "A"): ("B", "I")}),
    "a.kt": (
        b"class A : B(), I, ns.J<T> {}\ninterface K : L\nobject O : P(x)\n",
        {(0, "A"): ("B", "I", "J"), (1, "K"): ("L",), (2, "O"): ("P",)},
    ),
    "a.swift": (
        b"class A: B, P {}\nprotocol R: T {}\nextension U: V {}\n",
        {(0, "A"): ("B", "P"), (1, "R"): ("T",), (2, "U"): ("V",)},
    ),
    "a.rb": (b"class A < B\nend\n", {}),
}


@pytest.mark.parametrize("name", sorted(HERITAGE))
def test_class_bases_per_language(name: str) -> None:
    spec = language_for_path(name)
    assert spec is not None
    source, bases = HERITAGE[name]
    assert class_bases(source, spec) == bases


def test_rust_pub_use_in_lib_and_mod_files(tmp_path: Path) -> None:
    files = {
        "src/lib.rs": "pub use self::store::Store;\npub use util::*;\nuse std::io;\nmod store;\n",
        "src/store.rs": "pub struct Store {}\npub struct Hidden {}\n",
        "src/util/mod.rs": "pub use self::helpers::{helper, Other as Renamed};\n"
        "pub(crate) use crate::store::Hidden;\n",
        "src/util/helpers.rs": "pub fn helper() {}\npub struct Other;\n",
    }
    ns = workspace(tmp_path, files)
    hints = WorkspaceContext().hints(None, ns, ALL)
    assert relative(tmp_path, hints.exported) == {
        ("src/store.rs", "Store"),
        ("src/store.rs", "Hidden"),
        ("src/util/helpers.rs", "helper"),
        ("src/util/helpers.rs", "Other"),
    }


@pytest.mark.parametrize(
    ("source", "pair"),
    [
        (b"self.headers.update(x)", ("update", "headers")),
        (b"this.#queryCache.build(client)", ("build", "querycache")),
        (b"await _async_client.get(url)", ("get", "asyncclient")),
        (b"node?.parent", ("parent", "node")),
        (b"Vec::new()", ("new", "vec")),
        (b"obj->field", ("field", "obj")),
        (b"a.b.c", ("c", "b")),
    ],
)
def test_receivers_are_read_from_the_text(source: bytes, pair: tuple[str, str]) -> None:
    assert pair in receivers_in(source)


def test_a_receiver_is_a_whole_identifier_not_the_tail_of_a_number_or_escape() -> None:
    # From Go's tests and url.go: "%2Fexample.com", 0x1.EP, 0x01.e_0p.
    source = b'u := "http://%2Fexample.com"; f := 0x1.EP; g := 0x01.e_0p; a.b'
    assert receivers_in(source) == frozenset({("b", "a")})


def test_a_buffer_typed_into_keeps_only_its_last_text() -> None:
    # Each keystroke's text used to stay cached, up to 256 of them: a 1 MB
    # buffer typed into could hold 256 MB.
    texts = OpenText()
    tracemalloc.start()
    try:
        for n in range(300):
            source = b"client.get(url)\n" * 1_250 + b"# %d\n" % n  # 20 KB, a new text
            assert ("get", "client") in texts.receivers("/w/app.py", source)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # a text or two and their readings, not 256 texts (5 MB)


def test_self_and_this_are_no_receivers() -> None:
    assert receivers_in(b"self.run(); this.stop(); super().close()") == frozenset()
    assert receiver_key("_Query_Cache") == receiver_key("#queryCache") == "querycache"


RECEIVING = {
    "lib/models.py": "class Request:\n    def read(self): pass\n\n"
    "class Response:\n    def read(self): pass\n",
    "lib/client.py": "class Client:\n    def get(self): pass\n\n"
    "class AsyncClient:\n    def get(self): pass\n",
    "app/use.py": "def main(response, client):\n    response.read()\n    client.get()\n",
}


def test_a_member_reached_through_a_variable_named_as_its_class_comes_first(
    tmp_path: Path,
) -> None:
    ns = workspace(tmp_path, RECEIVING)
    open_file = str(tmp_path / "app/use.py")
    hints = WorkspaceContext().hints(open_file, ns, RankPolicy())
    assert {("read", "response"), ("get", "client")} <= hints.receivers
    on = answer(ns, "read", 2, open_file, RankPolicy(), hints=hints)
    assert [s.qualified_name for s in on] == ["Response.read", "Request.read"]
    off = answer(ns, "read", 2, open_file, RankPolicy(receivers=False), hints=hints)
    assert [s.qualified_name for s in off] == ["Request.read", "Response.read"]
    # The whole class name before its last words.
    got = answer(ns, "get", 2, open_file, RankPolicy(), hints=hints)
    assert [s.qualified_name for s in got] == ["Client.get", "AsyncClient.get"]
    assert hints.receiver_grade("get", "AsyncClient") == 1


def test_unsaved_text_is_read_for_receivers(tmp_path: Path) -> None:
    ns = workspace(tmp_path, RECEIVING)
    open_file = str(tmp_path / "app/use.py")
    hints = WorkspaceContext().hints(open_file, ns, RankPolicy(), b"request.read()\n")
    assert hints.receivers == frozenset({("read", "request")})


def test_a_name_the_open_file_mentions_wins_a_name_tie(tmp_path: Path) -> None:
    files = {
        "lib/app.py": "def add_task(): pass\n\ndef add_object_type(): pass\n",
        "app/use.py": "from lib.app import add_object_type\n\nadd_object_type()\n",
        # add_task is the name more files mention (4 against 2)
        **{f"lib/t{i}.py": "from lib.app import add_task\nadd_task()\n" for i in range(3)},
    }
    ns = workspace(tmp_path, files)
    open_file = str(tmp_path / "app/use.py")
    hints = WorkspaceContext().hints(open_file, ns, RankPolicy())
    assert {"add_object_type", "lib", "app"} <= hints.mentioned
    assert "add_task" not in hints.mentioned
    on = answer(ns, "add", 2, open_file, RankPolicy(), hints=hints)
    assert [s.name for s in on] == ["add_object_type", "add_task"]
    off = answer(ns, "add", 2, open_file, RankPolicy(open_mentions=False), hints=hints)
    assert [s.name for s in off] == ["add_task", "add_object_type"]


def test_identifiers_of_a_text() -> None:
    assert identifiers_in(b"x = foo_bar($el, _p1) # 2nd") == {"x", "foo_bar", "$el", "_p1", "nd"}
