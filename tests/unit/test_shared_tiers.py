"""The shared index's SQL tiers, without a database
(`nearsym.index.shared_query`): the prefix tier's range, and the few
pieces of a long query that the trigram indexes are asked for."""

from __future__ import annotations

import fnmatch

import pytest

pytest.importorskip("psycopg")

from nearsym.index.shared_query import fewer_trigrams, index_pattern, prefix_end, tiers


def like(pattern: str, text: str) -> bool:
    # The patterns here hold no escaped wildcard: % is fnmatch's *.
    return fnmatch.fnmatchcase(text, pattern.replace("\\_", "_").replace("%", "*"))


@pytest.mark.parametrize(
    ("prefix", "end"),
    [
        ("sd", "se"),
        ("a_", "a`"),
        ("z", "{"),
        ("\U0010ffff", None),
        ("a\U0010ffff", "b"),
        ("", None),
    ],
)
def test_prefix_end_is_the_least_string_above_the_prefix(prefix: str, end: str | None) -> None:
    assert prefix_end(prefix) == end


def test_a_long_query_asks_the_index_for_pieces_its_matches_contain() -> None:
    query = "cg_thermal_int_status__therm_inth_detect__shift"
    pattern = index_pattern(query)
    assert pattern is not None
    assert pattern.count("%") == 5  # four pieces
    for name in (query, "x" + query, query + "_y", "a" + query + "b"):
        assert like(pattern, name)


@pytest.mark.parametrize("query", ["render_template", "get_user", "a_b_c_d_e_f_g_h_i", "ab"])
def test_a_short_query_asks_the_index_for_all_of_it(query: str) -> None:
    assert index_pattern(query) is None


def test_fewer_trigrams_keep_a_spread_subset() -> None:
    trigrams = list(range(45))
    some = fewer_trigrams(trigrams)
    assert len(some) == 8
    assert set(some) <= set(trigrams)
    assert some[0] == 0 and some[-1] > 35
    assert fewer_trigrams([1, 2, 3]) == [1, 2, 3]


def test_the_prefix_tier_picks_its_names_first_unless_qualified() -> None:
    assert next(t for t in tiers("render_temp") if t.name == "prefix").names_where
    assert not next(t for t in tiers("Deferred.add") if t.name == "prefix").names_where
