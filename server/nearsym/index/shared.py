"""A team's shared index in PostgreSQL: the schema and the publisher's writes.

Design. The shared index is a plain PostgreSQL database (with `pg_trgm`),
not a server of our own: teams already run one, and it scales past one
machine with read replicas and Citus. Every table lives in the `nearsym`
schema, one table per concern:

- `nearsym.meta`: one row, the schema's version (`SCHEMA_VERSION`). A
  reader or writer that finds another version refuses it by name
  (`SchemaMismatch`) instead of guessing at columns.
- `nearsym.repository`: one row per published repository: its name (the
  key people see), the checkout path and commit it was published from, when,
  and its counts.
- `nearsym.file`: a repository's files that hold definitions, numbered
  0..n-1 within the repository (the publisher numbers them, so COPY needs
  no round trip for ids), with their language.
- `nearsym.definition`: one row per definition, with the normalised columns
  the candidate queries are indexed on (`name_lower`, `initials`,
  `container_lower`, `fuzzy`: `shared_columns`; the queries are in
  `shared_query`).

Atomic re-publish, two ways. Readers see either all the old rows of a
repository or all the new ones, never a mix, whichever way is taken:

- Row by row (`_publish`, a repository that is a small part of the table):
  the repository's rows are deleted and the new ones COPYed in, in one
  transaction. Under PostgreSQL's MVCC a reader sees the rows committed
  before its snapshot, so every statement (a query's retrieval is one)
  sees one version. The indexes are maintained a row at a time, and a
  VACUUM follows.
- Rebuilt (`_rebuild_definitions`, a first publish or a repository that is
  most of the table: `REBUILD_SHARE`): in one transaction, a new table
  `definition_next` receives the other repositories' rows and then this
  one's, its indexes are built after the COPY (a sorted build, far cheaper
  than maintaining them row by row), and it takes the place of
  `definition` (DROP and RENAME) just before the commit. Readers keep
  reading the old table the whole time: the publisher's lock (SHARE ROW
  EXCLUSIVE) keeps out only other publishers; only the swap at the end
  takes ACCESS EXCLUSIVE, for the milliseconds of the renames and the
  commit. Dropping and re-creating the indexes of `definition` itself in
  the transaction was not done: that holds ACCESS EXCLUSIVE from the drop
  to the commit, so every reader of every repository would wait for the
  whole COPY and build (minutes for the kernel).

(A partition per repository swapped in whole was tried and dropped: every
query then plans every partition.)

Speed. Rows go in with COPY, formatted here as text a block at a time
(`definition_blocks`: psycopg's `write_row` spent most of its time
dumping the `fuzzy` lists in Python); the derived name columns are
computed a batch at a time with numpy; the definition table has no
foreign keys (checking one per row costs more than the COPY), so
`publish_repository` deletes a repository's rows itself. Figures in
docs/shared-index.md (Figures). What this module does not do: incremental
publishes (a push re-publishes the whole repository; a file-level diff
would need the previous commit's file table).

psycopg is imported here at module level: this module is only imported by
the `publish` command and by the server once a shared index is configured,
never by the local product.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import psycopg

from nearsym.core.model import Symbol
from nearsym.index.shared_columns import name_columns_text

SCHEMA_VERSION = 1
"""Bumped whenever a table or column changes meaning; readers and writers
of another version refuse each other (`SchemaMismatch`)."""

SCHEMA = "nearsym"

_GIN = "fastupdate = on, gin_pending_list_limit = 65536"
"""A publish adds its rows to the GIN indexes' pending list (up to 64 MB,
against the default 4 MB) and merges it once at the end (the VACUUM in
`_publish`): inserting into GIN a row at a time is what made a publish
slow."""

NAME_LENGTHS = ((0, 8), (9, 12), (13, 16), (17, 21), (22, None))
"""The name's trigram index is one partial GIN per range of name lengths
(a name's length in characters, lower and upper bound included; None: no
upper bound). The substring tier asks them shortest first and stops when
the pool is full (`shared_query.tiers`), so a common substring reads the
rows of short names only: `ont` is in 85,000 of the kernel's names, which
one index gave to a sort by length whole (90 ms). The ranges hold about a
seventh, then a fifth of the kernel's names each (its lengths: 14% up to 8,
13% 9-12, 16% 13-16, 20% 17-21, the rest longer)."""


def length_between(lo: int, hi: int | None, alias: str = "") -> str:
    """The SQL condition of one of `NAME_LENGTHS` on `name_lower` (the
    partial index's predicate, the query's the same text)."""
    column = f"length({alias}name_lower)"
    return f"{column} >= {lo}" + (f" AND {column} <= {hi}" if hi is not None else "")


DEFINITION_INDEXES = (
    ("definition_repository", "(repository_id, file_no)"),
    (
        "definition_name",
        "(name_lower text_pattern_ops, length(name_lower)) INCLUDE (repository_id)",
    ),
    ("definition_initials", "(initials text_pattern_ops)"),
    *(
        (
            f"definition_name_trgm_{lo}",
            f"USING gin (name_lower gin_trgm_ops) WITH ({_GIN}) WHERE {length_between(lo, hi)}",
        )
        for lo, hi in NAME_LENGTHS
    ),
    ("definition_container_trgm", f"USING gin (container_lower gin_trgm_ops) WITH ({_GIN})"),
    ("definition_fuzzy", f"USING gin (fuzzy) WITH ({_GIN})"),
)
"""The definition table's indexes: a btree on (repository, file) for a
re-publish's delete, a btree on the lower-cased name (exact and prefix;
with the repository, so that a prefix's first names come from it alone,
`shared_query`'s two-step prefix tier),
one on the initials, trigram indexes on the name (substring; one per
range of `NAME_LENGTHS`) and the container (`Container.member`), and a GIN on the fuzzy trigrams
(subsequence; see `shared_columns.fuzzy_trigrams`)."""


def definition_table(table: str) -> str:
    """The DDL of the definition table under the name `table` (the
    rebuilding publish creates its successor as `definition_next`)."""
    return f"""
CREATE TABLE {SCHEMA}.{table} (
    repository_id integer NOT NULL,
    file_no integer NOT NULL,
    name text NOT NULL,
    name_lower text NOT NULL,
    initials text NOT NULL,
    container text NOT NULL,
    container_lower text NOT NULL,
    kind smallint NOT NULL,
    line integer NOT NULL,
    col integer NOT NULL,
    end_line integer NOT NULL,
    end_col integer NOT NULL,
    local boolean NOT NULL,
    deprecated boolean NOT NULL,
    fuzzy integer[] NOT NULL
);
-- The planner's estimate for `fuzzy @> ...` needs no sample of the arrays
-- (ANALYZE spent most of a publish's time on them).
ALTER TABLE {SCHEMA}.{table} ALTER COLUMN fuzzy SET STATISTICS 0;
"""


def definition_indexes(table: str, suffix: str = "") -> list[str]:
    """The CREATE INDEX statements of `DEFINITION_INDEXES` on `table`,
    each index's name followed by `suffix`."""
    return [
        f"CREATE INDEX {name}{suffix} ON {SCHEMA}.{table} {spec}"
        for name, spec in DEFINITION_INDEXES
    ]


_INDEX_DDL = "".join(statement + ";\n" for statement in definition_indexes("definition"))

DDL = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
CREATE TABLE {SCHEMA}.meta (
    version integer NOT NULL,
    created timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE {SCHEMA}.repository (
    id serial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    root_path text NOT NULL DEFAULT '',
    commit text,
    published_at timestamptz NOT NULL DEFAULT now(),
    files integer NOT NULL DEFAULT 0,
    definitions integer NOT NULL DEFAULT 0,
    current boolean NOT NULL DEFAULT false
);
CREATE TABLE {SCHEMA}.file (
    repository_id integer NOT NULL REFERENCES {SCHEMA}.repository ON DELETE CASCADE,
    file_no integer NOT NULL,
    path text NOT NULL,
    path_lower text NOT NULL,
    language text NOT NULL,
    PRIMARY KEY (repository_id, file_no)
);
CREATE INDEX file_path_trgm ON {SCHEMA}.file USING gin (path_lower gin_trgm_ops);
{definition_table("definition")}
{_INDEX_DDL}
INSERT INTO {SCHEMA}.meta (version) VALUES ({SCHEMA_VERSION});
"""

DEFINITION_COLUMNS = (
    "repository_id, file_no, name, name_lower, initials, container, container_lower,"
    " kind, line, col, end_line, end_col, local, deprecated, fuzzy"
)


class SharedIndexError(Exception):
    """The shared index cannot be used; the message says why, for a person."""


class SchemaMismatch(SharedIndexError):
    """The database holds another version of the schema."""


def schema_version(conn: psycopg.Connection[tuple[object, ...]]) -> int | None:
    """The version in `nearsym.meta`, or None when there is no schema."""
    found = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.meta",)).fetchone()
    if found is None or found[0] is None:
        return None
    row = conn.execute(f"SELECT max(version) FROM {SCHEMA}.meta").fetchone()
    return None if row is None or row[0] is None else int(str(row[0]))


def check_schema(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Raise `SchemaMismatch` unless the database holds our schema version."""
    found = schema_version(conn)
    if found is None:
        raise SchemaMismatch(
            "the database holds no nearsym schema (run `nearsym publish` to create it)"
        )
    if found != SCHEMA_VERSION:
        raise SchemaMismatch(
            f"the database's nearsym schema is version {found}; "
            f"this nearsym reads version {SCHEMA_VERSION}"
        )


def ensure_schema(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Create the schema when the database has none; refuse another version.

    Concurrent publishers serialise on an advisory lock, so two first
    publishes do not both create the tables."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('nearsym.schema'))")
        found = schema_version(conn)
        if found is None:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            conn.execute(DDL.encode())
            return
    check_schema(conn)


@dataclass(frozen=True, slots=True)
class Published:
    """What one `publish_repository` wrote."""

    name: str
    files: int
    definitions: int
    seconds: float


def definition_blocks(
    repository_id: int,
    files: Iterable[tuple[str, Sequence[Symbol]]],
    seen: list[tuple[str, str, int]] | None = None,
) -> Iterable[str]:
    """The definition rows of `files` (relative path, its definitions) in
    COPY's text format, numbered in the order given, a block of
    `COLUMN_BATCH` rows at a time (`shared_columns.name_columns_text`
    computes the derived name columns of a block together). `files` is
    read once, in order; each file's (path, language, definitions) is
    appended to `seen` when given.

    Formatted here rather than by psycopg's `write_row`: its dumper of the
    `fuzzy` list runs in Python a value at a time."""
    batch: list[tuple[int, Symbol]] = []

    def block() -> str:
        names = [s.name for _, s in batch]
        containers = [s.container for _, s in batch]
        initial, fuzzy = name_columns_text(names)
        if _COPY_ESCAPED.search("".join(names)) or _COPY_ESCAPED.search("".join(containers)):
            names = [copy_field(n) for n in names]
            containers = [copy_field(c) for c in containers]
            initial = [copy_field(i) for i in initial]
        lines = []
        for (file_no, s), name, container, first, trigrams in zip(
            batch, names, containers, initial, fuzzy, strict=True
        ):
            span = s.span
            lines.append(
                f"{repository_id}\t{file_no}\t{name}\t{name.lower()}\t{first}\t"
                f"{container}\t{container.lower()}\t{int(s.kind)}\t"
                f"{span.line}\t{span.col}\t{span.end_line}\t{span.end_col}\t"
                f"{'t' if s.local else 'f'}\t{'t' if s.deprecated else 'f'}\t{{{trigrams}}}\n"
            )
        return "".join(lines)

    for file_no, (path, symbols) in enumerate(files):
        if seen is not None:
            seen.append((path, symbols[0].language if symbols else "", len(symbols)))
        for s in symbols:
            batch.append((file_no, s))
        if len(batch) >= COLUMN_BATCH:
            yield block()
            batch = []
    if batch:
        yield block()


_COPY_ESCAPED = re.compile(r"[\\\t\n\r]")
"""The characters a field of a text COPY must escape."""


def copy_field(value: str) -> str:
    """`value` as a field of a text COPY: backslash, tab, newline and
    carriage return escaped."""
    return (
        value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    )


COLUMN_BATCH = 20_000
"""Definitions whose name columns are computed together: large enough that
numpy's per-call cost vanishes, small enough that the batch's arrays stay a
few tens of megabytes."""


def publish_repository(
    conn: psycopg.Connection[tuple[object, ...]],
    name: str,
    root_path: str,
    commit: str | None,
    files: Sequence[tuple[str, Sequence[Symbol]]],
) -> Published:
    """Replace repository `name`'s rows by `files` in one transaction.

    `files` are (path relative to the root with `/` separators, its
    definitions); files without definitions may be left out. Readers see
    the previous rows until the commit, then only these.
    """
    started = time.perf_counter()
    try:
        count = _publish(conn, name, root_path, commit, files)
    except psycopg.Error as error:
        raise SharedIndexError(describe(error)) from error
    return Published(name, len(files), count, time.perf_counter() - started)


def _publish(
    conn: psycopg.Connection[tuple[object, ...]],
    name: str,
    root_path: str,
    commit: str | None,
    files: Sequence[tuple[str, Sequence[Symbol]]],
) -> int:
    ensure_schema(conn)
    conn.execute(
        f"INSERT INTO {SCHEMA}.repository (name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
        (name,),
    )
    # Files, not definitions, are weighed: `files` may build each file's
    # definitions only when it is read (`tools.publish.IndexedFiles`), and
    # it is read once, by the COPY, which counts them (`seen`).
    others = conn.execute(
        f"SELECT coalesce(sum(files), 0) FROM {SCHEMA}.repository WHERE name <> %s", (name,)
    ).fetchone()
    rebuild = others is not None and int(str(others[0])) <= len(files) * REBUILD_SHARE
    seen: list[tuple[str, str, int]] = []
    if not rebuild:
        update_indexes(conn)
    with conn.transaction():
        row = conn.execute(
            f"SELECT id FROM {SCHEMA}.repository WHERE name = %s FOR UPDATE", (name,)
        ).fetchone()
        assert row is not None
        repository_id = int(str(row[0]))
        if rebuild:
            _rebuild_definitions(conn, repository_id, files, seen)
        else:
            conn.execute(
                f"DELETE FROM {SCHEMA}.definition WHERE repository_id = %s", (repository_id,)
            )
            _copy_definitions(conn, "definition", repository_id, files, seen, freeze=False)
        _replace_files(conn, repository_id, seen)
        count = sum(n for _, _, n in seen)
        if rebuild:
            _swap_definitions(conn)
        conn.execute(
            f"UPDATE {SCHEMA}.repository SET root_path = %s, commit = %s, published_at = now(),"
            " files = %s, definitions = %s, current = true WHERE id = %s",
            (root_path, commit, len(files), count, repository_id),
        )
    if not rebuild:
        # Outside the transaction, VACUUM: it merges the GIN pending lists,
        # makes the replaced rows' space reusable by the next publish
        # (without it every re-publish grows the table by the repository's
        # size), and refreshes the planner's statistics (the tiers choose
        # between indexes by estimated row counts). Readers are correct
        # without it; it blocks none of them. It does not shrink the files:
        # measured on five Python projects (53,000 definitions), 478 bytes a
        # definition freshly published, 1,468 after the largest was
        # published three times. A rebuilt table needs none of it (see
        # `_rebuild_definitions`).
        conn.execute(f"VACUUM (ANALYZE) {SCHEMA}.definition")
    conn.execute(f"VACUUM (ANALYZE) {SCHEMA}.file")
    return count


REBUILD_SHARE = 1.0
"""A publish rebuilds the definition table (`_rebuild_definitions`) when
the other repositories' files are at most this many times its own (files
stand for rows: they are known before the definitions are read): a first
publish always, a re-publish of the largest of two repositories too.
Building the indexes after the COPY costs a fraction of maintaining them
row by row (the kernel's write: 237 s row by row, 105 s rebuilt, of which
66 s the index builds; docs/shared-index.md, Figures), but the rebuild also
copies and re-indexes the other repositories' rows, so it pays only while
those are not many more than the new ones. 1 is a guess on the safe side
of that break-even, not a measured one."""


REPLACED_INDEXES = ("definition_name_trgm",)
"""Indexes of an earlier layout that `DEFINITION_INDEXES` replaced (the
name's one trigram index, now one per range of `NAME_LENGTHS`)."""


def update_indexes(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Give a definition table published by an earlier nearsym the indexes
    of `DEFINITION_INDEXES`: create those it lacks, then drop those they
    replaced, in a transaction of its own before a row-by-row publish (a
    rebuild creates them all anyway). CREATE INDEX blocks writers, not
    readers; the DROP holds ACCESS EXCLUSIVE only to the commit that
    follows it. Readers are correct with either layout, only slower on
    the old one."""
    have = {
        str(r[0])
        for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'definition'",
            (SCHEMA,),
        )
    }
    missing = [
        statement
        for (index, _), statement in zip(
            DEFINITION_INDEXES, definition_indexes("definition"), strict=True
        )
        if index not in have
    ]
    stale = [index for index in REPLACED_INDEXES if index in have]
    if not missing and not stale:
        return
    with conn.transaction():
        for statement in missing:
            conn.execute(statement)
        for index in stale:
            conn.execute(f"DROP INDEX {SCHEMA}.{index}")


def _rebuild_definitions(
    conn: psycopg.Connection[tuple[object, ...]],
    repository_id: int,
    files: Sequence[tuple[str, Sequence[Symbol]]],
    seen: list[tuple[str, str, int]],
) -> None:
    """Build `definition_next`: the other repositories' rows, then this
    one's, then the indexes, and its statistics (`_swap_definitions` puts it
    in place of `definition` at the end of the transaction).

    Readers keep reading `definition` meanwhile: the lock taken here (SHARE
    ROW EXCLUSIVE) keeps out only other publishers, which would otherwise
    write rows the copy misses. The new table is created in this
    transaction, so its COPY is FREEZE: its rows are written frozen and
    all-visible, and as the table has no dead rows and its GIN indexes no
    pending list, it needs no VACUUM after the commit; the ANALYZE here
    gives it statistics before the first reader plans a query on it.

    The builds keep the server's `maintenance_work_mem` and parallel
    workers: measured on the kernel (PostgreSQL 15), the fuzzy GIN took
    30.2, 30.6, 30.6 and 31.4 s with 64 MB, 256 MB, 1 GB and 3 GB, and the
    name's trigram GIN 17.4 s with 64 MB and 19.0 s with 1 GB (a GIN build
    is one process's CPU here, not memory); two parallel workers took the
    name btree from 3.4 to 2.8 s, which the default (2) already gives.

    The publishing role must own the table (it created the schema), as
    DROP TABLE requires."""
    conn.execute(f"LOCK TABLE {SCHEMA}.definition IN SHARE ROW EXCLUSIVE MODE")
    conn.execute(definition_table("definition_next"))
    conn.execute(
        f"INSERT INTO {SCHEMA}.definition_next ({DEFINITION_COLUMNS})"
        f" SELECT {DEFINITION_COLUMNS} FROM {SCHEMA}.definition WHERE repository_id <> %s",
        (repository_id,),
    )
    _copy_definitions(conn, "definition_next", repository_id, files, seen, freeze=True)
    for statement in definition_indexes("definition_next", "_next"):
        conn.execute(statement)
    conn.execute(f"ANALYZE {SCHEMA}.definition_next")


SWAP_LOCK_WAIT_MS = 500
"""How long one attempt at the swap's ACCESS EXCLUSIVE lock waits for the
queries on the old table to end. While it waits, queries that start queue
behind it, so a short wait bounds their stall; the server's own queries
end within their statement timeout, so a longer wait means a stray
session (an open transaction in psql) holds the table."""

SWAP_ATTEMPTS = 120
"""Attempts at the swap's lock, a second apart, before the publish gives
up (its transaction rolls back; readers keep the old rows): about two
minutes of a stray session holding the table."""


def _swap_definitions(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """`definition_next` becomes `definition`. The lock (ACCESS EXCLUSIVE)
    waits for the queries running on the old table, `SWAP_LOCK_WAIT_MS` an
    attempt (each attempt a savepoint, so a failed one loses nothing built);
    queries that start meanwhile wait for the commit, which follows at
    once, and then read the new table."""
    for attempt in range(SWAP_ATTEMPTS):
        try:
            with conn.transaction():
                conn.execute(f"SET LOCAL lock_timeout = {SWAP_LOCK_WAIT_MS}")
                conn.execute(f"LOCK TABLE {SCHEMA}.definition IN ACCESS EXCLUSIVE MODE")
            break
        except psycopg.errors.LockNotAvailable:
            if attempt == SWAP_ATTEMPTS - 1:
                raise
            time.sleep(1.0)
    conn.execute("RESET lock_timeout")
    conn.execute(f"DROP TABLE {SCHEMA}.definition")
    conn.execute(f"ALTER TABLE {SCHEMA}.definition_next RENAME TO definition")
    for index, _ in DEFINITION_INDEXES:
        conn.execute(f"ALTER INDEX {SCHEMA}.{index}_next RENAME TO {index}")


def _copy_definitions(
    conn: psycopg.Connection[tuple[object, ...]],
    table: str,
    repository_id: int,
    files: Sequence[tuple[str, Sequence[Symbol]]],
    seen: list[tuple[str, str, int]],
    freeze: bool,
) -> None:
    options = " (FREEZE)" if freeze else ""
    text = f"COPY {SCHEMA}.{table} ({DEFINITION_COLUMNS}) FROM STDIN{options}"
    with conn.cursor() as cur, cur.copy(text) as copy:
        for block in definition_blocks(repository_id, files, seen):
            copy.write(block)


def _replace_files(
    conn: psycopg.Connection[tuple[object, ...]],
    repository_id: int,
    seen: list[tuple[str, str, int]],
) -> None:
    """The file rows: (path, language, definitions) per file, as the
    definitions' COPY saw them (`definition_blocks`)."""
    conn.execute(f"DELETE FROM {SCHEMA}.file WHERE repository_id = %s", (repository_id,))
    with (
        conn.cursor() as cur,
        cur.copy(
            f"COPY {SCHEMA}.file (repository_id, file_no, path, path_lower, language) FROM STDIN"
        ) as copy,
    ):
        for file_no, (path, language, _) in enumerate(seen):
            copy.write_row((repository_id, file_no, path, path.lower(), language))


def connect(url: str, connect_timeout: float = 5.0) -> psycopg.Connection[tuple[object, ...]]:
    """A connection to `url` in autocommit mode (transactions are explicit),
    with a clear `SharedIndexError` when the server cannot be reached or
    refuses the login."""
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=max(1, round(connect_timeout)))
    except psycopg.Error as error:
        raise SharedIndexError(describe(error)) from error


def describe(error: BaseException) -> str:
    """A person's one-line reading of a driver error (the server's own
    message, without the libpq preamble and the password)."""
    text = str(error).strip().splitlines()
    line = next((t for t in text if "FATAL" in t or "ERROR" in t), text[0] if text else "")
    line = line.split("failed: ", 1)[-1].strip()
    return line or type(error).__name__
