"""The shared index's name columns: the batch computation equals the
per-name definitions, and the fuzzy trigrams hold what a subsequence query
needs (`nearsym.index.shared_columns`)."""

from __future__ import annotations

import random

import pytest

from nearsym.index.shared_columns import (
    fuzzy_trigrams,
    initials,
    name_columns,
    name_columns_text,
    query_trigrams,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("WorkspaceSymbolParams", "wsp"),
        ("get_user_id", "gui"),
        ("HTTPServer", "hs"),
        ("__init__", "i"),
        ("x", "x"),
        ("", ""),
    ],
)
def test_initials_are_the_first_letters_of_the_words(name: str, expected: str) -> None:
    assert initials(name) == expected


@pytest.mark.parametrize(
    ("query", "name", "found"),
    [
        ("wsp", "WorkspaceSymbolParams", True),  # word to word
        ("getuser", "getUser", True),  # letter to letter
        ("gus", "get_user_string", True),  # into the next word
        ("work", "WorkspaceSymbolParams", True),
        ("gtu", "get_user", False),  # skips inside a word: left to the local index
        ("xyz", "get_user", False),
    ],
)
def test_a_query_is_found_when_its_trigrams_are_the_names(
    query: str, name: str, found: bool
) -> None:
    assert (set(query_trigrams(query)) <= set(fuzzy_trigrams(name))) is found


def test_batch_columns_equal_the_per_name_ones() -> None:
    rng = random.Random(19)
    alphabet = "aAbBzZ09_-.:$ #xyHTTPServer"
    names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    names += ["HTTPServer", "getUserId", "Ünïcodé_näme", "ABc", "X_", "", "a"]
    batch_initials, batch_fuzzy = name_columns(names)
    assert batch_initials == [initials(n) for n in names]
    assert batch_fuzzy == [fuzzy_trigrams(n) for n in names]


@pytest.mark.parametrize("with_unicode", [False, True])
def test_text_columns_hold_the_same_trigrams(with_unicode: bool) -> None:
    rng = random.Random(19)
    alphabet = "aAbBzZ09_-.:$ #xyHTTPServer"
    names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
    names += ["HTTPServer", "", "ab"] + (["Ünïcodé_näme"] if with_unicode else [])
    listed_initials, listed = name_columns(names)
    text_initials, texts = name_columns_text(names)
    assert text_initials == listed_initials
    # The elements of an integer[] text form; the zero padding reads as the same value.
    assert [[int(v) for v in t.split(",") if v] for t in texts] == listed
