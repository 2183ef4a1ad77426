"""The name score: one case per line, orderings not raw numbers."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nearsym.match import (
    EXACT_IGNORING_CASE_SCORE,
    EXACT_SCORE,
    NON_EXACT_CAP,
    score_name,
    score_symbol_name,
    split_words,
    word_starts,
)


@pytest.mark.parametrize(
    ("name", "starts"),
    [
        ("HTTPServer", "HS"),
        ("register_blueprint", "rb"),
        ("getUserId", "gUI"),
        ("__init__", "i"),
        ("parse2json", "p"),
        ("utf8Decode", "uD"),
        ("A", "A"),
    ],
)
def test_word_starts(name: str, starts: str) -> None:
    assert "".join(c for c, s in zip(name, word_starts(name), strict=True) if s) == starts


@pytest.mark.parametrize(
    ("query", "better", "worse"),
    [
        ("hs", "HTTPServer", "hashes"),
        ("reg", "register", "register_blueprint"),
        ("reg", "register_blueprint", "unregister"),
        ("rb", "register_blueprint", "rebuild"),
        ("gui", "getUserId", "languid"),
        ("wsp", "WorkspaceSymbolParams", "waspish"),
        ("config", "Config", "ConfigError"),
        ("config", "config", "Config"),
        ("parse", "parse", "parse_args"),
        ("init", "init", "__init__"),
        ("search document", "search_document", "search_the_document_index"),
        ("getUserId", "get_user_id", "get_user"),
        ("FLO", "FLOAT", "FloatRange"),
        ("Con", "Config", "context_processor"),
    ],
)
def test_ordering(query: str, better: str, worse: str) -> None:
    assert score_name(query, better) > score_name(query, worse)


@pytest.mark.parametrize(
    ("query", "name", "score"),
    [
        ("register", "register", EXACT_SCORE),
        ("Register", "register", EXACT_IGNORING_CASE_SCORE),
        ("xyz", "register", 0.0),
        ("", "register", 0.0),
        ("ba", "ab", 0.0),
    ],
)
def test_fixed_points(query: str, name: str, score: float) -> None:
    assert score_name(query, name) == score


def test_non_exact_never_reaches_exact() -> None:
    assert 0 < score_name("reg", "register") <= NON_EXACT_CAP < EXACT_IGNORING_CASE_SCORE


def test_one_character_words_must_match_but_do_not_carry_the_score() -> None:
    assert score_name("parse x", "parse_thing") == 0.0
    assert score_name("parse t", "parse_thing") >= score_name("parse", "parse_thing")
    assert score_name("a b", "alpha_beta") > score_name("ab", "alpha_beta")


def test_split_words() -> None:
    assert split_words("getUserId") == ["get", "User", "Id"]
    assert split_words("search document") == ["search", "document"]
    assert split_words("HTTPServer") == ["HTTP", "Server"]


def test_qualified_query_scores_the_owner() -> None:
    assert score_symbol_name("App.register", "register", "App") == EXACT_SCORE
    assert score_symbol_name("Inner.m", "m", "Outer.Inner") == EXACT_SCORE
    assert score_symbol_name("App::register", "register", "App") == EXACT_SCORE
    assert score_symbol_name("Ap.reg", "register", "App") > 0
    assert score_symbol_name("Blueprint.register", "register", "App") == 0.0


def test_owner_name_finds_its_methods_at_half_weight() -> None:
    method = score_symbol_name("SyncQueue", "push", "SyncQueue")
    assert 0 < method <= 0.5
    assert score_symbol_name("SyncQueue", "SyncQueue", "") > method


def test_lower_case_query_ignores_case() -> None:
    assert score_name("con", "Config") == score_name("con", "config")


@given(st.text(alphabet=string.ascii_letters + string.digits + "_-./:$ #\\", max_size=16))
def test_fast_word_starts_agree_with_the_reference(name: str) -> None:
    from nearsym.match import _word_starts, _word_starts_slow

    assert _word_starts(name) == _word_starts_slow(name)
