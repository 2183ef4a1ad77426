"""The query parsed once: one case per line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    assert q.empty == (not text.strip())
    assert not q.qualified or q.target == q.target.strip(".")
