"""How many files mention a name: extraction, the index's counts, the
cache snapshot, and the rank rule that reads them."""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from nearsym.core.filedefs import FileDefs
from nearsym.core.rank import RankContext, RankPolicy, mention_bucket
from nearsym.extract.definitions import extract_defs
from nearsym.extract.languages import language_for_path
from nearsym.extract.mentions import mention_keys, mentions_of, name_key, name_keys_of
from nearsym.index import mentions as mentions_module
from nearsym.index.build import merge
from nearsym.index.mentions import MentionCounts
from nearsym.index.namespace import Namespace
from nearsym.index.search import answer
from nearsym.index.segment import Segment
from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config
from nearsym.workspace.indexer import index_into

from .helpers import rerank, sym


def keys(*names: str) -> bytes:
    return array("I", sorted({name_key(n) for n in names})).tobytes()


def test_a_files_mentions_are_its_distinct_identifiers_sorted() -> None:
    got = array("I")
    got.frombytes(mention_keys(b"def run(app):\n    app.run(x)  # Config\nrun()\n"))
    assert list(got) == sorted({name_key(n) for n in ("def", "run", "app", "Config")})
    assert name_key("Config") == name_key("Config") != name_key("config")


def test_extraction_sends_the_mentions_with_the_definitions() -> None:
    spec = language_for_path("a.py")
    assert spec is not None
    defs = extract_defs(b"from lib import Config\ndef make():\n    return Config()\n", spec)
    again = FileDefs.decode(defs.encode())
    assert (
        again.mentions
        == defs.mentions
        == keys("from", "lib", "import", "Config", "def", "make", "return")
    )
    with pytest.raises(ValueError):
        FileDefs.decode(replace(defs, mentions=b"abc").encode())


def test_counts_are_files_and_a_replaced_file_counts_once() -> None:
    counts = MentionCounts()
    counts.add("a.py", keys("Config", "run"))
    counts.add("b.py", keys("Config"))
    assert counts.counts(["Config", "run", "absent"]) == [2, 1, 0]
    for _ in range(3):  # an editor saving b.py again and again
        counts.add("b.py", keys("Config", "run"))
    assert counts.counts(["Config", "run"]) == [2, 2]
    counts.remove("a.py")
    assert counts.counts(["Config", "run"]) == [1, 1]
    counts.fold()
    assert counts.counts(["Config", "run"]) == [1, 1]
    counts.add("c.py", keys("run"))
    assert counts.counts(["Config", "run"]) == [1, 2]


def test_lists_fold_into_the_base_past_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mentions_module, "FOLD_KEYS", 3)
    counts = MentionCounts()
    counts.add("a.py", keys("x1", "x2"))
    counts.add("b.py", keys("x2", "x3"))  # four keys held: folded
    assert counts.nbytes == 3 * 6
    assert counts.counts(["x1", "x2", "x3"]) == [1, 2, 1]


def test_prune_keeps_only_definition_names_and_snapshots_round_trip() -> None:
    counts = MentionCounts()
    counts.add("a.py", keys("Config", "print", "run"))
    counts.add("b.py", keys("Config", "print"))
    counts.prune(["Config", "run"])
    assert counts.counts(["Config", "print", "run"]) == [2, 0, 1]
    again = MentionCounts()
    again.install(counts.to_parts())
    assert again.counts(["Config", "run"]) == [2, 1]
    with pytest.raises(ValueError):
        again.install({"mention_keys": keys("a", "b"), "mention_counts": b"\x01\x00"})


def test_prune_waits_until_the_keys_added_since_are_many() -> None:
    counts = MentionCounts()
    for n in range(80):
        counts.add(f"f{n}.py", keys(f"Name{n}", f"word{n}"))
    counts.prune(f"Name{n}" for n in range(80))
    base = counts.to_parts()
    restarted = MentionCounts()
    restarted.add("new.py", keys("Name1", "fresh1", "fresh2"))  # re-parsed before the load
    restarted.install(base)
    read: list[str] = []

    def names() -> Iterator[str]:
        for n in range(80):
            read.append(f"Name{n}")
            yield f"Name{n}"

    restarted.prune(names())  # 2 keys added to 80: not worth reading every name
    assert read == []
    assert restarted.counts(["Name1", "Name2"]) == [2, 1]  # definition names: exact
    for n in range(20):  # 20 more keys: 22 of 102, over an eighth
        restarted.add(f"g{n}.py", keys(f"other{n}"))
    restarted.prune(names())
    assert len(read) == 80
    assert restarted.counts(["fresh1", "other3", "Name1"]) == [0, 0, 2]


def test_a_snapshot_remembers_the_keys_added_since_the_last_prune() -> None:
    counts = MentionCounts()
    for n in range(80):
        counts.add(f"f{n}.py", keys(f"Name{n}"))
    counts.prune(f"Name{n}" for n in range(80))
    counts.add("x.py", keys(*(f"extra{n}" for n in range(6))))
    counts.prune([])  # 6 of 86: skipped
    again = MentionCounts()
    again.install(counts.to_parts())
    again.add("y.py", keys(*(f"more{n}" for n in range(6))))
    again.prune(f"Name{n}" for n in range(80))  # 12 of 92, with the snapshot's 6: pruned
    assert again.counts(["extra1", "more1", "Name5"]) == [0, 0, 1]


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_index_counts_after_a_cold_index_and_through_its_snapshot(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/config.py": "class Config: pass\n",
            "pkg/app.py": "from .config import Config\nConfig()\n",
            "pkg/cli.py": "from .config import Config\n",
            "tests/helpers.py": "class Config: pass\n",
        },
    )
    index = SymbolIndex(str(tmp_path))
    index_into(index, Config())
    assert index.mention_counts(["Config", "import", "nothing"]) == [4, 0, 0]  # pruned
    snapshot = index.snapshot({p: (1, 1) for p in index.files})
    assert snapshot is not None
    loaded = SymbolIndex(str(tmp_path))
    loaded.install(snapshot)
    assert loaded.mention_counts(["Config"]) == [4]
    index.replace_file("pkg/cli.py", FileDefs("python", (), (), b"", array("I")))
    assert index.mention_counts(["Config"]) == [4]  # a folded file stays counted
    index.replace_file("pkg/new.py", FileDefs("python", (), (), b"", array("I"), keys("Config")))
    assert index.mention_counts(["Config"]) == [5]
    index.remove_file("pkg/new.py")
    assert index.mention_counts(["Config"]) == [4]


def test_among_name_ties_the_name_more_files_mention_comes_first() -> None:
    common = sym("Settings", "lib/far/away.py", line=1)
    rare = sym("Setup", "app/setup.py", line=1)
    counts = {"Settings": 40, "Setup": 1, "Config": 1}

    def lookup(root: str, names: object) -> list[int]:
        return [counts[n] for n in names]  # type: ignore[attr-defined]

    policy = RankPolicy(mentions=True)
    ctx = RankContext("/ws/app/main.py", policy, mentions=lookup)
    # `Se` ties Settings and Setup on the name: 40 files beat the closer one.
    assert rerank("Se", [rare, common], 2, ctx) == [common, rare]
    off = RankContext("/ws/app/main.py", replace(policy, mentions=False), mentions=lookup)
    assert rerank("Se", [rare, common], 2, off) == [rare, common]
    assert [mention_bucket(n) for n in (0, 1, 2, 3, 4, 40)] == [0, 1, 2, 2, 3, 6]


def test_search_reads_the_counts_of_each_namespace(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "a/used.py": "def handler(): pass\n",
            "b/lonely.py": "def handles(): pass\n",
            **{f"c/user{i}.py": "from a.used import handler\n" for i in range(5)},
        },
    )
    index = SymbolIndex(str(tmp_path))
    index_into(index, Config())
    ns = [Namespace(str(tmp_path), index)]
    open_file = str(tmp_path / "b" / "other.py")
    on = answer(ns, "hand", 2, open_file, RankPolicy(mentions=True))
    off = answer(ns, "hand", 2, open_file, RankPolicy(mentions=False))
    assert [s.path for s in off] == ["b/lonely.py", "a/used.py"]  # the closer first
    assert [s.path for s in on] == ["a/used.py", "b/lonely.py"]  # six files against one


def test_a_file_added_while_the_final_merge_runs_keeps_its_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mention keys of a cold index are read while its final merge runs
    elsewhere; a file indexed after they were read (an edit during the
    merge) still has its names counted once the counts are pruned."""
    import threading

    from nearsym.index import store as store_module

    monkeypatch.setattr(store_module, "MERGE_ELSEWHERE_ROWS", 0)
    lock = threading.Lock()
    index = SymbolIndex("/ws")
    index.bulk = True
    for n in range(4):
        rows = [sym(f"name{n}_{i}", f"f{n}.py", i) for i in range(3)]
        defs = replace(FileDefs.from_symbols("python", rows), mentions=keys(f"name{n}_0", "noise"))
        index.replace_files([(f"f{n}.py", defs)])
    names_read = threading.Event()
    real_keys = store_module.name_keys

    def reading(names: Iterator[str]) -> object:
        out = real_keys(names)
        names_read.set()
        return out

    monkeypatch.setattr(store_module, "name_keys", reading)

    def merger(inputs: store_module.MergeInput) -> tuple[dict[str, bytes], list[str]]:
        assert names_read.wait(10)
        with lock:  # an edit, as the server makes one, after the keys were read
            late = FileDefs.from_symbols("python", [sym("late_name", "late.py", 0)])
            index.replace_files([("late.py", replace(late, mentions=keys("late_name")))])
        flat: list[str] = []
        segments = []
        for parts, paths in inputs:
            segments.append(
                Segment.from_parts(parts, list(range(len(flat), len(flat) + len(paths))))
            )
            flat.extend(paths)
        merged = merge(segments, flat)
        return merged.to_bytes(merged.alive), [flat[f] for f in merged.file_ids.tolist()]

    index.merger = merger
    index.compact(lock)
    assert index.mention_counts(["late_name", "name1_0", "noise"]) == [1, 1, 0]
    assert len(index.segments) == 2


def test_a_task_of_files_scanned_at_once_gives_each_file_its_own_keys() -> None:
    sources = [
        b"alpha beta",
        b"",
        b"beta gamma_delta_epsilon_zeta alpha",  # 26 bytes: four chunks
        b"x",
        b"eightchr ninechars sixteen_chars_x seventeen_chars_x",
    ]
    assert mentions_of(sources) == [mention_keys(s) for s in sources]
    assert mentions_of([]) == []
    # no token runs from one file into the next
    assert name_key("betabeta") not in array("I", b"".join(mentions_of([b"beta", b"beta"])))


def test_a_names_key_is_its_tokens_at_every_length_and_place() -> None:
    names = ["ab", "abcdefg", "abcdefgh", "abcdefghi", "x" * 16, "x" * 17, "y" * 40, "_$a9"]
    text = " ".join(names).encode() + b"\n" + "+".join(reversed(names)).encode()
    got = array("I")
    got.frombytes(mention_keys(text))
    assert list(got) == sorted({name_key(n) for n in names})
    assert len(set(name_keys_of(names).tolist())) == len(names)
    assert name_keys_of(names).tolist() == [name_key(n) for n in names]


def test_numbers_and_non_identifier_bytes_are_not_mentions() -> None:
    got = array("I")
    got.frombytes(mention_keys("0x1f 10UL 3rd a1 naïve $x".encode()))
    assert list(got) == sorted({name_key(n) for n in ("a1", "na", "ve", "$x")})


def test_a_run_no_one_would_type_is_not_a_mention() -> None:
    long = "a" * 100_000
    got = array("I")
    got.frombytes(mention_keys(f"short {long} other".encode()))
    assert list(got) == sorted({name_key("short"), name_key("other")})
