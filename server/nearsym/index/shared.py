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
  `container_lower`; see `nearsym.index.shared_query`).

Atomic re-publish. A repository's rows are replaced by delete and insert
in one transaction (`publish_repository`): under PostgreSQL's MVCC a reader
sees the rows committed before its snapshot, so every statement, and every
reader transaction at REPEATABLE READ (the retrieval uses one), sees either
all the old rows of a repository or all the new ones, never a mix. (A
version table with a pointer swap gives the same guarantee; it would let
the old rows be deleted later, at the price of a join on every query.)

Speed. Rows go in with COPY (psycopg's `copy.write_row`, binary-free text
format); the definition table has no foreign keys (checking one per row
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
from functools import lru_cache

import psycopg

from nearsym.core.match import word_starts
from nearsym.core.model import Symbol

SCHEMA_VERSION = 1
"""Bumped whenever a table or column changes meaning; readers and writers
of another version refuse each other (`SchemaMismatch`)."""

SCHEMA = "nearsym"

_GIN = "fastupdate = on, gin_pending_list_limit = 65536"
"""A publish adds its rows to the GIN indexes' pending list (up to 64 MB,
against the default 4 MB) and merges it once at the end
(`gin_clean_pending_list`): inserting into GIN a row at a time is what
made a publish slow."""

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
fuzzy trigrams (subsequence; see `fuzzy_trigrams`)."""

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
    " kind, line, col, end_line, end_col, local, fuzzy"
)


class SharedIndexError(Exception):
    """The shared index cannot be used; the message says why, for a person."""


class SchemaMismatch(SharedIndexError):
    """The database holds another version of the schema."""


def initials(name: str) -> str:
    """The lower-cased first letter of each of `name`'s words:
    `WorkspaceSymbolParams` -> `wsp`, `get_user_id` -> `gui`,
    `HTTPServer` -> `hs` (the matcher's word starts, `core.match`)."""
    return "".join(c for c, start in zip(name.lower(), word_starts(name), strict=False) if start)


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


@lru_cache(maxsize=65536)
def fuzzy_trigrams(name: str) -> list[int]:
    """The trigrams a subsequence query can hit in `name`, as integers.

    After clangd's Dex (`index/dex/Trigram.cpp`): a typed subsequence mostly
    moves through a name either to the next character or to the start of
    the next word (`wsp` -> WorkspaceSymbolParams, `gus` -> get_user_string).
    So each character is followed by two successors, the next character
    and the next word start, and the name's trigrams are every path of
    three through that graph. A query is retrieved by the subsequence tier
    when every trigram of its own consecutive characters is among them
    (`query_trigrams`), then checked exactly with LIKE. Separators are left
    out of both. A query that skips inside a word twice in a row (`rtpl`
    for render_template) is not found this way; the rerank would rank such
    a match low anyway. About 3 trigrams per character: 30-45 for a typical
    C name.

    Each trigram is its three UTF-8 bytes packed into 24 bits (a byte of a
    non-ASCII character counts as a character: the same on both sides).
    """
    chars: list[int] = []
    heads: list[bool] = []
    if name.isascii():
        raw = name.lower().encode()
        for ch, byte, start in zip(name, raw, word_starts(name), strict=True):
            if ch not in _SEPARATORS:
                chars.append(byte)
                heads.append(start)
    else:
        for ch, start in zip(name, word_starts(name), strict=True):
            if ch in _SEPARATORS:
                continue
            for k, byte in enumerate(ch.lower().encode("utf-8", "surrogatepass")):
                chars.append(byte)
                heads.append(start and k == 0)
    n = len(chars)
    if n < 3:
        return []
    # after[i]: the positions a query may move to from i.
    after: list[tuple[int, ...]] = []
    head = n
    for i in range(n - 1, -1, -1):
        nxt = i + 1
        if nxt >= n:
            after.append(())
        elif head == nxt or head >= n:
            after.append((nxt,))
        else:
            after.append((nxt, head))
        if heads[i]:
            head = i
    after.reverse()
    out = {
        (chars[i] << 16) | (chars[j] << 8) | chars[k]
        for i in range(n - 2)
        for j in after[i]
        for k in after[j]
    }
    return sorted(out)


def query_trigrams(text: str) -> list[int]:
    """The consecutive trigrams of a lower-cased query, separators left out
    (see `fuzzy_trigrams`)."""
    raw = bytes(
        b for ch in text if ch not in _SEPARATORS for b in ch.encode("utf-8", "surrogatepass")
    )
    return sorted({(raw[i] << 16) | (raw[i + 1] << 8) | raw[i + 2] for i in range(len(raw) - 2)})


_SEPARATORS = frozenset("_-./:$ #\\")


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
    in the order given."""
    for file_no, (_, symbols) in enumerate(files):
        for s in symbols:
            span = s.span
            yield (
                repository_id,
                file_no,
                s.name,
                s.name.lower(),
                initials(s.name),
                s.container,
                s.container.lower(),
                int(s.kind),
                span.line,
                span.col,
                span.end_line,
                span.end_col,
                s.local,
                fuzzy_trigrams(s.name),
            )


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
    # Outside the transaction: merging the GIN pending lists and fresh
    # statistics for the planner (the pattern tiers choose between an index
    # and a scan by estimated row counts). Readers are correct without them.
    for index, spec in DEFINITION_INDEXES:
        if "gin" in spec:
            conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (f"{SCHEMA}.{index}",))
    conn.execute(f"ANALYZE {SCHEMA}.definition")
    conn.execute(f"ANALYZE {SCHEMA}.file")
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
