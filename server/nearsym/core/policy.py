"""Rank policies: which evidence the order uses, one switch per measured
change, and the rows `nearsym eval` measures (`POLICIES`), each adding one
change to the row before, from the seed's order to the server's.

The order itself is `rank`'s; this module only names what it may read.
Pure values, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class RankPolicy:
    """Which evidence the order uses, so that each change to the rank rules
    can be measured against the seed's order on the same cases
    (`nearsym eval --policy`)."""

    closeness: bool = True
    """Break name ties by closeness to the open file (after query words in
    the path). The seed has no open file: False reproduces its order."""
    test_prior: bool = True
    """Among name ties, definitions in test code (tests/ folders, test_*.py,
    *_test.go, *.spec.ts, conftest.py) come after the rest, unless they are
    in the open file itself: people jump to the code under test far more
    often than to a test's helper of the same name."""
    tail_late: bool = True
    """Compare names by the shape of the match first (where the typed
    characters land), and only after the location evidence by length: so a
    short prefix does not bury the nearby `make_response` under a far,
    shorter `make_app`."""
    last_definition_first: bool = True
    """Among same-named definitions of one owner in one file, the later one
    first: in Python the last binding is the live one (a property's setter
    after its getter, an implementation after its `@overload` stubs)."""
    rebinding_only: bool = True
    """`last_definition_first` only in the languages where a later
    definition rebinds the name (`REBINDING_LANGUAGES`); elsewhere the
    same-named definitions of one owner in one file are overloads or
    clauses of one thing, and the first comes first (TypeScript's first
    overload signature, where its language service and its documentation
    go; not the implementation after them). Measured (`nearsym eval`, the
    whole policy with and without it): TSDEV MRR 0.789 -> 0.827, its
    qualified queries 0.971 -> 1.000; the Python sets unchanged."""
    local_prior: bool = True
    """Among name ties, definitions local to a function (closures, a test's
    helper classes) come after the rest: outside their function nobody can
    call them by that name."""
    kind_prior: bool = True
    """Among name ties, types and callables come before variables, fields
    and constants: a jump to a name is usually a jump to code."""
    imports: bool = True
    """Among name ties, definitions in files the open file imports (two
    steps, through re-exports) come first: see `relations`."""
    smart_case: bool = True
    """A capital in the query asks for that case (`match.CASE_MISMATCH`)."""
    case_in_exact: bool = True
    """Smart case holds for names equal to the query but for case too: with
    a capital typed they are aligned like any other name instead of scoring
    as an exact match (`Float` finds `FloatRange` before `FLOAT`, `Query`
    the class `QueryParams` before the method `URL.query`). Measured (its
    row against the one before, `nearsym eval --no-keystrokes`): MRR +0.003
    on DEV, +0.013 on DEVLARGE, +0.005 on TSDEV, +0.011 on DEVLARGE's
    neighbour cases."""
    members: bool = True
    """Right after the name: members of the classes the open file defines
    or imports, and of their base classes (`WorkspaceHints.members`), come
    first. Measured (its row against the one before): MRR +0.018 on DEV,
    +0.020 on DEVLARGE, +0.031 on TSDEV, +0.002 on DEVLARGE's neighbour
    cases."""
    receivers: bool = True
    """Right after the open file's classes' members: a member the open
    file reaches through a variable named after its class first
    (`response.aread()` -> `Response.aread`, `this.#queryCache.build(...)`
    -> `QueryCache.build`; the whole class name before the last words of
    it: `client` is `Client` before `AsyncClient`),
    `WorkspaceHints.receiver_grade`. People name a variable after its
    type; a name is what the index knows without inferring types. Measured
    (its row against the one before): MRR +0.035 on DEV, +0.011 on
    DEVLARGE, +0.011 on TSDEV, +0.000 on DEVLARGE's neighbour cases (whose
    open files do not mention the name: little to read there). Placed
    before the members instead: DEV 0.871, DEVLARGE 0.799, TSDEV 0.835
    (0.866 / 0.805 / 0.840 after them); whole class names only: 0.860 /
    0.798 / 0.841 (the whole policy, `nearsym eval`)."""
    open_mentions: bool = True
    """Among name ties, after the kind (and before how many files mention
    a name): the names the open file's text mentions first
    (`WorkspaceHints.mentioned`). A person often types a name they see:
    a prefix (`add`) then means the `add_object_type` their file calls.
    The golden sets were made from such uses, so this row is read against
    the neighbour cases, whose open file does not mention the name.
    Measured (its row against the one before): MRR +0.019 on DEV, +0.032
    on DEVLARGE, +0.032 on TSDEV, -0.002 on DEVLARGE's neighbour cases
    (the whole policy: 282 golden cases better and none worse, 8
    neighbour cases worse and none better, 3 of them from first place).
    Placed right after the receivers instead, it gained more there (whole
    policy: DEV 0.886, DEVLARGE 0.847, TSDEV 0.875) and cost the
    neighbours 0.004 (0.696), so it waits for the other evidence."""
    open_mentions_pool: bool = True
    """Retrieval: the names the open file mentions that the query starts
    enter the pool right after the exact names (`retrieval.MENTIONED_FIRST`
    rows), before a short prefix's own tier, cut by name length, fills it:
    `get` in twisted starts thousands of names, and `getRawHeaders`, which
    the open file calls, was not in the 500 rows ranked. Measured
    (`nearsym eval`, the whole policy with and without it): DEVLARGE's
    targets missing from the first 100 answers, other than initials, 5 ->
    3 of 988 (0.51% -> 0.30%; two `get` cases from absent to 20th), MRR
    0.8370 -> 0.8359 (three cases 1 -> 3, 1 -> 3, 20 -> 21: better-named
    rows the length cut had left out now rank ahead); DEV, TSDEV and
    DEVLARGE's neighbour cases unchanged."""
    exported: bool = False
    """Among name ties, after the kind: names a package re-exports (a
    Python `__init__.py`, a TS/JS `index` file, a Rust `mod.rs`/`lib.rs`)
    come first, in the file they are defined in
    (`WorkspaceHints.exported`). Off: measured (its row against the one
    before) MRR +0.003 on DEV but -0.004 on DEVLARGE, -0.006 on TSDEV and
    -0.002 on DEVLARGE's neighbour cases."""
    mentions: bool = True
    """Among name ties, before closeness: names more files of the
    workspace mention first, by `mention_bucket` (log-quantised, so that
    closeness still decides between names about as common). Measured
    (`nearsym eval`, its row against the one before): MRR +0.018 on the
    DEV set, +0.013 on DEVLARGE, +0.007 on TSDEV, +0.031 on the DEVLARGE
    cases whose open file is a neighbour that does not mention the name."""
    same_file_first: bool = False
    """The open file's own definitions are the closest of all. False treats
    them as the same folder's: the person can already see them, and a
    same-named definition there is often a wrapper of the one wanted
    (`helpers.url_for` calling `App.url_for`): measured on the dev set,
    MRR 0.693 with the open file first, 0.704 without."""


SEED_POLICY = RankPolicy(
    closeness=False,
    test_prior=False,
    tail_late=False,
    last_definition_first=False,
    rebinding_only=False,
    local_prior=False,
    kind_prior=False,
    smart_case=False,
    case_in_exact=False,
    imports=False,
    members=False,
    exported=False,
    mentions=False,
    receivers=False,
    open_mentions=False,
    open_mentions_pool=False,
    same_file_first=True,
)
"""The seed's order: name, then query words in the path, then identity."""


def _cumulative() -> dict[str, RankPolicy]:
    rows = {"seed": SEED_POLICY, "seed+closeness": replace(SEED_POLICY, closeness=True)}
    policy = SEED_POLICY
    for label, change in [
        ("+last duplicate first", {"last_definition_first": True}),
        ("+tests after", {"test_prior": True}),
        ("+length after location", {"tail_late": True}),
        ("+locals after", {"local_prior": True}),
        ("+code before data", {"kind_prior": True}),
        ("+smart case", {"smart_case": True}),
        ("+imported files first", {"imports": True}),
        ("+mentioned names first", {"mentions": True}),
        ("+members of the open file's classes first", {"members": True}),
        ("+later first only where it rebinds", {"rebinding_only": True}),
        ("+smart case in exact names", {"case_in_exact": True}),
        ("+members reached through a variable named after their class", {"receivers": True}),
        ("+names the open file mentions first", {"open_mentions": True}),
        ("+names the open file mentions in the pool", {"open_mentions_pool": True}),
        ("+re-exported names first", {"exported": True}),
    ]:
        policy = replace(policy, **change)
        rows[label] = policy
    rows["nearsym"] = RankPolicy()
    return rows


POLICIES: dict[str, RankPolicy] = _cumulative()
"""The rows `nearsym eval` measures, each adding one change to the row
before; `nearsym` (all of them, plus closeness to the open file counted at
folder level) is what the server uses."""

REBINDING_LANGUAGES = frozenset({"python", "ruby", "lua", "bash", "javascript"})
"""Languages where a second definition of a name in one scope replaces the
first when the file runs (Python's last `def`, a Ruby method reopened, a
JavaScript function declared twice). In the others two definitions of one
name side by side are overloads (TypeScript, Java, C++, C#, Kotlin, Swift),
clauses (Elixir, Haskell) or a declaration and its definition."""
