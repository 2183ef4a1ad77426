"""The name score: one case per line, orderings not raw numbers."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nearsym.core.match import (
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
    from nearsym.core.match import _word_starts, _word_starts_slow

    assert _word_starts(name) == _word_starts_slow(name)


def _reference_align(typed: str, name: str, smart_case: bool = True) -> object:
    """The alignment DP as first written: quadratic, no pruning. The fast
    one must agree with it exactly (positions, raw score, ceiling, tail)."""
    from nearsym.core import match as m

    query, lower = typed.lower(), name.lower()
    if not query or not m.is_subsequence(query, lower):
        return None
    smart_case = smart_case and typed != query
    starts = m._word_starts_slow(name)
    occurs: dict[str, list[int]] = {}
    for j, ch in enumerate(lower):
        occurs.setdefault(ch, []).append(j)

    def landing(j: int, i: int) -> float:
        case = m.CASE_MISMATCH if smart_case and name[j] != typed[i] else 0.0
        if j == 0:
            return m.SCORE_START - case
        return (m.SCORE_WORD if starts[j] else m.SCORE_SKIP) - case

    best = {j: (landing(j, 0), -1) for j in occurs[query[0]]}
    trail = [best]
    for i in range(1, len(query)):
        nxt: dict[int, tuple[float, int]] = {}
        for j in occurs.get(query[i], ()):
            top, back = -1e9, -1
            for k, (score, _) in best.items():
                if k >= j:
                    continue
                if k == j - 1:
                    case = m.CASE_MISMATCH if smart_case and name[j] != typed[i] else 0.0
                    cand = score + max(m.SCORE_RUN - case, landing(j, i))
                else:
                    cand = score + landing(j, i) - m.GAP_OPEN - m.GAP_EXTEND * (j - k - 2)
                if cand > top:
                    top, back = cand, k
            if back >= 0:
                nxt[j] = (top, back)
        if not nxt:
            return None
        best = nxt
        trail.append(best)
    end = max(best, key=lambda j: (best[j][0], -j))
    positions = [end]
    for level in range(len(trail) - 1, 0, -1):
        positions.append(trail[level][positions[-1]][1])
    positions.reverse()
    tail = min(m.TAIL_CAP, m.TAIL * max(0, len(name) - len(query)))
    ceiling = m.SCORE_START + max(m.SCORE_WORD, m.SCORE_RUN) * (len(query) - 1)
    return (tuple(positions), round(best[end][0] - tail, 9), ceiling, tail)


@given(
    st.text(alphabet="abcXY_e", min_size=1, max_size=6),
    st.text(alphabet="abcXY_eD", max_size=24),
    st.booleans(),
)
def test_fast_alignment_equals_the_reference(query: str, name: str, smart: bool) -> None:
    from nearsym.core.match import _align

    fast = _align.__wrapped__(query, name, smart)
    expected = _reference_align(query, name, smart)
    if fast is None:
        assert expected is None
    else:
        assert expected == (fast.positions, round(fast.raw, 9), fast.best, fast.tail)


@given(
    st.sampled_from(
        ["reg", "Reg", "rb", "pool.get", "App.run", "x", "get user", "HS", "a::b", "sq"]
    ),
    st.text(alphabet="aRgebxpolHSu_.", min_size=1, max_size=14),
    st.sampled_from(["", "Pool", "App.Inner", "a", "registry"]),
    st.booleans(),
)
def test_query_scorer_equals_explain_name(
    query: str, name: str, container: str, smart: bool
) -> None:
    from nearsym.core.match import QueryScorer, explain_name

    scorer = QueryScorer(query, smart)
    assert scorer.both(name, container) == (
        explain_name(query, name, container, smart_case=smart).score,
        explain_name(query, name, container, tail=False, smart_case=smart).score,
    )


@given(
    st.text(alphabet="abcXY_eD.", min_size=1, max_size=6),
    st.lists(
        st.text(alphabet="abcXY_eD.-1 ", min_size=1, max_size=30),
        min_size=8,
        max_size=40,
        unique=True,
    ),
    st.booleans(),
)
def test_batch_alignment_equals_align_bit_for_bit(
    query: str, names: list[str], smart: bool
) -> None:
    from nearsym.core.batchalign import align_many
    from nearsym.core.match import _align

    batch = align_many(query, names, smart)
    assert set(batch) == set(names)
    for name in names:
        one = _align.__wrapped__(query, name, smart)
        assert batch[name] == (None if one is None else (one.raw, one.best, one.tail))


@given(
    st.sampled_from(["reg", "Reg", "rb", "pool.get", "App.run", "get user", "HS", "a::b", "sq"]),
    st.lists(
        st.tuples(
            st.text(alphabet="aRgebxpolHSu_.", min_size=1, max_size=14),
            st.sampled_from(["", "Pool", "App.Inner", "a", "registry"]),
        ),
        min_size=8,
        max_size=30,
    ),
    st.booleans(),
)
def test_primed_query_scorer_equals_explain_name(
    query: str, pairs: list[tuple[str, str]], smart: bool
) -> None:
    from nearsym.core.match import QueryScorer, explain_name

    scorer = QueryScorer(query, smart)
    scorer.prime(pairs)
    for name, container in pairs:
        assert scorer.both(name, container) == (
            explain_name(query, name, container, smart_case=smart).score,
            explain_name(query, name, container, tail=False, smart_case=smart).score,
        )


def test_batch_alignment_leaves_out_what_it_cannot_take() -> None:
    from nearsym.core.batchalign import MAX_WIDTH, align_many

    names = [f"name{i}" for i in range(10)] + ["naïve_name", "n" * (MAX_WIDTH + 1)]
    found = align_many("nm", names)
    assert set(found) == {f"name{i}" for i in range(10)}
    assert align_many("nm", names[:3]) == {}  # too few to be worth it
    assert align_many("ñ", names) == {}  # a query that is not ASCII
