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

Atomic re-publish. A repository's rows are replaced by delete and insert
in one transaction (`publish_repository`): under PostgreSQL's MVCC a reader
sees the rows committed before its snapshot, so every statement (a query's
retrieval is one) sees either all the old rows of a repository or all the
new ones, never a mix. (A partition per repository swapped in whole was
tried and dropped: every query then plans every partition.)

Speed. Rows go in with COPY (psycopg's `copy.write_row`); the derived
name columns are computed a batch at a time with numpy; the definition table has no foreign keys (checking one per row
costs more than the COPY), so `publish_repository` deletes a repository's
rows itself. What this module does not do: incremental publishes (a push
re-publishes the whole repository; a file-level diff would need the
previous commit's file table).

psycopg is imported here at module level: this module is only imported by
the `publish` command and by the server once a shared index is configured,
never by the local product.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import psycopg

from nearsym.core.model import Symbol
from nearsym.index.shared_columns import name_columns

SCHEMA_VERSION = 1
"""Bumped whenever a table or column changes meaning; readers and writers
of another version refuse each other (`SchemaMismatch`)."""

SCHEMA = "nearsym"

_GIN = "fastupdate = on, gin_pending_list_limit = 65536"
"""A publish adds its rows to the GIN indexes' pending list (up to 64 MB,
against the default 4 MB) and merges it once at the end (the VACUUM in
`_publish`): inserting into GIN a row at a time is what made a publish
slow."""

DEFINITION_INDEXES = (
    ("definition_name", "(name_lower text_pattern_ops, length(name_lower))"),
    ("definition_initials", "(initials text_pattern_ops)"),
    ("definition_name_trgm", f"USING gin (name_lower gin_trgm_ops) WITH ({_GIN})"),
    ("definition_container_trgm", f"USING gin (container_lower gin_trgm_ops) WITH ({_GIN})"),
    ("definition_fuzzy", f"USING gin (fuzzy) WITH ({_GIN})"),
)
"""The definition table's indexes: a btree on the lower-cased
name (exact and prefix), one on the initials, trigram indexes on the name
(substring) and the container (`Container.member`), and a GIN on the
fuzzy trigrams (subsequence; see `shared_columns.fuzzy_trigrams`)."""

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
CREATE TABLE {SCHEMA}.definition (
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
CREATE INDEX definition_repository ON {SCHEMA}.definition (repository_id, file_no);
-- The planner's estimate for `fuzzy @> ...` needs no sample of the arrays
-- (ANALYZE spent most of a publish's time on them).
ALTER TABLE {SCHEMA}.definition ALTER COLUMN fuzzy SET STATISTICS 0;
{{indexes}}
INSERT INTO {SCHEMA}.meta (version) VALUES ({SCHEMA_VERSION});
""".replace(
    "{indexes}",
    "".join(
        f"CREATE INDEX {name} ON {SCHEMA}.definition {spec};\n" for name, spec in DEFINITION_INDEXES
    ),
)

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


def definition_rows(
    repository_id: int, files: Sequence[tuple[str, Sequence[Symbol]]]
) -> Iterable[tuple[object, ...]]:
    """The COPY rows of `files` (relative path, its definitions), numbered
    in the order given. The derived name columns are computed a batch of
    `COLUMN_BATCH` definitions at a time (`shared_columns.name_columns`)."""
    batch: list[tuple[int, Symbol]] = []

    def rows() -> Iterable[tuple[object, ...]]:
        initial, fuzzy = name_columns([s.name for _, s in batch])
        for (file_no, s), first, trigrams in zip(batch, initial, fuzzy, strict=True):
            span = s.span
            yield (
                repository_id,
                file_no,
                s.name,
                s.name.lower(),
                first,
                s.container,
                s.container.lower(),
                int(s.kind),
                span.line,
                span.col,
                span.end_line,
                span.end_col,
                s.local,
                s.deprecated,
                trigrams,
            )

    for file_no, (_, symbols) in enumerate(files):
        for s in symbols:
            batch.append((file_no, s))
        if len(batch) >= COLUMN_BATCH:
            yield from rows()
            batch = []
    if batch:
        yield from rows()


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
    count = sum(len(symbols) for _, symbols in files)
    conn.execute(
        f"INSERT INTO {SCHEMA}.repository (name) VALUES (%s) ON CONFLICT (name) DO NOTHING",
        (name,),
    )
    with conn.transaction():
        row = conn.execute(
            f"SELECT id FROM {SCHEMA}.repository WHERE name = %s FOR UPDATE", (name,)
        ).fetchone()
        assert row is not None
        repository_id = int(str(row[0]))
        conn.execute(f"DELETE FROM {SCHEMA}.definition WHERE repository_id = %s", (repository_id,))
        conn.execute(f"DELETE FROM {SCHEMA}.file WHERE repository_id = %s", (repository_id,))
        with conn.cursor() as cur:
            with cur.copy(
                f"COPY {SCHEMA}.file (repository_id, file_no, path, path_lower, language)"
                " FROM STDIN"
            ) as copy:
                for file_no, (path, symbols) in enumerate(files):
                    language = symbols[0].language if symbols else ""
                    copy.write_row((repository_id, file_no, path, path.lower(), language))
            with cur.copy(f"COPY {SCHEMA}.definition ({DEFINITION_COLUMNS}) FROM STDIN") as copy:
                for values in definition_rows(repository_id, files):
                    copy.write_row(values)
        conn.execute(
            f"UPDATE {SCHEMA}.repository SET root_path = %s, commit = %s, published_at = now(),"
            " files = %s, definitions = %s, current = true WHERE id = %s",
            (root_path, commit, len(files), count, repository_id),
        )
    # Outside the transaction, VACUUM: it merges the GIN pending lists,
    # makes the replaced rows' space reusable by the next publish (without
    # it every re-publish grows the table by the repository's size), and
    # refreshes the planner's statistics (the tiers choose between indexes
    # by estimated row counts). Readers are correct without it; it blocks
    # none of them. It does not shrink the files: measured on five Python
    # projects (53,000 definitions), 478 bytes a definition freshly
    # published, 1,468 after the largest was published three times.
    conn.execute(f"VACUUM (ANALYZE) {SCHEMA}.definition")
    conn.execute(f"VACUUM (ANALYZE) {SCHEMA}.file")
    return count


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
