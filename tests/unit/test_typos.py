"""Typos: the one-edit test, its variants, and the fallback in search."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nearsym.core.query import Query
from nearsym.core.rank import explain
from nearsym.core.typos import one_edit, variants
from nearsym.index.namespace import Namespace
from nearsym.index.search import search
from nearsym.index.store import SymbolIndex

from .helpers import sym


def damerau_at_most_one(a: str, b: str) -> bool:
    """The slow definition: some single slip turns `a` into `b`."""
    if a == b:
        return False
    slips = set()
    for i in range(len(a) + 1):
        for c in set(a + b):
            slips.add(a[:i] + c + a[i:])
            if i < len(a):
                slips.add(a[:i] + c + a[i + 1 :])
        if i < len(a):
            slips.add(a[:i] + a[i + 1 :])
        if i + 1 < len(a):
            slips.add(a[:i] + a[i + 1] + a[i] + a[i + 2 :])
    return b in slips


@given(st.text("abc_", max_size=6), st.text("abc_", max_size=6))
def test_one_edit_is_damerau_distance_one(a: str, b: str) -> None:
    assert one_edit(a, b) == damerau_at_most_one(a, b)


def test_variants_hold_each_slip_once() -> None:
    found = list(variants("sphnix"))
    assert len(found) == len(set(found))
    assert "sphinx" in found  # transposition
    assert "sphix" in found  # deletion
    assert all(one_edit("sphnix", v) for v in found)


def _namespace() -> list[Namespace]:
    index = SymbolIndex("/ws")
    index.replace_file(
        "app.py",
        [
            sym("Flask", "app.py"),
            sym("AsyncClient", "app.py", line=3),
            sym("flake_slots", "app.py", line=5),
        ],
    )
    return [Namespace("/ws", index)]


def test_a_typo_finds_the_name_after_every_true_match() -> None:
    ns = _namespace()
    assert [s.name for s in search(ns, "AsyncCleint", 10)] == ["AsyncClient"]
    # `flaks` is a subsequence of `flake_slots`: that true match comes first.
    assert [s.name for s in search(ns, "Flaks", 10)] == ["flake_slots", "Flask"]
    assert search(ns, "Fla", 10)[0].name == "Flask"  # no typo reading under 4 letters
    assert search(ns, "Qwerty", 10) == []


def test_explain_names_the_typo_reading() -> None:
    ns = _namespace()
    found = search(ns, "AsyncCleint", 10)[0]
    assert "typo (one edit)" in explain(Query.parse("AsyncCleint"), found)


def test_no_typos_beside_the_name_typed() -> None:
    index = SymbolIndex("/ws")
    index.replace_file("a.py", [sym("entry_29", "a.py"), sym("entry_299", "a.py", line=2)])
    assert [s.name for s in search([Namespace("/ws", index)], "entry_299", 10)] == ["entry_299"]
