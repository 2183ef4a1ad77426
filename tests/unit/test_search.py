"""Retrieval and the search entry point on a real index."""

from __future__ import annotations

import functools
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from nearsym.core.rank import WorkspaceHints, pool_width
from nearsym.core.sortkey import SortKey
from nearsym.index.namespace import Namespace
from nearsym.index.search import STABLE_LIMIT, ranked_pool, search
from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config
from nearsym.workspace.indexer import index_into

from .helpers import sym

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "polyglot"


def make_index(names: list[str], root: str = "/ws") -> SymbolIndex:
    index = SymbolIndex(root)
    for i, name in enumerate(names):
        index.replace_file(f"f{i % 7}/m{i}.py", [sym(name, f"f{i % 7}/m{i}.py", root=root)])
    return index


def test_pool_tiers_exact_initials_prefix_substring_subsequence() -> None:
    index = make_index(
        ["xparsey", "parse", "parser", "p_a_r_s_e", "unrelated", "pa_rse", "p_a_r_s_e_d"]
    )
    assert [s.name for s in index.candidates("parse", 50)] == [
        "parse",
        "p_a_r_s_e",  # its initials are the query
        "parser",  # it starts with the query
        "p_a_r_s_e_d",  # its initials start with the query
        "xparsey",  # it holds the query
        "pa_rse",  # it holds the query in order
    ]


def test_initials_reach_the_pool_past_a_full_prefix_tier() -> None:
    # 600 names start with `ce`; the one whose initials are `ce` is still in
    # the narrowest pool.
    index = make_index([f"ce{i:03d}" for i in range(600)] + ["ConfigError"])
    assert "ConfigError" in [s.name for s in index.candidates("CE", 50)]
    assert "ConfigError" not in [s.name for s in index.candidates("ce9", 50)]


def test_names_the_open_file_mentions_reach_the_pool_past_a_full_prefix_tier() -> None:
    # 600 shorter names start with `get`; the one the open file calls is
    # still in the narrowest pool, right after the exact names.
    names = [f"get{i:03d}" for i in range(600)] + ["getRawHeaders", "get"]
    index = make_index(names)
    mentioned = frozenset({"getRawHeaders", "headers", "GET_X"})
    assert "getRawHeaders" not in [s.name for s in index.candidates("get", 50)]
    pool = [s.name for s in index.candidates("get", 50, mentioned=mentioned)]
    assert pool[:2] == ["get", "getRawHeaders"]
    assert len(pool) == 50
    # A name the query does not start is not pulled in.
    assert "headers" not in pool


def test_a_narrower_pool_is_a_prefix_of_a_wider_one_with_mentioned_names() -> None:
    names = [f"get{i:03d}" for i in range(300)] + [f"getLong{i:03d}Name" for i in range(100)]
    index = make_index(names)
    mentioned = frozenset(f"getLong{i:03d}Name" for i in range(0, 100, 2))
    wide = index.candidates("get", 500, mentioned=mentioned)
    for width in (50, 100, 250):
        assert index.candidates("get", width, mentioned=mentioned) == wide[:width], width


def test_exact_matches_are_never_cut_by_the_width() -> None:
    index = make_index(["run"] * 80 + ["runner"] * 10)
    pool = index.candidates("run", 50)
    assert sum(s.name == "run" for s in pool) == 80


def test_pool_holds_every_subsequence_match_up_to_width() -> None:
    names = [f"name{i}" for i in range(30)] + ["other"]
    pool = make_index(names).candidates("nm", 500)
    assert sorted(s.name for s in pool) == sorted(names[:30])


def test_owner_query_reaches_methods() -> None:
    index = SymbolIndex("/ws")
    index.replace_file(
        "q.py", [sym("SyncQueue", "q.py"), sym("push", "q.py", container="SyncQueue", line=2)]
    )
    assert [s.qualified_name for s in index.candidates("SyncQueue", 50)] == [
        "SyncQueue",
        "SyncQueue.push",
    ]
    assert [s.qualified_name for s in index.candidates("SyncQueue.push", 50)] == ["SyncQueue.push"]


def test_owners_reached_in_batches_give_each_owner_whole_in_path_order() -> None:
    # Names alone match nothing: the pool is the owner tier's, built a
    # batch of owners at a time, cut at the width.
    index = SymbolIndex("/ws")
    owners = [f"Widget{n}Box" for n in range(70)]
    for n, owner in enumerate(owners):
        for half in ("b", "a"):
            path = f"{half}/w{n}.py"
            index.replace_file(
                path,
                [
                    sym(name, path, container=owner, line=line)
                    for line, name in ((9, "tick"), (3, "halt"))
                ],
            )
    by_key = sorted(owners, key=lambda o: (len(o), o.lower()))
    expected = [
        (o, path, line)
        for o in by_key
        for path, line in ((f"a/w{owners.index(o)}.py", 3), (f"a/w{owners.index(o)}.py", 9),
                           (f"b/w{owners.index(o)}.py", 3), (f"b/w{owners.index(o)}.py", 9))
    ]  # fmt: skip
    widest = [(s.container, s.path, s.span.line) for s in index.candidates("wdgtbx", 500)]
    assert widest == expected
    for width in (1, 3, 4, 17, 64, 130, 279):
        pool = [(s.container, s.path, s.span.line) for s in index.candidates("wdgtbx", width)]
        assert pool == widest[:width]


def test_replace_and_remove_keep_no_stale_names() -> None:
    index = make_index(["alpha", "beta"])
    index.replace_file("f0/m0.py", [sym("gamma", "f0/m0.py")])
    index.remove_file("f1/m1.py")
    assert [s.name for s in index.candidates("a", 50)] == ["gamma"]
    assert index.candidates("alpha", 50) == []


@functools.cache
def _paging_namespaces() -> list[Namespace]:
    """Two namespaces of 480 short names each, built once (read only)."""
    names = [f"{a}{b}{c}" for a in "pqr" for b in "aeiou" for c in "stuvwxyz"] * 4
    return [Namespace("/ws", make_index(names)), Namespace("/other", make_index(names, "/other"))]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=1, max_value=120),
    st.lists(st.integers(min_value=0, max_value=600), min_size=2, max_size=5),
    st.sampled_from(["pa", "a", "", "rex"]),
)
def test_later_pages_never_reshuffle_earlier_ones(
    limit: int, offsets: list[int], query: str
) -> None:
    ns = _paging_namespaces()
    open_file = "/ws/f3/m3.py"
    pools = [
        ranked_pool(ns, query, limit, pool_width(o, limit), open_file) for o in sorted(offsets)
    ]
    for narrow, wide in itertools.pairwise(pools):
        assert wide[: len(narrow)] == narrow
    ranking = max(limit, STABLE_LIMIT)  # what `search` ranks for a page of `limit`
    widest = ranked_pool(ns, query, ranking, pool_width(max(offsets), ranking), open_file)
    for o in offsets:
        page = search(ns, query, limit, o, open_file)
        assert page == widest[o : o + limit] or o + limit > len(widest)


def test_search_fixture_and_gone_files(tmp_path: Path) -> None:
    index = SymbolIndex(str(FIXTURE))
    index_into(index, Config())
    ns = [Namespace(str(FIXTURE), index)]
    assert search(ns, "lu", 1)[0].name == "load_users"
    assert search(ns, "ApiClient.fetchUser", 5)[0].name == "fetchUser"
    assert search(ns, "Blueprint.fetchUser", 5) == []


def test_cli_finds_rank_rerank_groups_first_in_this_checkout() -> None:
    run = [sys.executable, "-m", "nearsym", "search", "rerank_groups", "--root", str(REPO)]
    out = subprocess.run(
        [*run, "--limit", "3"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert "server/nearsym/core/rank.py:" in out[0] and out[0].endswith("function  rerank_groups")


def test_cli_output_cut_short_by_its_reader_is_not_an_error() -> None:
    """`nearsym search x | head -1`: the pipe closes after one line, and
    the command ends quietly instead of with a BrokenPipeError traceback.
    The output (about 90 KB of JSON here) is more than the pipe and the
    stdout buffer hold together, so the command is still writing then."""
    run = [sys.executable, "-m", "nearsym", "search", "e", "--root", str(REPO)]
    run += ["--limit", "500", "--json"]
    search_cli = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert search_cli.stdout is not None and search_cli.stderr is not None
    first = search_cli.stdout.readline()
    search_cli.stdout.close()  # the reader leaves, as `head -1` does
    err = search_cli.stderr.read().decode()
    assert search_cli.wait(timeout=60) == 0
    assert first.strip() and "Traceback" not in err and "BrokenPipe" not in err


def test_cli_json_and_explain() -> None:
    run = [sys.executable, "-m", "nearsym", "search", "register", "--root", str(FIXTURE)]
    out = subprocess.run(
        [*run, "--from", str(FIXTURE / "beta" / "registry.py"), "--explain"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.splitlines()[0].endswith("beta/registry.py:4:5  function  register")
    assert "closeness 0.900" in out or "closeness 1.000" in out

    data = json.loads(
        subprocess.run([*run, "--json"], capture_output=True, text=True, check=True).stdout
    )
    assert {d["name"] for d in data} >= {"register", "unregister"}


def test_cli_explain_prints_and_keeps_every_sort_key() -> None:
    run = [sys.executable, "-m", "nearsym", "search", "register", "--root", str(FIXTURE)]
    out = subprocess.run(
        [*run, "--explain", "--limit", "2"], capture_output=True, text=True, check=True
    ).stdout
    numbered = [m.group(1) for m in re.finditer(r"^ +\d+ (\w+) ", out, re.MULTILINE)]
    assert numbered == 2 * list(SortKey._fields)
    data = json.loads(
        subprocess.run(
            [*run, "--json", "--explain"], capture_output=True, text=True, check=True
        ).stdout
    )
    assert data and all([k["key"] for k in d["keys"]] == list(SortKey._fields) for d in data)
    assert all(d["explain"].startswith(d["name"]) for d in data)
    keys = [tuple(k["value"] for k in d["keys"]) for d in data]
    assert keys == sorted(keys)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_any_query_string_answers_without_error(query: str) -> None:
    index = SymbolIndex(str(FIXTURE))
    index.replace_file("a.py", [sym("register", "a.py"), sym("push", "a.py", container="Q")])
    results = search([Namespace(str(FIXTURE), index)], query, 10, 0, str(FIXTURE / "a.py"))
    assert len(results) <= 10


_WORDS = ["get", "set", "http", "request", "config", "error", "build", "env", "client", "async"]


def _generated_workspace(seed: int) -> list[Namespace]:
    """A few hundred definitions named from a small vocabulary (so that a
    short query has far more candidates than the narrowest pool), in nested
    folders, some of them methods."""
    import random

    rng = random.Random(seed)
    index = SymbolIndex("/ws")
    for f in range(40):
        path = f"{rng.choice(['a', 'b', 'c'])}/{rng.choice(['x', 'y'])}/m{f}.py"
        rows = []
        for line in range(rng.randint(5, 15)):
            words = rng.sample(_WORDS, rng.randint(1, 3))
            name = rng.choice(
                [
                    "_".join(words),
                    "".join(w.title() for w in words),
                    words[0] + "".join(w.title() for w in words[1:]),
                ]
            )
            container = rng.choice(["", "", "Client", "BuildEnvironment"])
            rows.append(sym(name, path, container=container, line=line))
        index.replace_file(path, rows)
    return [Namespace("/ws", index)]


@settings(max_examples=30, deadline=None)
@given(
    st.integers(min_value=0, max_value=3),
    st.sampled_from(["g", "ge", "ce", "BE", "hr", "get", "conf", "er", "se", "ac", "reqerr"]),
    st.sampled_from([None, "/ws/a/x/m1.py", "/ws/c/y/m7.py"]),
)
def test_the_best_answers_do_not_depend_on_the_result_limit(
    seed: int, query: str, open_file: str | None
) -> None:
    """The first k answers at limit k are the first k at any larger limit:
    an editor's maxResults never changes which definition is best."""
    ns = _generated_workspace(seed)
    hints = WorkspaceHints(mentioned=frozenset({"getConfig", "http_request_error", "seterror"}))
    widest = search(ns, query, 100, 0, open_file, hints=hints)
    for k in (1, 10, 20):
        assert search(ns, query, k, 0, open_file, hints=hints) == widest[:k], k
