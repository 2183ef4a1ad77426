"""Candidate retrieval from the shared index, in SQL.

Design. The local index fills a pool tier by tier (exact name, prefix,
substring, subsequence, then members of matching owners), each tier's names
shortest first; the shared pool is filled the same way, one SQL statement
per tier, each `LIMIT`ed to the rows the pool still lacks, so a query never
reads more than `width` (`fetch_limit`) rows from the database. The rerank
then orders the shared pool as one more group of `rerank_groups`, with the
same columns a local row has (a `Symbol`).

Tiers and the index each one uses (EXPLAIN of each in docs/shared-index.md):

| tier | condition | index |
|---|---|---|
| exact | `name_lower = q` | btree `definition_name` |
| prefix | `name_lower LIKE 'q%'`, in two steps: the first names from the btree alone, then their rows | btree `definition_name` (text_pattern_ops, with the repository: an index-only scan) |
| initials | `initials LIKE 'q%'` (`wsp` -> WorkspaceSymbolParams) | btree `definition_initials` |
| substring | `name_lower LIKE '%q%'` (3+ characters), one branch per range of name lengths, shortest first | partial GIN trigram `definition_name_trgm_*` (`shared.NAME_LENGTHS`) |
| subsequence | `fuzzy @> query's trigrams`, then `name_lower LIKE '%q%u%e%r%y%'` | GIN on the fuzzy trigrams (`shared_columns.fuzzy_trigrams`) |
| path words | the last of several words a prefix of the name, the others in the file's path | btree + GIN trigram `file_path_trgm` |
| owner | `container_lower LIKE '%q%'` (a class's name reaches its members) | GIN trigram `definition_container_trgm` |

A long query (16 characters or more) asks the trigram indexes of the
substring, subsequence and owner tiers for a few pieces of it
(`index_pattern`, `fewer_trigrams`) and checks the whole condition on the
rows they give: a GIN scan's cost grows with the trigrams it is given.

A qualified query (`Container.member`, `pkg::name`) runs the name tiers on
the member with the owner required in the container (`LIKE '%o%w%n%'` on
`container_lower`), rows whose container is the owner itself first, as the
local index does.

Ordering inside a tier: name length, name, then repository, file number
(files are numbered in path order by the publisher), line, column: all
columns of the definition table, so PostgreSQL sorts and cuts before it
joins the file table.

Consistency: the tiers of one query are one statement (`statement`), so
they all read the same snapshot; a re-publish swapping a repository's rows
in meanwhile is seen by all of them or by none.

What it does not do: the empty query (the shared index has no open file to
be near) returns nothing; rows are not deduplicated against the local
index here (the caller drops whole repositories that are open locally).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import psycopg

from nearsym.core.model import Kind, Span, Symbol
from nearsym.core.query import Query
from nearsym.index.shared import NAME_LENGTHS, SCHEMA, length_between
from nearsym.index.shared_columns import query_trigrams

_COLUMNS = (
    "d.name, d.kind, d.container, d.repository_id, d.file_no,"
    " d.line, d.col, d.end_line, d.end_col, d.local, d.deprecated"
)


@dataclass(frozen=True, slots=True)
class Repository:
    """A published repository as the reader sees it."""

    id: int
    name: str
    root_path: str
    commit: str | None


@dataclass(slots=True)
class SharedPool:
    """One query's shared candidates, in retrieval order, with the
    repository each came from (`repositories[i]` for `symbols[i]`)."""

    symbols: list[Symbol]
    repositories: list[Repository]


def like_escape(text: str) -> str:
    """`text` as a literal inside a LIKE pattern (backslash is the escape)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def subsequence_pattern(text: str) -> str:
    """`abc` -> `%a%b%c%`: a LIKE pattern for `text` in order."""
    return "%" + "%".join(like_escape(c) for c in text) + "%"


def prefix_end(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix` in
    byte order (`text_pattern_ops`; UTF-8 keeps code point order): its
    last character's successor, or None when there is none."""
    while prefix:
        code = ord(prefix[-1]) + 1
        if 0xD800 <= code <= 0xDFFF:
            code = 0xE000
        if code <= 0x10FFFF:
            return prefix[:-1] + chr(code)
        prefix = prefix[:-1]
    return None


INDEX_PIECES = 4
"""A long query's substring tiers ask the trigram index for this many
pieces of it (`index_pattern`), up to 4 characters each, not for all of its
trigrams: a GIN scan costs about half a millisecond per trigram on the
kernel (a 47-character name: 45 trigrams, 27 ms in the name's index and 24
in the fuzzy one), while 4 pieces of its longest words mostly leave only a
handful of rows for the exact condition to check."""


def index_pattern(text: str) -> str | None:
    """A LIKE pattern every name containing `text` matches, with fewer
    trigrams than `%text%`: up to four letters from the middle of each of
    `text`'s `INDEX_PIECES` longest runs of letters and digits, in order;
    None when `text` is too short or has too few runs to gain from it.
    Every name containing `text` contains the pieces in that order."""
    runs = [(m.start(), m.group()) for m in _ALNUM.finditer(text) if len(m.group()) >= 3]
    if len(text) < 16 or len(runs) < 2:
        return None
    chosen = sorted(sorted(runs, key=lambda r: -len(r[1]))[:INDEX_PIECES])
    pieces = [run[max(0, (len(run) - 4) // 2) :][:4] for _, run in chosen]
    return "%" + "%".join(like_escape(p) for p in pieces) + "%"


_ALNUM = re.compile(r"[0-9a-z]+")


def fewer_trigrams(trigrams: list[int]) -> list[int]:
    """At most 2 x `INDEX_PIECES` of a query's trigrams, spread evenly,
    for the fuzzy index (see `index_pattern`)."""
    keep = 2 * INDEX_PIECES
    if len(trigrams) <= keep:
        return trigrams
    step = len(trigrams) / keep
    return [trigrams[int(k * step)] for k in range(keep)]


@dataclass(frozen=True, slots=True)
class Tier:
    """One SQL condition on the definition table (and, for path words, the
    file table), with its parameters."""

    name: str
    where: str
    params: dict[str, Any]
    join_file: bool = False
    names_where: str = ""
    """When set, the tier is selected in two steps (`tier_select`): the
    first `n` names under this condition (on the alias `p`, answerable from
    the name btree alone), then the rows of those names under `where`."""


def tiers(query: str) -> list[Tier]:
    """The tiers `query` is retrieved by, in order (empty for an empty
    query, or a qualified one with nothing after the owner)."""
    parsed = Query.parse(query)
    text = parsed.folded
    if not text:
        return []
    owner_cond = ""
    first_owner: dict[str, Any] = {}
    if parsed.qualified:
        if not parsed.target:
            return []
        owner, text = parsed.owner, parsed.member
        if not text:
            return []
        if owner:
            owner_cond = " AND d.container_lower LIKE %(owner_seq)s"
            first_owner = {
                "owner_seq": subsequence_pattern(owner),
                "owner": owner,
                "owner_suffix": "%." + like_escape(owner),
            }
    prefix = like_escape(text) + "%"
    params = {"q": text, "prefix": prefix, "sub": "%" + like_escape(text) + "%", **first_owner}
    params["seq"] = subsequence_pattern(text)
    prefix_where = "d.name_lower LIKE %(prefix)s AND d.name_lower <> %(q)s"
    names_where = ""
    end = prefix_end(text)
    if not owner_cond and end is not None:
        # The prefix's rows are often tens of thousands (`sd`: 61,000 in
        # the kernel); sorting them by length reads each from the table.
        # The name btree (with the repository) answers the first names
        # alone; only their rows are read. The range is spelled out: the
        # planner took the trigram index for the LIKE alone.
        names_where = (
            "p.name_lower ~>=~ %(q)s AND p.name_lower ~<~ %(q_end)s"
            " AND p.name_lower LIKE %(prefix)s AND p.name_lower <> %(q)s"
        )
        params["q_end"] = end
    out = [
        Tier("exact", "d.name_lower = %(q)s" + owner_cond, params),
        Tier("prefix", prefix_where + owner_cond, params, names_where=names_where),
    ]
    if len(text) >= 2:
        out.append(
            Tier(
                "initials",
                "d.initials LIKE %(prefix)s AND d.name_lower NOT LIKE %(prefix)s" + owner_cond,
                params,
            )
        )
    # Below three characters a pattern has no trigram for an index to use:
    # the tiers above (btree) are all a short query gets from the database.
    trigrams = query_trigrams(text)
    # A long query asks the trigram indexes for a few pieces of it; the
    # whole condition is then checked on the rows they give, written so
    # that the planner cannot take it to the index too (`|| ''`).
    pattern = index_pattern(text)
    if pattern is not None:
        params["sub_index"] = pattern
        has_sub = "d.name_lower LIKE %(sub_index)s AND (d.name_lower || '') LIKE %(sub)s"
        owner_sub = (
            "d.container_lower LIKE %(sub_index)s AND (d.container_lower || '') LIKE %(sub)s"
        )
    else:
        has_sub = "d.name_lower LIKE %(sub)s"
        owner_sub = "d.container_lower LIKE %(sub)s"
    if len(text) >= 3:
        # One branch per range of name lengths, as the name's trigram index
        # is split (`NAME_LENGTHS`): shortest first, they give the rows in
        # the tier's order, and the later ones run only while the pool has
        # room. A qualified query's branches each put the owner's own
        # members first, so across branches that order is by length first.
        substring = (
            has_sub + " AND d.name_lower NOT LIKE %(prefix)s AND d.initials NOT LIKE %(prefix)s"
        )
        for lo, hi in NAME_LENGTHS:
            out.append(
                Tier(
                    "substring",
                    f"{substring} AND {length_between(lo, hi, 'd.')}{owner_cond}",
                    params,
                )
            )
    if trigrams:
        some = fewer_trigrams(trigrams)
        has_fuzzy = "d.fuzzy @> %(fuzzy_index)s::integer[]"
        if len(some) < len(trigrams):
            has_fuzzy += " AND (d.fuzzy || '{}'::integer[]) @> %(fuzzy)s::integer[]"
        out.append(
            Tier(
                "subsequence",
                has_fuzzy + " AND d.name_lower LIKE %(seq)s"
                " AND d.name_lower NOT LIKE %(sub)s AND d.initials NOT LIKE %(prefix)s"
                + owner_cond,
                dict(params, fuzzy=trigrams, fuzzy_index=some),
            )
        )
    words = query.lower().split()
    if not owner_cond and len(words) >= 2:
        conds = ["d.name_lower LIKE %(last)s", "d.name_lower NOT LIKE %(sub)s"]
        path_params = dict(params, last=like_escape(words[-1]) + "%")
        for n, word in enumerate(words[:-1]):
            conds.append(f"f.path_lower LIKE %(path{n})s")
            path_params[f"path{n}"] = "%" + like_escape(word) + "%"
        out.append(Tier("path words", " AND ".join(conds), path_params, join_file=True))
    if not owner_cond and len(text) >= 3:
        out.append(
            Tier(
                "owner",
                owner_sub + " AND d.name_lower NOT LIKE %(seq)s",
                params,
            )
        )
    return out


def tier_select(number: int, tier: Tier, qualified_first: bool) -> str:
    """The SELECT of one tier: definition rows only, sorted and cut inside
    the definition table (its own LIMIT), tagged with the tier's number."""
    order = "length(d.name_lower), d.name_lower, d.repository_id, d.file_no, d.line, d.col"
    if qualified_first:
        order = (
            "(d.container_lower = %(owner)s OR d.container_lower LIKE %(owner_suffix)s) DESC, "
            + order
        )
    join = (
        f" JOIN {SCHEMA}.file f ON f.repository_id = d.repository_id AND f.file_no = d.file_no"
        if tier.join_file
        else ""
    )
    where = tier.where
    if tier.names_where:
        # The first n rows of the tier by (length, name) hold every name of
        # its first n rows in the full order below: the second step's rows
        # are a superset of the answer, and `where` keeps them in the tier.
        where = (
            f"d.name_lower = ANY(ARRAY(SELECT p.name_lower FROM {SCHEMA}.definition p"
            f" WHERE {tier.names_where} AND p.repository_id <> ALL(%(skip)s::integer[])"
            " ORDER BY length(p.name_lower), p.name_lower LIMIT %(n)s))"
            f" AND {where}"
        )
    return (
        f"(SELECT {number} AS tier, {_COLUMNS} FROM {SCHEMA}.definition d{join}"
        f" WHERE {where} AND d.repository_id <> ALL(%(skip)s::integer[])"
        f" ORDER BY {order} LIMIT %(n)s)"
    )


def statement(chosen: list[Tier]) -> tuple[str, dict[str, Any]]:
    """One statement for every tier of a query, with its parameters.

    The tiers are branches of a UNION ALL under one LIMIT: PostgreSQL runs
    an Append's branches in order and stops pulling rows once the LIMIT
    is reached, so a later tier costs nothing when the earlier ones fill
    the pool (the plan in docs/shared-index.md shows the later branches
    "never executed"). One statement is also one snapshot: a re-publish
    committing meanwhile is seen by every tier or by none. The file and
    repository columns are joined after the cut.
    """
    qualified_first = "owner" in chosen[0].params
    params: dict[str, Any] = {}
    for tier in chosen:
        params.update(tier.params)
    union = " UNION ALL ".join(
        tier_select(n, tier, qualified_first) for n, tier in enumerate(chosen)
    )
    text = (
        "SELECT t.*, f.path, f.language, r.name, r.root_path, r.commit"
        f" FROM (SELECT * FROM ({union}) u LIMIT %(n)s) t"
        f" JOIN {SCHEMA}.file f ON f.repository_id = t.repository_id AND f.file_no = t.file_no"
        f" JOIN {SCHEMA}.repository r ON r.id = t.repository_id"
    )
    return text, params


def retrieve(
    conn: psycopg.Connection[tuple[Any, ...]],
    query: str,
    width: int,
    skip: Collection[int] = (),
) -> SharedPool:
    """The shared pool for `query`: at most `width` rows, in retrieval
    order, leaving out the repositories whose ids are in `skip`. One
    statement (`statement`); `conn` may be in autocommit mode."""
    chosen = tiers(query)
    if not chosen or width <= 0:
        return SharedPool([], [])
    text, params = statement(chosen)
    params.update(skip=list(skip), n=width)
    # Never a prepared statement: after five runs PostgreSQL may switch it to
    # a generic plan, and a plan made without the LIKE patterns' values
    # cannot use the btree for a prefix (measured: 1 ms custom plans became
    # 300-450 ms scans).
    rows = conn.execute(text, params, prepare=False).fetchall()
    # The join after the cut may return rows in any order: put them back
    # in tier order, then each tier's own order.
    rows.sort(key=lambda r: (r[0], len(r[1]), r[1].lower(), r[4], r[5], r[6], r[7]))
    return _pool(rows)


def repositories(conn: psycopg.Connection[tuple[Any, ...]]) -> list[Repository]:
    """Every published repository."""
    return [
        Repository(int(r[0]), str(r[1]), str(r[2]), None if r[3] is None else str(r[3]))
        for r in conn.execute(
            f"SELECT id, name, root_path, commit FROM {SCHEMA}.repository"
            " WHERE current ORDER BY name"
        )
    ]


def _pool(rows: list[tuple[Any, ...]]) -> SharedPool:
    symbols: list[Symbol] = []
    owners: list[Repository] = []
    seen: set[tuple[int, int, int, int, str]] = set()
    repos: dict[int, Repository] = {}
    for row in rows:
        (_, name, kind, container, repo_id, file_no, line, col, end_line, end_col) = row[:10]
        local, deprecated, path, language, repo_name, root_path, commit = row[10:]
        key = (repo_id, file_no, line, col, name)
        if key in seen:  # the path-words and owner tiers may repeat a row
            continue
        seen.add(key)
        repo = repos.get(repo_id)
        if repo is None:
            repo = repos[repo_id] = Repository(repo_id, repo_name, root_path, commit)
        try:
            kind_ = Kind(kind)
        except ValueError:
            kind_ = Kind.VARIABLE
        symbols.append(
            Symbol(
                name,
                kind_,
                container,
                repo.root_path,
                path,
                Span(line, col, end_line, end_col),
                language,
                bool(local),
                bool(deprecated),
            )
        )
        owners.append(repo)
    return SharedPool(symbols, owners)
