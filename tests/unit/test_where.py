"""Where-parts and modifiers: the matching (core.where) and retrieval over a
real index (index.where)."""

from __future__ import annotations

import pytest

from nearsym.core.model import Kind
from nearsym.core.query import Query
from nearsym.core.rank import explain
from nearsym.core.where import PARTLY_CAP, WHERE_CAP, evidence, located, places
from nearsym.index.namespace import Namespace
from nearsym.index.search import search
from nearsym.index.store import SymbolIndex

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


def test_modifiers_filter_the_pool_as_it_fills() -> None:
    index = SymbolIndex("/ws")
    names = [f"Client{i}" for i in range(600)] + ["AsyncClient", "BaseClient"]
    for i, name in enumerate(names):
        index.replace_file(f"m{i}.py", [sym(name, f"m{i}.py", Kind.CLASS)])
    # 600 names start with `Client`: the suffix filter still finds the two
    got = {s.name for s in search([Namespace("/ws", index)], "Client$", 10)}
    assert got == {"AsyncClient", "BaseClient"}
