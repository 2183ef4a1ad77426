"""The query parsed once: one case per line."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nearsym.core.model import Kind
from nearsym.core.query import Query


@pytest.mark.parametrize(
    ("text", "compact", "words", "qualified", "target", "owner", "member"),
    [
        ("register", "register", ("register",), False, "", "", ""),
        ("search document", "searchdocument", ("search", "document"), False, "", "", ""),
        ("getUserId", "getUserId", ("get", "User", "Id"), False, "", "", ""),
        ("App.register", "App.register", ("App", "register"), True, "App.register", "app", "register"),
        ("pkg::Name", "pkg::Name", ("pkg", "Name"), True, "pkg.Name", "pkg", "name"),
        ("A#b", "A#b", ("A", "b"), True, "A.b", "a", "b"),
        ("a->b", "a->b", ("a", "b"), True, "a.b", "a", "b"),
        ("Outer.Inner.m", "Outer.Inner.m", ("Outer", "Inner", "m"), True, "Outer.Inner.m", "outer.inner", "m"),
        (" Cart . add ", "Cart.add", ("Cart", "add"), True, "Cart.add", "cart", "add"),
        (".run", ".run", ("run",), True, "run", "", "run"),
        (".", ".", (), True, "", "", ""),
        ("   ", "", (), False, "", "", ""),
    ],
)  # fmt: skip
def test_readings(
    text: str,
    compact: str,
    words: tuple[str, ...],
    qualified: bool,
    target: str,
    owner: str,
    member: str,
) -> None:
    q = Query.parse(text)
    assert (q.compact, q.words, q.qualified) == (compact, words, qualified)
    assert (q.target, q.owner, q.member) == (target, owner, member)
    assert q.folded == compact.lower()
    assert q.empty == (compact == "")


def test_path_words_are_distinct_and_lower_case() -> None:
    assert Query.parse("Sync sync queue Push").path_words == ("sync", "queue", "push")


def test_smart_case_is_a_typed_capital() -> None:
    assert Query.parse("Con").cased and not Query.parse("con").cased
    assert not Query.parse("_1.x").cased


@given(st.text(max_size=20))
def test_any_text_parses(text: str) -> None:
    q = Query.parse(text)
    # Empty when only whitespace and modifiers were typed; never otherwise
    # empty, nor filtered when empty.
    assert q.empty >= (not text.strip())
    assert q.empty <= (not re.sub(r"[\s'^#$*]", "", text))
    assert not (q.empty and q.filtered)
    assert not q.qualified or q.target == q.target.strip(".")


@pytest.mark.parametrize(
    ("text", "rest", "exact", "prefix", "suffix", "types_only"),
    [
        ("'Flask", "Flask", True, False, False, False),
        ("^Fla", "Fla", False, True, False, False),
        ("Client$", "Client", False, False, True, False),
        ("Foo*", "Foo", False, True, False, False),
        ("#Request", "Request", False, False, False, True),
        ("#^Async", "Async", False, True, False, True),
        ("^Foo$", "Foo", False, True, True, False),
        ("'  Flask.route", "Flask.route", True, False, False, False),
        ("#A#b", "A#b", False, False, False, True),
        ("A#b", "A#b", False, False, False, False),
        ("a$b", "a$b", False, False, False, False),
        ("^", "", False, False, False, False),
        ("'", "", False, False, False, False),
        ("$", "", False, False, False, False),
        ("#", "", False, False, False, False),
        (" # ^ ' $ ", "", False, False, False, False),
    ],
)  # fmt: skip
def test_modifiers_are_read_off_the_ends(
    text: str, rest: str, exact: bool, prefix: bool, suffix: bool, types_only: bool
) -> None:
    q = Query.parse(text)
    assert q.text == text
    assert q.compact == "".join(rest.split())
    assert (q.exact, q.prefix, q.suffix, q.types_only) == (exact, prefix, suffix, types_only)
    assert q.filtered == (exact or prefix or suffix or types_only)
    assert q.empty == (rest == "")


@pytest.mark.parametrize(
    ("text", "rest", "dependencies", "prefix", "suffix"),
    [
        ("Flask**", "Flask", True, False, False),
        ("Flask **", "Flask", True, False, False),
        ("Flask*", "Flask", False, True, False),
        ("Flask***", "Flask", True, True, False),
        ("Flask$**", "Flask", True, False, True),
        ("^Fla**", "Fla", True, True, False),
        ("Flask", "Flask", False, False, False),
        ("**", "", False, False, False),
    ],
)  # fmt: skip
def test_two_trailing_stars_ask_the_dependencies(
    text: str, rest: str, dependencies: bool, prefix: bool, suffix: bool
) -> None:
    q = Query.parse(text)
    assert (q.compact, q.dependencies, q.prefix, q.suffix) == (rest, dependencies, prefix, suffix)


def test_a_lone_modifier_is_the_empty_query() -> None:
    empty = Query.parse("")
    for text in ("^", "'", "$", "#", "*", "#'^$"):
        q = Query.parse(text)
        assert (q.empty, q.filtered, q.words, q.where, q.name) == (True, False, (), (), "")
        assert q.accepts("anything", Kind.VARIABLE) == empty.accepts("anything", Kind.VARIABLE)


@pytest.mark.parametrize(
    ("text", "name", "where"),
    [
        ("Flask", "Flask", ()),
        ("flask.Flask", "Flask", ("flask",)),
        ("click.core.Command", "Command", ("click", "core")),
        ("sansio/app Flask", "Flask", ("sansio", "app")),
        ("python PythonDomain", "PythonDomain", ("python",)),
        ("std::io::Read", "Read", ("std", "io")),
        ("A#b", "b", ("a",)),
        ("a->b", "b", ("a",)),
        ("pkg:Name", "Name", ("pkg",)),
        ("#^flask.Fla", "Fla", ("flask",)),
        (".run", "run", ()),
        ("   ", "", ()),
    ],
)  # fmt: skip
def test_the_last_part_names_and_the_others_say_where(
    text: str, name: str, where: tuple[str, ...]
) -> None:
    q = Query.parse(text)
    assert (q.name, q.where) == (name, where)
    assert q.inherited == frozenset()  # the index resolves it


@pytest.mark.parametrize(
    ("text", "name", "kind", "accepted"),
    [
        ("'flask", "Flask", Kind.CLASS, True),
        ("'flask", "FlaskClient", Kind.CLASS, False),
        ("'Flask", "flask", Kind.FUNCTION, False),
        ("^Fla", "Flask", Kind.CLASS, True),
        ("^Fla", "flask_app", Kind.FUNCTION, False),
        ("^fla", "flask_app", Kind.FUNCTION, True),
        ("client$", "AsyncClient", Kind.CLASS, True),
        ("client$", "ClientState", Kind.CLASS, False),
        ("#request", "Request", Kind.CLASS, True),
        ("#request", "request", Kind.FUNCTION, False),
        ("#Proto", "Proto", Kind.INTERFACE, True),
        ("^Foo$", "FooBarFoo", Kind.CLASS, True),
        ("^Foo$", "FooBar", Kind.CLASS, False),
        ("'Flask.route", "route", Kind.METHOD, True),
        ("register", "anything", Kind.VARIABLE, True),
    ],
)  # fmt: skip
def test_modifiers_accept_by_name_part_and_kind(
    text: str, name: str, kind: Kind, accepted: bool
) -> None:
    assert Query.parse(text).accepts(name, kind) == accepted
