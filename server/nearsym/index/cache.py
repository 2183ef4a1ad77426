"""The on-disk cache: a restart loads definitions instead of parsing.

Design note
-----------
One SQLite file (stdlib sqlite3) per workspace root and settings, in the
user's cache directory (`platformdirs.user_cache_dir("nearsym")`, or
`$NEARSYM_CACHE_DIR`), named by a hash of the root's real path and of every
setting that changes what is indexed (the caller's `settings` string: a
cache made with `maxFileBytes` 1 MB never answers for 100 bytes). It holds
one row per file: the root-relative path (as bytes: a name that is not
UTF-8 is stored as it is), the size and mtime (ns) the file had when it was
parsed, its `FileDefs` blob and the blob's CRC-32. A file whose size and
mtime match is loaded, any other is parsed again.

- Racy entries: a file parsed within `RACY_SECONDS` of its mtime may be
  written again in the same clock tick without its mtime changing, so it
  is stored with mtime -1 and never trusted (git's "racily clean" rule).
- The `meta` table holds a stamp of everything that decides what a parse
  yields: the cache format, nearsym's version, Python's, every grammar
  wheel's version and a hash of every query file. A different stamp empties
  the cache.
- A file that is not a cache of ours, or a corrupt one, is deleted with a
  log line and started afresh; every SQLite error after that disables the
  cache for the session, never the server.
- Integrity: every row and every snapshot part carries the CRC-32 of its
  bytes, checked when loaded (a row that fails is parsed again; a snapshot
  part that fails drops the snapshot). SQLite checks its own pages, not
  what is in a blob.
- The folder is made `0700` and each file `0600` (SQLite gives its log
  files the database's mode): they hold every name and path of the tree.
- Writes go through one background thread with its own connection, in
  batches, so parsing never waits for the disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import queue
import sqlite3
import sys
import threading
import time
import zlib
from collections.abc import Iterable
from functools import cache
from typing import Any

from nearsym import __version__
from nearsym.extract.languages import LANGUAGES
from nearsym.index.allocator import trim

log = logging.getLogger(__name__)

FORMAT = 17
"""Bumped whenever what a stored record means changes (12: the kind byte
carries the deprecated bit; 13: paths as bytes, a CRC-32 per row and per
snapshot part, a key per settings; 14: a record carries the file's mentions
and a snapshot the mention counts; 15: a snapshot part's data is its row's
last column; 16: mention keys are `extract.mentions`' hash, not CRC-32; 17:
each of the names declared together, `int x, y;`, has its container, where
only the last had), so an older cache is discarded, not misread."""
RACY_SECONDS = 2.0


@cache
def stamp() -> str:
    """What decides a parse's result; a cache with another stamp is stale."""
    h = hashlib.sha256()
    h.update(f"format={FORMAT};nearsym={__version__};python={sys.version_info[:2]}".encode())
    h.update(f";tree-sitter={_version('tree-sitter')}".encode())
    for spec in LANGUAGES:
        h.update(f";{spec.name}={_version(spec.grammar_module.replace('_', '-'))}".encode())
        h.update(hashlib.sha256(spec.query_source().encode()).digest())
        if spec.skim is not None:  # what the query may skip (sorted: sets' order varies)
            skim = spec.skim
            h.update(
                repr(
                    (
                        sorted(skim.outline),
                        sorted(skim.guarded),
                        skim.inner,
                        skim.quiet,
                        sorted(skim.blocks),
                        sorted(skim.flat),
                        skim.raw_quote,
                        skim.lone_brace,
                        skim.flush,
                        skim.despite_errors,
                        skim.const_blocks,
                    )
                ).encode()
            )
    return h.hexdigest()


BLOB_CHUNK = 1 << 20
"""Bytes of a snapshot part written at a time."""


def _store_part(db: sqlite3.Connection, part: str, data: Any) -> None:
    """One snapshot part, written into its row a chunk at a time: bound as a
    parameter, SQLite would first copy the whole part (up to 63 MB of names
    on the Linux kernel) into memory of its own."""
    view = memoryview(data).cast("B")
    # The zeroblob is the row's last column: SQLite then writes its zeros
    # without making them in memory first (as a middle column, the Linux
    # kernel's snapshot write held 146 MB more at its peak).
    cursor = db.execute(
        "INSERT INTO snapshot VALUES (?, ?, zeroblob(?))", (part, _sum(view), len(view))
    )
    if not len(view) or cursor.lastrowid is None:
        return
    with db.blobopen("snapshot", "data", cursor.lastrowid) as blob:
        for at in range(0, len(view), BLOB_CHUNK):
            blob.write(view[at : at + BLOB_CHUNK])


def _version(dist: str) -> str:
    """The installed version of the distribution `dist`, read off its
    `NAME-VERSION.dist-info` folder: a look-up through importlib.metadata
    parses each METADATA file (84 ms for the 24 the stamp names, with the
    module's import, on a restarted server's path to its first answer)."""
    version = _dist_info_versions().get(_normalise(dist))
    if version is not None:
        return version
    from importlib import metadata  # an egg, a zip: the general look-up

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


@cache
def _dist_info_versions() -> dict[str, str]:
    """Normalised distribution name -> version, of every `.dist-info`
    folder on `sys.path` (the first one found wins, as on import)."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info"):
                dist, _, version = name[: -len(".dist-info")].partition("-")
                if version:
                    found.setdefault(_normalise(dist), version)
    return found


def _normalise(dist: str) -> str:
    """`tree-sitter`, `tree_sitter` and `Tree.Sitter` name one distribution."""
    return dist.lower().replace("-", "_").replace(".", "_")


def cache_dir() -> str:
    env = os.environ.get("NEARSYM_CACHE_DIR")
    if env:
        return env
    import platformdirs

    return str(platformdirs.user_cache_dir("nearsym"))


def cache_path(root: str, directory: str | None = None, settings: str = "") -> str:
    """The cache file of `root` indexed with `settings`."""
    key = hashlib.sha256(os.fsencode(os.path.realpath(root)) + b"\0" + settings.encode())
    return os.path.join(directory or cache_dir(), f"{key.hexdigest()[:24]}.sqlite")


def _sum(data: Any) -> int:
    return zlib.crc32(data)


_Rows = list[tuple[bytes, int, int, bytes, int]] | list[bytes] | dict[str, Any]

Entry = tuple[int, int, bytes]
"""(size, mtime_ns, FileDefs blob)."""


class Cache:
    """One root's cache. Every method survives any SQLite failure."""

    def __init__(self, root: str, directory: str | None = None, settings: str = "") -> None:
        self.root = root
        self.settings = settings
        self.path = cache_path(root, directory, settings)
        self.enabled = True
        self._queue: queue.Queue[tuple[str, _Rows] | None]
        self._queue = queue.Queue()
        self._writer: threading.Thread | None = None
        self._open()

    def _connect(self) -> sqlite3.Connection:
        # Made (or narrowed) 0600 before SQLite opens it: its -wal and -shm
        # files take the database's mode.
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            if os.fstat(fd).st_mode & 0o077:
                os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
        db = sqlite3.connect(self.path, timeout=5, check_same_thread=False)
        # Text comes back as bytes: a damaged value must reach the checks
        # below, not fail inside SQLite's decoding.
        db.text_factory = bytes
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def _open(self) -> None:
        try:
            folder = os.path.dirname(self.path)
            os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.stat(folder)
            if st.st_mode & 0o077 and st.st_uid == os.geteuid():
                os.chmod(folder, 0o700)
            db = self._connect()
            try:
                ok = self._check(db)
            finally:
                db.close()
            if not ok:
                self._reset()
        except (sqlite3.Error, OSError) as error:
            log.warning("cache %s unusable (%s); starting a new one", self.path, error)
            try:
                self._reset()
            except (sqlite3.Error, OSError) as again:
                log.warning("cache disabled: %s", again)
                self.enabled = False

    def _check(self, db: sqlite3.Connection) -> bool:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            self._create(db)
            return True
        if tables != {b"meta", b"files", b"snapshot"}:
            log.warning("cache %s is not a nearsym cache; replacing it", self.path)
            return False
        row = db.execute("SELECT value FROM meta WHERE key='stamp'").fetchone()
        root = db.execute("SELECT value FROM meta WHERE key='root'").fetchone()
        settings = db.execute("SELECT value FROM meta WHERE key='settings'").fetchone()
        if (
            row is None
            or row[0] != stamp().encode()
            or root is None
            or root[0] != os.fsencode(self.root)
            or settings is None
            or settings[0] != self.settings.encode()
        ):
            log.info("cache %s was made by another version or grammar; emptying it", self.path)
            return False
        return True

    def _create(self, db: sqlite3.Connection) -> None:
        with db:
            db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            db.execute(
                "CREATE TABLE files (path BLOB PRIMARY KEY, size INTEGER, mtime INTEGER,"
                " defs BLOB, sum INTEGER)"
            )
            db.execute("CREATE TABLE snapshot (part TEXT PRIMARY KEY, sum INTEGER, data BLOB)")
            db.execute(
                "INSERT INTO meta VALUES ('stamp', ?), ('root', ?), ('settings', ?)",
                (stamp(), os.fsencode(self.root), self.settings),
            )

    def _reset(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path + suffix)
        db = self._connect()
        try:
            self._create(db)
        finally:
            db.close()

    # -- reading ---------------------------------------------------------------
    def _rows(self, rows: Iterable[tuple[bytes, int, int, bytes, int]]) -> dict[str, Entry]:
        """Rows whose blob matches its checksum, by path; the others are
        left out (and so parsed again), with one log line."""
        out: dict[str, Entry] = {}
        bad = 0
        for path, size, mtime, defs, total in rows:
            if isinstance(defs, bytes) and _sum(defs) == total and isinstance(path, bytes):
                out[os.fsdecode(path)] = (size, mtime, defs)
            else:
                bad += 1
        if bad:
            log.warning("cache %s: %d entries failed their checksum; parsing them", self.path, bad)
        return out

    def load(self) -> dict[str, Entry]:
        """Every stored file: path -> (size, mtime_ns, blob). Empty on error."""
        if not self.enabled:
            return {}
        try:
            db = self._connect()
            try:
                return self._rows(db.execute("SELECT * FROM files"))
            finally:
                db.close()
        except sqlite3.Error as error:
            log.warning("cache %s unreadable (%s); parsing instead", self.path, error)
            self.enabled = False
            return {}

    def load_some(self, paths: list[str]) -> dict[str, Entry]:
        """The stored entries of `paths` (those it has)."""
        if not self.enabled:
            return {}
        out: dict[str, Entry] = {}
        try:
            db = self._connect()
            try:
                for at in range(0, len(paths), 500):
                    chunk = [os.fsencode(p) for p in paths[at : at + 500]]
                    marks = ",".join("?" * len(chunk))
                    query = f"SELECT * FROM files WHERE path IN ({marks})"
                    out.update(self._rows(db.execute(query, chunk)))
            finally:
                db.close()
        except sqlite3.Error as error:
            log.warning("cache %s unreadable (%s); parsing instead", self.path, error)
            return {}
        return out

    def paths(self) -> list[str]:
        if not self.enabled:
            return []
        try:
            db = self._connect()
            try:
                return [os.fsdecode(p) for (p,) in db.execute("SELECT path FROM files")]
            finally:
                db.close()
        except sqlite3.Error:
            return []

    def snapshot_bytes(self) -> int:
        """The size of the last snapshot's parts (0 without one), read off
        SQLite's record headers, not the parts."""
        if not self.enabled:
            return 0
        try:
            db = self._connect()
            try:
                row = db.execute("SELECT coalesce(sum(length(data)), 0) FROM snapshot").fetchone()
            finally:
                db.close()
        except sqlite3.Error:
            return 0  # load_snapshot says what is wrong
        return int(row[0]) if row is not None else 0

    def load_snapshot(self) -> dict[str, bytes] | None:
        """The last whole-index snapshot (`SymbolIndex.snapshot`), if any and
        if every part matches its checksum."""
        if not self.enabled:
            return None
        try:
            db = self._connect()
            try:
                rows = db.execute("SELECT part, data, sum FROM snapshot").fetchall()
            finally:
                db.close()
        except sqlite3.Error as error:
            log.warning("cache %s unreadable (%s); parsing instead", self.path, error)
            return None
        parts: dict[str, bytes] = {}
        for part, data, total in rows:
            if not isinstance(data, bytes) or _sum(data) != total:
                log.warning("cache %s: snapshot part %r failed its checksum", self.path, part)
                return None
            parts[part.decode("utf-8", "replace")] = data
        return parts or None

    @staticmethod
    def trusted(stamps: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
        """`stamps` (size, mtime_ns by path) as a snapshot may keep them:
        a file whose mtime is too recent to trust is stored as stale (its
        mtime -1), so the next start parses it again."""
        racy = Cache.settled_before()
        return {p: (s, -1 if m > racy else m) for p, (s, m) in stamps.items()}

    @staticmethod
    def settled_before() -> int:
        """The mtime_ns before which a stamp can be trusted now: a file
        written within `RACY_SECONDS` may change again under the same one."""
        return time.time_ns() - int(RACY_SECONDS * 1e9)

    def store_snapshot(self, parts: dict[str, Any]) -> None:
        """Queue a whole-index snapshot (`SymbolIndex.snapshot` of the
        `trusted` stamps). Its parts are written as they are: views of the
        index's columns, not copies (the snapshot being written was 40 MB
        of the Linux kernel's cold server a second after its index)."""
        if self.enabled:
            self._put(("snapshot", parts))

    # -- writing (background) ------------------------------------------------------
    def store(self, rows: Iterable[tuple[str, int, int, bytes]]) -> None:
        """Queue (path, size, mtime_ns, blob) rows for the writer thread."""
        now = time.time_ns()
        fresh = [
            (os.fsencode(p), s, -1 if now - m < RACY_SECONDS * 1e9 else m, d, _sum(d))
            for p, s, m, d in rows
            if s >= 0
        ]
        if fresh and self.enabled:
            self._put(("store", fresh))

    def forget(self, paths: Iterable[str]) -> None:
        gone = [os.fsencode(p) for p in paths]
        if gone and self.enabled:
            self._put(("forget", gone))

    def _put(self, item: tuple[str, _Rows]) -> None:
        self._queue.put(item)
        if self._writer is None:
            self._writer = threading.Thread(target=self._write, name="nearsym-cache", daemon=True)
            self._writer.start()

    def _write(self) -> None:
        """The writer thread: applies queued writes until told to stop.
        Invariant: it never dies while writes are queued (a failure of any
        kind disables the cache and it goes on draining the queue)."""
        try:
            db: sqlite3.Connection | None = self._connect()
        except (sqlite3.Error, OSError) as error:
            log.warning("cache disabled: %s", error)
            self.enabled = False
            db = None
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    if db is not None:
                        db.close()  # the last connection: checkpoints and drops the log
                    return
                if db is None or not self.enabled:
                    continue
                self._apply(db, *item)
            except Exception as error:  # a writer that died would leave flush() waiting
                log.warning("cache write failed (%s); cache disabled", error)
                self.enabled = False
            finally:
                # Not kept until the next write: a snapshot's parts (the
                # mention counts' bytes, the file table's: 20 MB on the
                # Linux kernel) would stay resident after it is on disk.
                item = None
                self._queue.task_done()

    def _apply(self, db: sqlite3.Connection, kind: str, rows: _Rows) -> None:
        started = time.perf_counter()
        with db:
            if kind == "store":
                db.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)", rows)
            elif kind == "snapshot":
                assert isinstance(rows, dict)
                db.execute("DELETE FROM snapshot")
                for part, data in rows.items():
                    _store_part(db, part, data)
            else:
                db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in rows])
        if kind == "snapshot":
            # Move the snapshot (hundreds of MB on a large tree) out of
            # the write-ahead log now: the next start would otherwise
            # read the whole log to index it before its first query.
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            assert isinstance(rows, dict)
            log.info(
                "cache %s: snapshot of %.0f MB written in %.2f s",
                self.path,
                sum(len(d) for d in rows.values()) / 1e6,
                time.perf_counter() - started,
            )
            # The index is built and on disk: the heap pages its
            # construction and this write freed go back to the system
            # (Linux kernel, cold server: resident 459 -> 429 MB).
            trim()

    def flush(self) -> None:
        """Wait until every queued write is on disk."""
        if self._writer is not None:
            self._queue.join()

    def close(self, timeout: float = 120) -> None:
        """Finish the queued writes (a snapshot of millions of definitions
        takes seconds) and stop the writer."""
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join(timeout=timeout)
            self._writer = None
