"""The rank rules of design.md, as properties."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import get_args, get_type_hints

from hypothesis import given, settings
from hypothesis import strategies as st

from nearsym.core.model import Kind, Symbol
from nearsym.core.query import Query
from nearsym.core.rank import (
    FETCH_MAX,
    FETCH_MIN,
    POLICIES,
    REBINDING_LANGUAGES,
    RankContext,
    RankPolicy,
    WorkspaceHints,
    _order,
    evidence,
    explain,
    fetch_limit,
    pool_width,
)
from nearsym.core.rank import rerank_groups as _rerank_groups
from nearsym.core.sortkey import EmptyQueryKey, ExplainedKey, RawSortKey, SortKey, key_items

from .helpers import ROOT, rerank, sym
from .test_match import score_name


def rerank_groups(
    query: str, groups: list[list[Symbol]], limit: int, context: RankContext | None = None
) -> list[Symbol]:
    return _rerank_groups(Query.parse(query), groups, limit, context)


limits = st.integers(min_value=-10, max_value=2000)
offsets = st.integers(min_value=0, max_value=5000)
names = st.text(alphabet="abcdeHTPS_x", min_size=1, max_size=12)


@given(limits)
def test_fetch_limit_stays_between_50_and_500(limit: int) -> None:
    assert FETCH_MIN <= fetch_limit(limit) <= FETCH_MAX


@given(offsets, st.integers(min_value=1, max_value=1000))
def test_pool_width_is_whole_blocks_and_never_narrows(offset: int, limit: int) -> None:
    block = fetch_limit(limit)
    width = pool_width(offset, limit)
    assert width % block == 0
    assert width >= block
    assert width <= max(block, FETCH_MAX)
    assert pool_width(offset + limit, limit) >= width


def _pool(seed: int, n: int) -> list:
    rng = random.Random(seed)
    words = ["parse", "parser", "parse_args", "Parser", "sparse", "compare", "prepare"]
    return [
        sym(rng.choice(words), path=f"d{rng.randrange(4)}/f{rng.randrange(5)}.py", line=i)
        for i in range(n)
    ]


@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=1, max_value=120))
def test_rerank_is_deterministic(seed: int, limit: int) -> None:
    pool = _pool(seed, 80)
    ctx = RankContext("/ws/d1/f2.py")
    assert rerank("pars", pool, limit, ctx) == rerank("pars", list(pool), limit, ctx)


@given(st.integers(min_value=0, max_value=10_000), st.integers(min_value=0, max_value=100))
def test_empty_query_or_empty_pool_keeps_input_order(seed: int, limit: int) -> None:
    pool = _pool(seed, 60)
    assert rerank("", pool, limit) == pool[:limit]
    assert rerank("   ", pool, limit) == pool[:limit]
    assert rerank("parse", [], limit) == []


@given(st.integers(min_value=0, max_value=10_000), st.permutations(range(3)))
def test_rerank_groups_ignores_group_order(seed: int, order: list[int]) -> None:
    groups = [
        [sym(s.name, s.path, line=s.line, root=f"/root{g}") for s in _pool(seed + g, 30)]
        for g in range(3)
    ]
    ctx = RankContext("/root1/d0/f0.py")
    expected = rerank_groups("par", groups, 50, ctx)
    assert rerank_groups("par", [groups[i] for i in order], 50, ctx) == expected
    assert rerank_groups("", [groups[i] for i in order], 50, ctx) == rerank_groups(
        "", groups, 50, ctx
    )
    assert rerank_groups("par", [[], *groups, []], 50, ctx) == expected


def test_rerank_groups_keeps_in_group_retrieval_rank() -> None:
    # Identical evidence and identity except the root: retrieval rank inside
    # each group decides, not the group's position.
    a = [sym("run", "x.py", root="/a"), sym("run", "y.py", root="/a")]
    b = [sym("run", "x.py", root="/b")]
    merged = rerank_groups("run", [a, b], 10)
    assert merged == rerank_groups("run", [b, a], 10)


@given(names, names)
def test_name_without_the_query_as_subsequence_scores_zero(query: str, name: str) -> None:
    it = iter(name.lower())
    contains = all(c in it for c in query.lower())
    assert (score_name(query, name) > 0) == contains


@given(names, names)
def test_exact_name_beats_every_longer_name_containing_it(query: str, extra: str) -> None:
    longer = query + extra
    assert score_name(query, query) > score_name(query, longer)
    assert score_name(query, query) > score_name(query, extra + query)


def test_acronym_end_starts_a_word() -> None:
    assert score_name("hs", "HTTPServer") > score_name("hs", "hashes")


def test_type_ranks_above_its_own_methods_for_its_name() -> None:
    cls = sym("SyncQueue", "q.py", Kind.CLASS)
    push = sym("push", "q.py", Kind.METHOD, container="SyncQueue", line=3)
    pop = sym("pop", "q.py", Kind.METHOD, container="SyncQueue", line=5)
    assert rerank("SyncQueue", [push, pop, cls], 3)[0] == cls
    assert set(rerank("SyncQueue", [push, pop, cls], 3)[1:]) == {push, pop}


@given(st.sampled_from(["a/x.py", "a/b/x.py", "c/x.py", "c/d/e/x.py"]))
def test_equal_names_nearer_the_open_file_rank_first(open_rel: str) -> None:
    pool = [sym("run", p) for p in ["a/x.py", "a/b/x.py", "c/x.py", "c/d/e/x.py", "z/q/x.py"]]
    ctx = RankContext(f"{ROOT}/{open_rel}")
    assert rerank("run", pool, 5, ctx)[0].path == open_rel


def test_same_folder_beats_sibling_folder() -> None:
    near = sym("parse", "pkg/a/near.py")
    far = sym("parse", "pkg/b/far.py")
    ctx = RankContext(f"{ROOT}/pkg/a/open.py")
    assert rerank("parse", [far, near], 2, ctx) == [near, far]
    assert rerank("parse", [near, far], 2, RankContext(f"{ROOT}/pkg/b/open.py")) == [far, near]


def test_query_word_in_path_breaks_name_ties() -> None:
    other = sym("push", "internal/other/queue.go")
    wanted = sym("push", "internal/syncqueue/queue.go")
    assert rerank("syncqueue push", [other, wanted], 2)[0] == wanted or rerank(
        "push", [other, wanted], 2
    ) == [other, wanted]


def test_name_evidence_outranks_closeness() -> None:
    exact_far = sym("parse", "far/away/x.py")
    prefix_near = sym("parser", "here/x.py")
    ctx = RankContext(f"{ROOT}/here/x.py")
    assert rerank("parse", [prefix_near, exact_far], 2, ctx) == [exact_far, prefix_near]


def test_explain_names_every_component() -> None:
    s = sym("register_blueprint", "src/app.py", Kind.METHOD, container="App")
    text = explain(Query.parse("rb"), s, RankContext(f"{ROOT}/src/other.py"))
    assert "[r]egister_[b]lueprint" in text
    assert "closeness" in text and "folder steps" in text
    assert "no open file known" in explain(Query.parse("rb"), s)


def _reference_key(
    query: Query, context: RankContext, rank: int, symbol: Symbol
) -> tuple[object, ...]:
    """A row's sort key computed the obvious way, from scratch (`evidence`)."""
    ev = evidence(query, symbol, context)
    line = symbol.span.line
    policy = context.policy
    later_first = policy.last_definition_first and (
        not policy.rebinding_only or symbol.language in REBINDING_LANGUAGES
    )
    return (
        -ev.shape,
        symbol.root in context.dependencies,
        not ev.member,
        -ev.receiver,
        -ev.path_share,
        ev.in_tests,
        ev.local,
        not ev.imported,
        ev.kind_rank,
        not ev.exported,
        not ev.mentioned_here,
        -ev.mentions,
        -ev.proximity,
        -ev.name_score,
        symbol.root,
        symbol.path,
        symbol.qualified_name,
        -line if later_first else line,
        symbol.span.col,
        rank,
    )


def _reference_order(
    query: Query, ranked: list[tuple[int, Symbol]], limit: int, context: RankContext
) -> list[Symbol]:
    """The rerank order computed the obvious way: every row's evidence from
    scratch (`evidence`), sorted whole."""
    ordered = sorted(ranked, key=lambda p: _reference_key(query, context, *p))
    return [s for _, s in ordered][: max(0, limit)]


@settings(max_examples=60, deadline=None)  # the reference builds a matcher per row
@given(
    st.integers(min_value=0, max_value=10_000),
    st.sampled_from(["reg", "Reg", "rb", "pool.get", "x", "register_blueprint", "hs", "a get"]),
    st.sampled_from([None, "/ws/a/b/x.py", "/ws/c/tests/test_x.py"]),
    st.sampled_from(list(POLICIES.values())),
    st.integers(min_value=1, max_value=60),
)
def test_order_equals_the_reference_order(
    seed: int, query: str, open_file: str | None, policy: RankPolicy, limit: int
) -> None:
    """`_order` scores the pool at once and memoises per file and per name;
    it must order exactly as every row's evidence computed from scratch."""
    rng = random.Random(seed)
    names = ["register", "Register", "register_blueprint", "get", "HTTPServer", "hashes", "x"]
    paths = ["a/b/x.py", "a/y.py", "c/tests/test_x.py", "c/d/z.py", "pool/get.py", "a/get.py"]
    pool = [
        sym(
            rng.choice(names),
            rng.choice(paths),
            kind=rng.choice([Kind.FUNCTION, Kind.VARIABLE, Kind.CLASS]),
            container=rng.choice(["", "Pool", "App.Inner"]),
            line=rng.randrange(5),
            language=rng.choice(["python", "typescript"]),
        )
        for _ in range(rng.randint(0, 40))
    ]
    hints = WorkspaceHints(
        frozenset({("/ws/a/y.py", "Pool"), ("/ws/c/d", "App.Inner")}),
        frozenset({("/ws/a/b/x.py", "get"), ("/ws/c/d/z.py", "*")}),
        frozenset({("get", "pool"), ("register", "inner"), ("x", "appinner")}),
        frozenset({"register_blueprint", "hashes", "x"}),
    )

    def mentions(root: str, names: Sequence[str]) -> list[int]:
        return [len(n) * 5 % 9 for n in names]

    context = RankContext(open_file, policy, frozenset({"/ws/a/y.py"}), mentions, hints)
    ranked = list(enumerate(pool))
    parsed = Query.parse(query)
    assert _order(parsed, ranked, limit, context) == _reference_order(
        parsed, ranked, limit, context
    )


def test_later_definition_first_where_it_rebinds_the_name() -> None:
    # Python: the second `def` is the live one (an implementation after its
    # `@overload` stubs).
    stub = sym("parse", "app/x.py", line=3)
    live = sym("parse", "app/x.py", line=9)
    assert rerank("parse", [stub, live], 2) == [live, stub]


def test_first_overload_first_where_definitions_do_not_rebind() -> None:
    # TypeScript: the signatures before the implementation are one function;
    # its first signature is where the language service goes.
    first = sym("filter", "src/filter.ts", line=5, language="typescript")
    implementation = sym("filter", "src/filter.ts", line=60, language="typescript")
    assert rerank("filter", [implementation, first], 2) == [first, implementation]
    seed_order = RankContext(policy=POLICIES["+members of the open file's classes first"])
    assert rerank("filter", [first, implementation], 2, seed_order) == [implementation, first]


DEPS = "/ws/.venv/lib/python3.12/site-packages"


def test_dependency_ranks_after_the_workspace_of_the_same_name_shape() -> None:
    # The dependency's row has the query's word in its path, so it comes
    # first when nothing says it is a dependency's.
    ours = sym("parse", "app/main.py", root=ROOT)
    theirs = sym("parse", "parse/__init__.py", root=DEPS)
    context = RankContext(dependencies=frozenset({DEPS}))
    assert rerank_groups("parse", [[ours], [theirs]], 10) == [theirs, ours]
    assert rerank_groups("parse", [[ours], [theirs]], 10, context) == [ours, theirs]
    assert rerank_groups("parse", [[theirs], [ours]], 10, context) == [ours, theirs]


def test_a_better_shaped_dependency_match_still_ranks_first() -> None:
    ours = sym("parse_options_later", "app/main.py", root=ROOT)
    theirs = sym("parse", "parse/__init__.py", root=DEPS)
    context = RankContext(dependencies=frozenset({DEPS}))
    assert rerank_groups("parse", [[ours], [theirs]], 10, context) == [theirs, ours]


def test_sort_key_names_every_position_of_the_raw_key() -> None:
    assert tuple(get_type_hints(SortKey).values()) == get_args(RawSortKey)
    assert len(SortKey._fields) == len(set(SortKey._fields)) == len(get_args(RawSortKey))


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=0, max_value=10_000),
    st.sampled_from(["reg", "rb", "pool.get", "x", "", "a get"]),
    st.sampled_from([None, "/ws/a/b/x.py", "/ws/c/tests/test_x.py"]),
)
def test_recorded_keys_are_the_keys_the_order_sorted_by(
    seed: int, query: str, open_file: str | None
) -> None:
    """The keys an explanation shows are each row's own sort key: equal to
    the key computed from scratch, and in ascending order down the answer."""
    rng = random.Random(seed)
    pool = [
        sym(
            rng.choice(["register", "get", "x", "Register"]),
            rng.choice(["a/y.py", "c/d/z.py"]),
            root=rng.choice([ROOT, DEPS]),
        )
        for _ in range(rng.randint(0, 30))
    ]
    context = RankContext(open_file, dependencies=frozenset({DEPS}))
    parsed = Query.parse(query)
    keys: dict[int, ExplainedKey] = {}
    found = _rerank_groups(parsed, [pool], len(pool), context, keys)
    assert set(keys) == {id(s) for s in pool}
    shown = [keys[id(s)] for s in found]
    assert shown == sorted(shown)
    for key, symbol in zip(shown, found, strict=True):
        if parsed.empty:
            assert isinstance(key, EmptyQueryKey)
        else:
            assert isinstance(key, SortKey)
            rank = next(i for i, s in enumerate(pool) if s is symbol)
            assert tuple(key) == _reference_key(parsed, context, rank, symbol)
        assert [item["key"] for item in key_items(key)] == list(type(key)._fields)
