"""The name score: one case per line, orderings not raw numbers."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nearsym.core import align as align_module
from nearsym.core.align import WIDE, Alignments, _by_width, align
from nearsym.core.match import (
    EXACT_IGNORING_CASE_SCORE,
    EXACT_SCORE,
    NON_EXACT_CAP,
    NameMatcher,
)
from nearsym.core.query import Query
from nearsym.core.words import SEPARATORS, name_matrix, split_words, word_starts

from . import reference_match as ref


def score_symbol_name(query: str, name: str, container: str, smart_case: bool = True) -> float:
    """The product's name score of one definition."""
    return NameMatcher(Query.parse(query), smart_case).both(name, container)[0]


def score_name(query: str, name: str, tail: bool = True) -> float:
    """The name score, or with `tail=False` its shape (what the rank
    compares first)."""
    both = NameMatcher(Query.parse(query)).both(name, "")
    return both[0] if tail else both[1]


def starts_of(name: str) -> tuple[bool, ...]:
    chars, lengths = name_matrix([name])
    return tuple(word_starts(chars, lengths)[0].tolist())


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
    assert "".join(c for c, s in zip(name, starts_of(name), strict=True) if s) == starts


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
        ("Float", "FloatRange", "FLOAT"),
        ("Query", "QueryParams", "query"),
    ],
)
def test_ordering(query: str, better: str, worse: str) -> None:
    assert score_name(query, better) > score_name(query, worse)


@pytest.mark.parametrize(
    ("query", "name", "score"),
    [
        ("register", "register", EXACT_SCORE),
        ("register", "Register", EXACT_IGNORING_CASE_SCORE),
        ("xyz", "register", 0.0),
        ("", "register", 0.0),
        ("ba", "ab", 0.0),
    ],
)
def test_fixed_points(query: str, name: str, score: float) -> None:
    assert score_name(query, name) == score


def test_non_exact_never_reaches_exact() -> None:
    assert 0 < score_name("reg", "register") <= NON_EXACT_CAP < EXACT_IGNORING_CASE_SCORE


def test_words_must_all_match_and_count_by_their_length() -> None:
    assert score_name("parse x", "parse_thing") == 0.0
    assert score_name("parse t", "parse_thing") >= score_name("parse", "parse_thing")
    assert score_name("a b", "alpha_beta") >= score_name("ab", "alpha_beta")
    # A one-letter word is weighed by its length: it must land well too, so
    # `add_o` prefers `add_object_type` (on a word) to `add_row` (inside one).
    assert score_name("add_o", "add_object_type", tail=False) > score_name(
        "add_o", "add_row", tail=False
    )


def test_initials_earn_as_much_as_a_prefix() -> None:
    # Skipping to a word start is not scattering; a run begun on a word
    # start keeps the word's points.
    assert score_name("CE", "ConfigError", tail=False) > score_name("CE", "Cell", tail=False)
    assert score_name("ST", "StringTransport", tail=False) >= score_name("ST", "STAR", tail=False)
    assert score_name("add", "add_task", tail=False) == score_name(
        "add", "AttributeDocumenterDirective", tail=False
    )
    assert score_name("add", "add_task", tail=False) > score_name("add", "xadd", tail=False)


def test_split_words() -> None:
    assert split_words("getUserId") == ("get", "User", "Id")
    assert split_words("search document") == ("search", "document")
    assert split_words("HTTPServer") == ("HTTP", "Server")
    # every separator of a name separates a query's words too
    assert split_words("a$b\\c#d::e") == ("a", "b", "c", "d", "e")
    assert split_words("$ x") == ("x",)
    assert split_words("ñandú") == ("and",)


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


def test_a_capital_typed_asks_for_that_case_in_exact_names_too() -> None:
    assert score_name("Query", "query") < NON_EXACT_CAP
    assert score_symbol_name("Query", "query", "", smart_case=False) == EXACT_IGNORING_CASE_SCORE
    loose = NameMatcher(Query.parse("Query"), cased_exact=False)
    assert loose.both("query", "")[0] == EXACT_IGNORING_CASE_SCORE


def test_lower_case_query_ignores_case() -> None:
    assert score_name("con", "Config") == score_name("con", "config")


# -- the product against the reference implementations (reference_match.py) --

ascii_names = string.ascii_letters + string.digits + SEPARATORS
unicode_names = "aBxÄäßΣσςİıЖжé1²_ .$"


@settings(deadline=None)  # numpy on a shared machine: timings vary
@given(st.text(alphabet=ascii_names, max_size=16) | st.text(alphabet=unicode_names, max_size=16))
def test_word_starts_equal_the_reference(name: str) -> None:
    assert starts_of(name) == ref.word_starts(name)


def test_word_starts_of_a_pool_equal_each_name_alone() -> None:
    names = ["HTTPServer", "a", "register_blueprint", "Ärger_Ölen", "x" * 40]
    chars, lengths = name_matrix(names)
    rows = word_starts(chars, lengths)
    for i, name in enumerate(names):
        assert tuple(rows[i, : len(name)].tolist()) == ref.word_starts(name)
        assert not rows[i, len(name) :].any()


@settings(deadline=None)  # numpy on a shared machine: timings vary
@given(
    st.text(alphabet="abcXY_e", min_size=1, max_size=6),
    st.text(alphabet="abcXY_eD", max_size=24),
    st.booleans(),
)
def test_reference_alignment_equals_the_quadratic_one(query: str, name: str, smart: bool) -> None:
    fast = ref.align(query, name, smart)
    expected = ref.quadratic_align(query, name, smart)
    if fast is None:
        assert expected is None
    else:
        assert expected == (fast.positions, round(fast.raw, 9), fast.best, fast.tail)


def _scores_only(query: str, names: list[str], smart: bool, native: bool) -> Alignments:
    """`align` as the rerank calls it (no positions): in C where `native`
    (and the module was built), in numpy otherwise."""
    saved = align_module._native
    if not native:
        align_module._native = None
    try:
        return align(query, names, smart)
    finally:
        align_module._native = saved


def _check_alignment(query: str, names: list[str], smart: bool) -> None:
    """Each way `align` can run gives the reference's scores, bit for bit:
    with positions (numpy), and without them, in C and in numpy."""
    found = align(query, names, smart, positions=True)
    for i, name in enumerate(names):
        one = ref.align(query, name, smart)
        if one is None:
            assert not found.ok[i] and found.positions[i] == ()
        else:
            assert found.ok[i]
            got = (float(found.raw[i]), found.best, float(found.tail[i]), found.positions[i])
            assert got == (one.raw, one.best, one.tail, one.positions)
    for native in (True, False):
        alone = _scores_only(query, names, smart, native)
        assert alone.raw.tolist() == found.raw.tolist()
        assert alone.tail.tolist() == found.tail.tolist()
        assert alone.ok.tolist() == found.ok.tolist()
        assert alone.best == found.best and alone.positions == ()


@settings(deadline=None)  # numpy on a shared machine: timings vary
@given(
    st.text(alphabet="abcXY_eD.", min_size=1, max_size=6),
    st.lists(st.text(alphabet="abcXY_eD.-1 ", min_size=1, max_size=30), max_size=40),
    st.booleans(),
)
def test_alignment_equals_the_reference_bit_for_bit(
    query: str, names: list[str], smart: bool
) -> None:
    _check_alignment(query, names, smart)


@settings(deadline=None)  # numpy on a shared machine: timings vary
@given(
    st.text(alphabet="aäÄßσΣжЖ_x", min_size=1, max_size=5),
    st.lists(st.text(alphabet="aäÄßσΣςжЖİ_xX.", min_size=0, max_size=20), max_size=12),
    st.booleans(),
)
def test_unicode_alignment_equals_the_reference(query: str, names: list[str], smart: bool) -> None:
    _check_alignment(query, names, smart)


@settings(deadline=None)  # numpy on a shared machine: timings vary
@given(
    st.text(alphabet="abX_", min_size=1, max_size=4),
    st.lists(st.text(alphabet="abX_c", min_size=WIDE - 2, max_size=WIDE + 40), max_size=4),
)
def test_long_names_equal_the_reference(query: str, longs: list[str]) -> None:
    _check_alignment(query, ["ab", "a_b", *longs, "Xb"], True)


def test_a_pool_cut_by_width_equals_the_reference() -> None:
    # Enough rows, of widths far enough apart, that `align` cuts the matrix
    # in two (`_by_width`): the scores and positions are those of one name
    # at a time.
    rng = random.Random(20261202)
    letters = "abcXY_eD."
    names = ["".join(rng.choices(letters, k=rng.randint(1, 8))) for _ in range(90)]
    names += ["".join(rng.choices(letters, k=rng.randint(60, 90))) for _ in range(12)]
    rng.shuffle(names)
    assert len(_by_width(list(range(len(names))), names)) == 2
    for query in ("ab", "aXe", "b_D", "a.e", "Y"):
        for smart in (True, False):
            _check_alignment(query, names, smart)


def test_the_install_built_the_c_alignment() -> None:
    """Every machine nearsym is tested on has a compiler, so a missing or
    older module means the build broke (the extension is optional)."""
    assert align_module._native is not None


@settings(deadline=None)  # numpy on a shared machine: timings vary
@given(
    st.text(alphabet="abXY_\0.é", min_size=1, max_size=6),
    st.lists(st.text(alphabet="abcXY_eD.\0 é", max_size=40), max_size=30),
    st.booleans(),
)
def test_c_alignment_is_numpys_on_any_names(query: str, names: list[str], smart: bool) -> None:
    # NULs, and names that are not ASCII (left to numpy) among the rest.
    native = _scores_only(query, names, smart, True)
    plain = _scores_only(query, names, smart, False)
    assert native.raw.tolist() == plain.raw.tolist()
    assert native.tail.tolist() == plain.tail.tolist()
    assert native.ok.tolist() == plain.ok.tolist()


def test_c_alignment_is_numpys_on_real_names() -> None:
    """Every identifier of nearsym's own sources, as one pool, for queries
    of each shape the golden sets type: a prefix, initials, a scattered
    subsequence, capitals, a long name."""
    root = Path(__file__).resolve().parents[2] / "server"
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py")))
    names = sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)))
    assert len(names) > 3000
    queries = ["reg", "rb", "NM", "nmatch", "Matcher", "index_into", "s", "_", "cfg", "aLn"]
    for query in queries + [n for n in names[::400] if len(n) > 2]:
        for smart in (True, False):
            native = _scores_only(query, names, smart, True)
            plain = _scores_only(query, names, smart, False)
            assert native.raw.tolist() == plain.raw.tolist(), query
            assert native.tail.tolist() == plain.tail.tolist()
            assert native.ok.tolist() == plain.ok.tolist()


def test_alignment_of_nothing() -> None:
    assert align("", ["abc"]).ok.tolist() == [False]
    assert align("a", []).ok.tolist() == []


def _expected(query: str, name: str, container: str, smart: bool) -> tuple[float, float]:
    return (
        ref.explain_name(query, name, container, smart_case=smart).score,
        ref.explain_name(query, name, container, tail=False, smart_case=smart).score,
    )


queries = st.sampled_from(
    ["reg", "Reg", "rb", "pool.get", "App.run", "x", "get user", "HS", "a::b", "sq", "ä", "Äb x"]
)
owners = st.sampled_from(["", "Pool", "App.Inner", "a", "registry", "Ärger"])
pair_names = st.text(alphabet="aRgebxpolHSu_.äÄ", min_size=1, max_size=14)


@settings(deadline=None)  # numpy on a shared machine: timings vary
@given(queries, pair_names, owners, st.booleans())
def test_one_definition_equals_the_reference(
    query: str, name: str, container: str, smart: bool
) -> None:
    matcher = NameMatcher(Query.parse(query), smart)
    assert matcher.both(name, container) == _expected(query, name, container, smart)
    got = matcher.explain(name, container, positions=True)
    want = ref.explain_name(query, name, container, smart_case=smart)
    assert (got.score, got.reading, got.matched, got.positions) == (
        want.score,
        want.reading,
        want.matched,
        want.positions,
    )


@settings(deadline=None)  # numpy on a shared machine: timings vary
@given(queries, st.lists(st.tuples(pair_names, owners), max_size=30), st.booleans())
def test_a_primed_pool_equals_the_reference(
    query: str, pairs: list[tuple[str, str]], smart: bool
) -> None:
    matcher = NameMatcher(Query.parse(query), smart)
    matcher.prime(pairs)
    for name, container in pairs:
        assert matcher.both(name, container) == _expected(query, name, container, smart)


def test_explain_marks_the_matched_characters() -> None:
    matcher = NameMatcher(Query.parse("rb"))
    got = matcher.explain("register_blueprint", "App", positions=True)
    assert (got.reading, got.positions) == ("name", (0, 9))
    owner = NameMatcher(Query.parse("SyncQueue")).explain("push", "SyncQueue", positions=True)
    assert owner.reading == "owner (discounted)" and owner.matched == "SyncQueue.push"
    exact = NameMatcher(Query.parse("App::register")).explain("register", "App")
    assert (exact.score, exact.reading) == (EXACT_SCORE, "qualified, exact")
