"""Queries that name where a definition is, not only what it is called.

Design note
-----------
A query of several parts (`flask.Flask`, `click.core.Command`, `sansio/app
Flask`, `python PythonDomain`, `Flask.route`; see `query`) has a name part,
its last, and where-parts before it. A definition is *located* by them when
each where-part, in order, is found among the definition's places
(`places`), outermost first:

- the folders of its file: a Go package is its folder, a Java package its
  folders;
- the file's name, cut on dots (`app`, `py`): with the folders, a Python
  dotted module (`flask.sansio.app`), a TS/JS file path
  (`src/internal/Subject`), a Rust module (`mod.rs` is named by its
  folder, which is already there);
- its container chain (`Outer.Inner`).

A where-part finds a place that starts with it, case aside (`sphinx.app
Sphinx` finds `sphinx/application.py`): module and folder names are typed
whole or cut short, rarely scattered. The owner of a qualified query
may also name a class that inherits the definition's container
(`Flask.route` finds `Scaffold.route` when `Flask` derives from
`Scaffold`): the index resolves the owner's base classes once per query
(`index.where`) into `Query.inherited`.

Two readings come of it (`WhereReading`), each taken only where it beats
the definition's own name score (`match`):

- *inherited*: a qualified query read as if the container were the owner
  typed (`Flask.route` against `Flask.route` for `Scaffold.route`), capped
  at `INHERITED_CAP`, below a member the owner defines itself;
- *where*: the name part alone against the name, scaled into
  (0, `WHERE_CAP`], below every reading of the whole text: the text as
  typed is the stronger evidence (`search document` still finds
  `search_document` before a `document` in `search.py`), and among located
  definitions the name part decides first, then the seed's path evidence
  (query words that are path segments), then the rest of the order. A
  definition that only some where-parts locate comes after those all of
  them locate (`PARTLY_CAP`): a where-part may be wrong (`sansio/app
  Flask`; `Flask` is in `app.py`) without emptying the answer.

Deliberately not handled: scattered or misspelled where-parts (a
subsequence admits nearly every definition of a large tree), and imports:
a module is named by its file, not by what re-exports it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

from nearsym.core.match import (
    EXACT_IGNORING_CASE_SCORE,
    NON_EXACT_FLOOR,
    NameEvidence,
    NameMatcher,
    name_evidence,
)
from nearsym.core.model import Symbol
from nearsym.core.query import Query
from nearsym.core.words import is_subsequence

INHERITED_CAP = EXACT_IGNORING_CASE_SCORE
"""An inherited member named exactly scores as an exact name whose case
differs: below the owner's own member of that name (1.0), above every
non-exact name."""
WHERE_CAP = NON_EXACT_FLOOR
"""The where reading is the name part's score times this: below the lowest
score of any reading of the whole text (`NON_EXACT_FLOOR`), so it only
orders the definitions the whole text does not reach."""
PARTLY_CAP = WHERE_CAP * NON_EXACT_FLOOR
"""A definition that only some of the where-parts locate (`sansio/app Flask`
when no `Flask` is in `sansio/app`, but one is in `app.py`) scores the name
part times this: after every definition that all of them locate, by the
same derivation as `WHERE_CAP`."""

_Scores = tuple[float, float, str]
"""(score, shape, qualified name), as the rerank keeps them per name."""


@lru_cache(maxsize=8192)
def places(path: str, container: str) -> tuple[str, ...]:
    """A definition's places, lower-cased, outermost first (see the module
    note): `src/flask/app.py`, `Flask` -> src, flask, app, py, flask."""
    *folders, file = path.lower().split("/")
    chain = container.lower().split(".") if container else []
    return (*folders, *(p for p in file.split(".") if p), *chain)


@lru_cache(maxsize=8192)
def located(where: tuple[str, ...], path: str, container: str) -> int:
    """How many where-parts start a place of the definition, in order (the
    most that can: a part may be skipped): `len(where)` when all do."""
    found = places(path, container)
    prev = [0] * (len(found) + 1)
    for part in where:
        cur = [0] * (len(found) + 1)
        for j, place in enumerate(found, 1):
            cur[j] = max(cur[j - 1], prev[j], prev[j - 1] + place.startswith(part))
        prev = cur
    return prev[-1]


def inherits(query: Query, container: str) -> bool:
    """Whether `container` is a base class of the class the query's owner
    names (`Query.inherited`)."""
    return bool(query.inherited) and container.rpartition(".")[2].lower() in query.inherited


class WhereReading:
    """The inherited and where readings of one query (see the module note),
    applied to scores the rerank already has."""

    def __init__(self, query: Query, smart_case: bool = True, tail_late: bool = True) -> None:
        self.query = query
        self.tail_late = tail_late
        self.owner = query.target.rpartition(".")[0] if query.qualified else ""
        self.qualified = NameMatcher(query, smart_case)
        self.part = NameMatcher(Query.parse(query.name), smart_case)

    def prime(self, pool: Iterable[Symbol]) -> None:
        """Score the name part against the names of the pool's located
        definitions at once (`better` then reads them)."""
        pool = list(pool)
        if self.owner and self.query.inherited:
            owner = self.owner
            self.qualified.prime((s.name, owner) for s in pool if inherits(self.query, s.container))
        where = self.query.where
        if where:
            named = name_evidence(self.query)  # rows it names score above any where reading
            self.part.prime(
                (s.name, "")
                for s in pool
                if not named(s.name, s.container) and located(where, s.path, s.container)
            )

    def better(self, symbol: Symbol, scores: _Scores) -> _Scores:
        """`scores` (score, shape, qualified name) of `symbol`, raised to a
        reading of this module where one beats them."""
        score, shape, label = scores
        for got_score, got_shape in self._readings(symbol, shape):
            if not self.tail_late:
                got_shape = got_score
            if got_shape > shape or (got_shape == shape and got_score > score):
                score, shape = got_score, got_shape
        return score, shape, label

    def explain(self, symbol: Symbol, own: NameEvidence) -> NameEvidence:
        """`own` (the name score's evidence), or the reading that beats it."""
        query = self.query
        best = own
        if self.owner and inherits(query, symbol.container):
            score, shape = self._inherited(symbol.name)
            if (shape, score) > (best.shape, best.score):
                reading = f"inherited by {self.owner}"
                best = NameEvidence(score, shape, reading, f"{self.owner}.{symbol.name}")
        found = located(query.where, symbol.path, symbol.container)
        if found:
            score, shape = self._where(symbol.name, found)
            if (shape, score) > (best.shape, best.score):
                reading = f"where: {found} of {' '.join(query.where)} (scaled)"
                best = NameEvidence(score, shape, reading, symbol.name)
        return best

    def _readings(self, symbol: Symbol, shape: float = 0.0) -> list[tuple[float, float]]:
        out = []
        if self.owner and inherits(self.query, symbol.container):
            out.append(self._inherited(symbol.name))
        if shape >= WHERE_CAP:  # a reading of the whole text: the where reading is below it
            return out
        found = located(self.query.where, symbol.path, symbol.container)
        if found:
            out.append(self._where(symbol.name, found))
        return out

    def _inherited(self, name: str) -> tuple[float, float]:
        score, shape = self.qualified.both(name, self.owner)
        return min(score, INHERITED_CAP), min(shape, INHERITED_CAP)

    def _where(self, name: str, found: int) -> tuple[float, float]:
        score, shape = self.part.both(name, "")
        cap = WHERE_CAP if found == len(self.query.where) else PARTLY_CAP
        return cap * score, cap * shape


def where_reading(
    query: Query, smart_case: bool = True, tail_late: bool = True, pool: Iterable[Symbol] = ()
) -> WhereReading | None:
    """The readings of this module for `query`, or None when it has neither
    where-parts nor an owner with base classes. `tail_late=False` compares
    scores with the tail penalty throughout (the seed's order); `pool` is
    scored at once (`WhereReading.prime`)."""
    if not query.where and not query.inherited:
        return None
    reading = WhereReading(query, smart_case, tail_late)
    reading.prime(pool)
    return reading


def evidence(query: Query) -> Callable[[Symbol], bool]:
    """Whether a definition may answer `query` at all: the modifiers accept
    it (`Query.accepts`), and some reading scores it above 0 (its name,
    `match.name_evidence`; an owner that inherits its container, with the
    member in its name in order; or where-parts that locate it, with the
    name part in its name in order)."""
    named = name_evidence(query)
    part = query.name.lower()
    owner = bool(query.qualified and query.inherited)

    def admits(s: Symbol) -> bool:
        if query.filtered and not query.accepts(s.name, s.kind):
            return False
        if named(s.name, s.container):
            return True
        low = s.name.lower()
        if owner and inherits(query, s.container) and is_subsequence(query.member, low):
            return True
        return (
            bool(query.where)
            and is_subsequence(part, low)
            and located(query.where, s.path, s.container) > 0
        )

    return admits


def clear_caches() -> None:
    """Forget memoised places (benchmarks measure each pass cold)."""
    places.cache_clear()
    located.cache_clear()
