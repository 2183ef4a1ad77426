"""Where-parts, inherited members and modifiers: the matching (core.where),
the base classes read from source (extract.bases), and retrieval over a
real index (index.where)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nearsym.core.model import Kind, Span, Symbol
from nearsym.core.query import Query
from nearsym.core.rank import explain
from nearsym.core.where import PARTLY_CAP, WHERE_CAP, evidence, located, places
from nearsym.extract.bases import class_bases
from nearsym.extract.languages import language_for_path
from nearsym.index import where as where_index
from nearsym.index.namespace import Namespace
from nearsym.index.retrieval import _Retrieval
from nearsym.index.search import search
from nearsym.index.store import SymbolIndex
from nearsym.index.where import CLASSES_PER_NAME, BaseCache, PlaceStarts, resolve
from nearsym.workspace.config import Config
from nearsym.workspace.live import LiveWorkspace

from .helpers import rerank, sym


def test_places_are_folders_file_name_then_container_chain() -> None:
    assert places("src/flask/sansio/app.py", "App") == (
        "src",
        "flask",
        "sansio",
        "app",
        "py",
        "app",
    )
    assert places("main.go", "") == ("main", "go")
    assert places("src/internal/Subject.ts", "Outer.Inner") == (
        "src",
        "internal",
        "subject",
        "ts",
        "outer",
        "inner",
    )


@pytest.mark.parametrize(
    ("where", "path", "container", "found"),
    [
        (("flask",), "src/flask/app.py", "", 1),
        (("click", "core"), "src/click/core.py", "", 2),
        (("core", "click"), "src/click/core.py", "", 1),  # in order
        (("sansio", "app"), "src/flask/app.py", "", 1),
        (("sphinx", "app"), "sphinx/application.py", "", 2),  # a place it starts
        (("python",), "sphinx/domains/python/__init__.py", "", 1),
        (("app",), "src/flask/sansio/scaffold.py", "App", 1),  # the container
        (("lication",), "sphinx/application.py", "", 0),  # not inside a place
        (("flask",), "tests/test_app.py", "", 0),
    ],
)  # fmt: skip
def test_where_parts_start_places_in_order(
    where: tuple[str, ...], path: str, container: str, found: int
) -> None:
    assert located(where, path, container) == found


def test_a_located_definition_answers_a_query_its_name_alone_does_not() -> None:
    admits = evidence(Query.parse("click.core.Command"))
    assert admits(sym("Command", "src/click/core.py", Kind.CLASS))
    assert not admits(sym("Command", "tests/test_commands.py", Kind.CLASS))
    assert not admits(sym("Group", "src/click/core.py", Kind.CLASS))
    # and a modifier still refuses what it refuses
    types_only = evidence(Query.parse("#click.core.Command"))
    assert not types_only(sym("command", "src/click/core.py", Kind.FUNCTION))


def test_located_definitions_rank_after_the_whole_texts_readings() -> None:
    # `search document`: the text as typed (`search_document`) before a
    # `document` that `search.py` holds.
    pool = [sym("document", "pkg/search.py"), sym("search_document", "pkg/other.py")]
    assert [s.name for s in rerank("search document", pool, 2)] == ["search_document", "document"]


def test_all_parts_located_before_some_then_by_name_part() -> None:
    pool = [
        sym("Flask", "src/flask/app.py", Kind.CLASS),  # `app` only
        sym("FlaskThing", "src/flask/sansio/app.py", Kind.CLASS),  # both
        sym("Flask", "tests/flask.py", Kind.CLASS),  # neither
    ]
    got = [s.path for s in rerank("sansio/app Flask", pool, 3)]
    assert got == ["src/flask/sansio/app.py", "src/flask/app.py", "tests/flask.py"]
    assert not evidence(Query.parse("sansio/app Flask"))(pool[2])
    assert WHERE_CAP > PARTLY_CAP


def test_path_evidence_orders_equally_named_located_definitions() -> None:
    pool = [
        sym("Command", "src/click/types.py", Kind.CLASS),  # `click` only
        sym("Command", "src/click/core.py", Kind.CLASS),
    ]
    assert rerank("click.core.Command", pool, 2)[0].path == "src/click/core.py"


def test_explain_names_the_where_reading() -> None:
    text = explain(Query.parse("flask.Flask"), sym("Flask", "src/flask/app.py", Kind.CLASS))
    assert "where: 1 of flask" in text


def test_class_bases_read_from_source() -> None:
    python = b"class Flask(App, mod.Base, metaclass=M):\n    class Inner(Flask): pass\nf(a=1)\n"
    assert class_bases(python, _spec("a.py")) == {
        (0, "Flask"): ("App", "Base"),
        (1, "Inner"): ("Flask",),
    }
    ts = b"class A<T> extends B<T> implements C, D {}\ninterface I extends J {}\n"
    assert class_bases(ts, _spec("a.ts")) == {(0, "A"): ("B", "C", "D"), (1, "I"): ("J",)}
    assert class_bases(b"class A extends B implements C {}\n", _spec("A.java")) == {
        (0, "A"): ("B", "C")
    }
    assert class_bases(b"class A extends mod.B {}\n", _spec("a.js")) == {(0, "A"): ("B",)}
    assert class_bases(b"class Broken(:\n", _spec("a.py")) == {}


def _spec(path: str):  # type: ignore[no-untyped-def]
    spec = language_for_path(path)
    assert spec is not None
    return spec


def _flask_like(tmp_path: Path) -> SymbolIndex:
    files = {
        "src/flask/app.py": "class Flask(App):\n    def raise_routing_exception(self): pass\n",
        "src/flask/sansio/app.py": "class App(Scaffold):\n    pass\n",
        "src/flask/sansio/scaffold.py": "class Scaffold:\n    def route(self): pass\n",
        "lib/other.py": "class Other:\n    def route(self): pass\n",
    }
    defs = {
        "src/flask/app.py": [
            _at("Flask", Kind.CLASS, "", 0),
            _at("raise_routing_exception", Kind.METHOD, "Flask", 1),
        ],
        "src/flask/sansio/app.py": [_at("App", Kind.CLASS, "", 0)],
        "src/flask/sansio/scaffold.py": [
            _at("Scaffold", Kind.CLASS, "", 0),
            _at("route", Kind.METHOD, "Scaffold", 1),
        ],
        "lib/other.py": [_at("Other", Kind.CLASS, "", 0), _at("route", Kind.METHOD, "Other", 1)],
    }
    index = SymbolIndex(str(tmp_path))
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
        index.replace_file(rel, [_with(s, str(tmp_path), rel) for s in defs[rel]])
    return index


def _at(name: str, kind: Kind, container: str, line: int) -> Symbol:
    return Symbol(name, kind, container, "", "", Span(line, 0, line, len(name)), "python")


def _with(s: Symbol, root: str, path: str) -> Symbol:
    return Symbol(s.name, s.kind, s.container, root, path, s.span, s.language)


def test_an_owner_reaches_the_members_of_its_base_classes(tmp_path: Path) -> None:
    index = _flask_like(tmp_path)
    cache = BaseCache()
    assert resolve(Query.parse("Flask.route"), [index], cache=cache).inherited == {
        "app",
        "scaffold",
    }
    assert resolve(Query.parse("route"), [index], cache=cache).inherited == frozenset()
    got = search([Namespace(str(tmp_path), index)], "Flask.route", 5)
    assert [s.qualified_name for s in got][:2] == [
        "Scaffold.route",
        "Flask.raise_routing_exception",
    ]
    # `Other` is no base of Flask's: its `route` is not an answer
    assert "Other.route" not in [s.qualified_name for s in got]


def test_bases_are_reread_when_a_file_changes(tmp_path: Path) -> None:
    index = _flask_like(tmp_path)
    cache = BaseCache()
    assert resolve(Query.parse("App.route"), [index], cache=cache).inherited == {"scaffold"}
    (tmp_path / "src/flask/sansio/app.py").write_text("class App(Other):\n    pass\n# longer\n")
    assert resolve(Query.parse("App.route"), [index], cache=cache).inherited == {"other"}
    (tmp_path / "src/flask/sansio/app.py").unlink()
    assert resolve(Query.parse("App.route"), [index], cache=cache).inherited == frozenset()


def test_of_many_same_named_classes_those_nearest_the_open_file_are_read(
    tmp_path: Path,
) -> None:
    # Twelve packages each define a `reader` class with its own base; only
    # `CLASSES_PER_NAME` of them are read, nearest the open file first.
    index = SymbolIndex(str(tmp_path))
    for n in range(12):
        rel = f"pkg{n:02}/reader.py"
        (tmp_path / rel).parent.mkdir()
        (tmp_path / rel).write_text(f"class reader(Base{n:02}):\n    pass\n")
        index.replace_file(rel, [_with(_at("reader", Kind.CLASS, "", 0), str(tmp_path), rel)])
    cache = BaseCache()
    near = resolve(Query.parse("reader.pos"), [index], str(tmp_path / "pkg11/x.py"), cache=cache)
    assert "base11" in near.inherited
    assert len(near.inherited) == CLASSES_PER_NAME
    by_path = resolve(Query.parse("reader.pos"), [index], cache=cache)
    assert by_path.inherited == {f"base{n:02}" for n in range(CLASSES_PER_NAME)}


def test_modifiers_filter_the_pool_as_it_fills(tmp_path: Path) -> None:
    index = SymbolIndex("/ws")
    names = [f"Client{i}" for i in range(600)] + ["AsyncClient", "BaseClient"]
    for i, name in enumerate(names):
        index.replace_file(f"m{i}.py", [sym(name, f"m{i}.py", Kind.CLASS)])
    # 600 names start with `Client`: the suffix filter still finds the two
    got = {s.name for s in search([Namespace("/ws", index)], "Client$", 10)}
    assert got == {"AsyncClient", "BaseClient"}


def test_narrowing_by_place_refuses_only_rows_located_refuses() -> None:
    """The located fillings drop rows before building them when no
    where-part starts a place of their file or container (`PlaceStarts`);
    the pool is the same as testing every built row."""
    index = SymbolIndex("/ws")
    folders = ["reader", "src/readers", "io", "net/http", "bufio"]
    owners = ["", "Reader", "Scanner", "reader.Inner", "Writer"]
    files: dict[str, list[Symbol]] = {}
    for i in range(400):
        path = f"{folders[i % 5]}/f{i % 37}.go"
        owner = owners[(i // 5) % 5]
        rows = files.setdefault(path, [])
        for name in [f"pos{i % 11}B", f"posBase{i % 7}", f"pBs{i}", "posb"]:
            rows.append(sym(name, path, Kind.METHOD, owner, len(rows), "/ws"))
    for path, rows in files.items():
        index.replace_file(path, rows)
    retrieval = _Retrieval(index)
    for where in [("reader",), ("reader", "inner"), ("io",), ("src", "reader"), ("http",)]:
        for every in (True, False):

            def test(s: Symbol, where: tuple[str, ...] = where, every: bool = every) -> bool:
                n = located(where, s.path, s.container)
                return n == len(where) if every else 0 < n < len(where)

            for width in (5, 50, 500):
                plain = retrieval.filling("posb", width, test)
                narrowed = retrieval.filling("posb", width, test, PlaceStarts(where, every))
                assert narrowed == plain, (where, every, width)
                assert every is False or len(where) > 1 or plain  # the test finds rows


_WORDS = ["reader", "scanner", "token", "pos", "type", "state", "read", "scan", "buf", "at"]


def _camel(words: list[str]) -> str:
    return words[0] + "".join(w.title() for w in words[1:])


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    owner=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=2),
    name=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=2),
    cut=st.integers(1, 6),
    shape=st.sampled_from(["{o}.{n}", "{o} {n}", "{o}/{n}", "{f}.{o}.{n}", "{f} {n}"]),
)
def test_retrieval_on_the_subset_of_entries_equals_retrieval_on_all(
    seed: int, owner: list[str], name: list[str], cut: int, shape: str
) -> None:
    """The entries a query's owners or places allow (`index.subset`) are an
    economy only: on a tree where no budget binds, the answer is the one
    retrieval over every entry gives."""
    rng = random.Random(seed)
    index = SymbolIndex("/ws")
    for f in range(40):
        folder = rng.choice(_WORDS)
        rel = f"{folder}/{rng.choice(_WORDS)}{f}.go"
        defs = []
        for line in range(12):
            container = _camel(rng.sample(_WORDS, rng.randint(1, 2))) if line % 3 else ""
            kind = Kind.METHOD if container else Kind.STRUCT
            defs.append(
                sym(
                    _camel(rng.sample(_WORDS, rng.randint(1, 3))), rel, kind, container, line, "/ws"
                )
            )
        index.replace_file(rel, defs)
    text = shape.format(o=_camel(owner), n=_camel(name)[:cut], f=rng.choice(_WORDS))
    query = resolve(Query.parse(text), [index])

    def pool() -> list[tuple[str, int, str]]:
        return [(s.path, s.span.line, s.name) for s in index.candidates(query, 50)]

    got = pool()
    saved = where_index.MASKED_ROWS
    where_index.MASKED_ROWS = -1  # no subset is ever small enough
    try:
        whole = pool()
    finally:
        where_index.MASKED_ROWS = saved
    assert got == whole, text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(max_codepoint=127, exclude_characters="\0"), min_size=1)))
def test_the_paths_blob_made_from_the_file_table_is_the_one_made_from_strings(
    paths: list[str],
) -> None:
    stored = "".join(p + "\0" for p in paths).encode()
    from_strings = where_index.paths_blob(lambda: paths)
    from_stored = where_index.paths_blob(lambda: [], stored)
    # The same keys, but where a path holds a line break: `splitlines`
    # also splits at other control characters and drops a last newline
    # (either way, what the row filter passes is kept); no newline ever
    # survives inside a key.
    if not any(c in p for p in paths for c in "\n\r\x0b\x0c\x1c\x1d\x1e"):
        assert from_stored == from_strings
    assert from_stored.count(b"\n") == len(paths) + 1


def test_a_path_query_answers_in_a_folder_with_an_undecodable_file_name(
    tmp_path: Path,
) -> None:
    """A file name that is not UTF-8 (a lone surrogate in Python) made a
    query with a `/` or a `.` fail: the paths were encoded strictly."""
    folder = os.fsencode(tmp_path) + b"/pk\xe9"
    os.mkdir(folder)
    with open(folder + b"/m\xff.py", "w") as f:
        f.write("def foo_bar():\n    pass\n")
    (tmp_path / "ok.py").write_text("def foo():\n    pass\n")
    live = LiveWorkspace(Config())
    ns = live.add_root(str(tmp_path))
    live.index_all(ns)
    for query in ("pk/foo", "m.foo", "pk\udce9/foo"):
        assert [s.name for s in search([ns], query, 10)][:1] == ["foo_bar"], query


def test_paths_stored_with_other_than_ascii_are_joined_from_the_strings() -> None:
    paths = ["Café/M.py", "x\udce9/y.go"]
    stored = "".join(p + "\0" for p in paths).encode("utf-8", "surrogatepass")
    want = "\ncafé/m.py\nx\udce9/y.go\n".encode("utf-8", "surrogatepass")
    assert where_index.paths_blob(lambda: paths, stored) == want
    assert where_index.paths_blob(lambda: paths) == want


def test_qualified_and_non_ascii_queries_leave_numpy_ma_unimported(tmp_path: Path) -> None:
    # `np.unique` and `np.union1d` import `numpy.ma` at their first call:
    # the first qualified query after a start paid 8 ms (and the server
    # 1.3 MB) for it.
    for n in range(12):
        folder = tmp_path / f"pkg{n}"
        folder.mkdir()
        (folder / "server.py").write_text(
            "class Handler:\n    def serve(self): pass\n    def stat(self): pass\n"
            f"class Größe{n}:\n    def maß(self): pass\n"
            f"def handler_{n}(): pass\n",
            encoding="utf-8",
        )
    code = (
        "import sys\n"
        "from nearsym.index.namespace import Namespace\n"
        "from nearsym.index.search import answer\n"
        "from nearsym.index.store import SymbolIndex\n"
        "from nearsym.workspace.config import Config\n"
        "from nearsym.workspace.indexer import index_into\n"
        f"root = {str(tmp_path)!r}\n"
        "index = SymbolIndex(root)\n"
        "index_into(index, Config())\n"
        "spaces = [Namespace(root, index)]\n"
        "for q in ['Handler.serve', 'handler.st', 'pkg3.Handler', 'pkg3/server serve',\n"
        "          'server.Handler.stat', 'Größe', 'größe3.maß', 'hand']:\n"
        "    assert answer(spaces, q, 20), q\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
