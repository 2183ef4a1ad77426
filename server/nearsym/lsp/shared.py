"""The shared index in the server: asked beside the live workspace, under a
deadline, merged as one more group of the rerank.

Design. Each query starts the shared pool's SQL (`index.shared_query`) on a
thread of its own before the local pools are pulled, so both run at once;
the local answer then waits for the shared pool only until the budget
(`sharedIndexBudgetMs`, default 150 ms, counted from the query's start) and
goes without it past that. The database is never reached from the event
loop: connections come from psycopg's pool on these threads.

Which rows: a repository the person has open locally (a workspace folder
that is its checkout, or that holds its checkout and indexes it) comes from
the live index only: its shared rows are left out in the SQL itself, so
unsaved edits and local changes always win and no definition shows twice.
A shared row of a repository checked out under a workspace folder but not
indexed there (an ignored nested checkout) opens from that checkout;
otherwise its location is the path the publisher recorded. Either way its
`containerName` names the repository.

Failures. A database that cannot be reached, refuses the login or holds
another schema version: one `window/showMessage` and one log line for the
outage, then local answers only, and a probe at most every `backoff`
seconds (1 s doubling to 60 s) started by a query, never waited for. A
database that is up but slower than the budget three queries in a row is
said once too; the answer never waits past the budget, and no more than
`MAX_IN_FLIGHT` shared queries run at once (a keystroke finding both
busy asks only the local index). Recovery is logged and said once.

Late rows. A request with a `partialResultToken` keeps the pool that missed
the budget: its local answer goes as partial results at the budget, and the
shared rows follow as later pages when the pool arrives within `LATE_WAIT`
of the query's start (`arrival`), unless the request was cancelled or a
newer `workspace/symbol` came meanwhile (`asked`): a page of an older query
would land in a picker that shows another one's answer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from nearsym.core.model import Symbol
from nearsym.index.namespace import Namespace

if TYPE_CHECKING:
    from nearsym.index.shared_query import Repository, SharedPool

log = logging.getLogger(__name__)

DEFAULT_BUDGET_MS = 150
"""How long an answer waits for the shared pool, from the query's start.
A person typing sees a keystroke's answer within about 100-200 ms as
immediate; the local answer usually takes 5-30 ms, and a database on the
same network answers the pool in 5-40 ms (docs/shared-index.md), so 150 ms
lets a healthy database join nearly every answer. A guess awaiting
measurement on real networks."""

MAX_IN_FLIGHT = 2
"""Shared queries running at once; more would queue behind a slow
database and answer keystrokes nobody waits for any more."""

SLOW_STREAK = 3
"""Queries in a row past the budget before the person is told."""

BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0
"""Seconds between probes of a failed database: 1 s, doubling, at most a
minute (a restart of the database is picked up within a minute)."""

STATEMENT_TIMEOUT_MS = 5000
"""The database cancels a shared query after this long, so a stuck one
gives its connection back."""

LATE_WAIT = STATEMENT_TIMEOUT_MS / 1000
"""Seconds from the query's start a request with a partial-result token
waits for a shared pool that missed the budget. Derived: the database
cancels the statement at `STATEMENT_TIMEOUT_MS`, so a longer wait could
only end in that error; a shorter one would drop pools a loaded database
still delivers (the kernel's pool alone: p99 681 ms, max 850 ms, against
the 150 ms budget; docs/shared-index.md)."""

REPOSITORIES_TTL = 30.0
"""Seconds the list of published repositories is reused (it decides which
are open locally) before it is read again."""


@dataclass(slots=True)
class Pending:
    """A shared pool on its way."""

    future: cf.Future[SharedPool] | None
    started: float
    deadline: float


class SharedIndex:
    """One configured shared index: its connections, health and deadline.

    `say(level, message)` tells the person (window/showMessage); it is
    called from worker threads, so it must be thread-safe."""

    def __init__(self, say: Callable[[str, str], None]) -> None:
        self.say = say
        self.url: str | None = None
        self.budget = DEFAULT_BUDGET_MS / 1000
        self._lock = threading.Lock()
        self._executor = _Workers(MAX_IN_FLIGHT + 1)
        self._pool: Any = None
        self._in_flight = 0
        self._failure: str | None = None
        """What is wrong, while the database is failed; None when healthy."""
        self._said: str | None = None
        self._next_probe = 0.0
        self._backoff = BACKOFF_FIRST
        self._probing = False
        self._slow = 0
        self._repositories: list[Repository] = []
        self._repositories_at = 0.0
        self._generation = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        """The server's event loop: messages are shown from it."""
        self._checkouts: dict[tuple[int, tuple[str, ...]], tuple[str | None, bool]] = {}
        self._checkouts_at = 0.0
        self._newest: asyncio.Event | None = None
        """Set when a newer `workspace/symbol` arrives (`asked`)."""

    # -- settings ------------------------------------------------------------
    def configure(self, url: str | None, budget_ms: int) -> None:
        """Use `url` (None: no shared index) from now on; connect in the
        background."""
        self.budget = max(0, budget_ms) / 1000
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        with self._lock:
            if url == self.url:
                return
            self.url = url
            self._generation += 1
            old, self._pool = self._pool, None
            self._failure = None
            self._said = None
            self._slow = 0
            self._backoff = BACKOFF_FIRST
            self._next_probe = 0.0
            self._repositories = []
        if old is not None:
            self._executor.submit(old.close)
        if url is not None:
            self._start_probe()

    @property
    def active(self) -> bool:
        return self.url is not None

    def close(self) -> None:
        with self._lock:
            self.url = None
            pool, self._pool = self._pool, None
        if pool is not None:
            self._executor.submit(pool.close, 1)
        self._executor.shutdown()

    # -- a query -------------------------------------------------------------
    def start(self, query: str, width: int, namespaces: Sequence[Namespace]) -> Pending | None:
        """Start the shared pool for `query` (None: not asked this time)."""
        if not query.strip():
            return None
        now = time.monotonic()
        with self._lock:
            if self.url is None:
                return None
            pool, generation = self._pool, self._generation
            healthy = self._failure is None and pool is not None
            probe = not healthy and now >= self._next_probe and not self._probing
            busy = healthy and self._in_flight >= MAX_IN_FLIGHT
            if healthy and not busy:
                self._in_flight += 1
        if busy:
            # The earlier queries are still running: this one would only
            # queue behind them. It counts as late.
            self._late(Pending(None, now, now))
            return None
        if not healthy:
            if probe:
                self._start_probe()
            return None
        try:
            skip = self._open_locally(namespaces)
            future = self._executor.submit(self._query, pool, generation, query, width, skip)
        except BaseException:
            with self._lock:
                self._in_flight -= 1
            raise
        return Pending(future, now, now + self.budget)

    def join(self, pending: Pending | None) -> SharedPool | None:
        """The shared pool if it arrives before the deadline, else None."""
        if pending is None or pending.future is None:
            return None
        try:
            pool = pending.future.result(timeout=max(0.0, pending.deadline - time.monotonic()))
        except cf.TimeoutError:
            self._late(pending)
            return None
        except Exception:
            return None  # already reported by _query
        if self._slow:
            with self._lock:
                self._slow = 0
                if self._said == "slow":
                    self._said = None  # a later slow spell is said again
            log.info("shared index: answering within the budget again")
        return pool

    def asked(self) -> asyncio.Event:
        """A `workspace/symbol` request begins (on the event loop): the
        event of the one before it is set, so its late page is not sent;
        returns this request's event."""
        if self._newest is not None:
            self._newest.set()
        self._newest = superseded = asyncio.Event()
        return superseded

    async def arrival(self, pending: Pending, superseded: asyncio.Event) -> SharedPool | None:
        """The pool that missed the budget, awaited without blocking the
        event loop until `LATE_WAIT` from the query's start or until
        `superseded` is set; None when it is late, failed (already
        reported by `_query`) or superseded. The query itself is never
        cancelled here: its worker counts it in flight until it ends."""
        if pending.future is None:
            return None
        wait = pending.started + LATE_WAIT - time.monotonic()
        if wait <= 0:
            return None
        pool = asyncio.wrap_future(pending.future)
        # A pool nobody awaits any more must not log "exception never retrieved".
        pool.add_done_callback(lambda f: f.cancelled() or f.exception())
        newer = asyncio.ensure_future(superseded.wait())
        either: set[asyncio.Future[Any]] = {pool, newer}
        try:
            await asyncio.wait(either, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        finally:
            newer.cancel()
        if superseded.is_set() or not pool.done() or pool.cancelled():
            return None
        if pool.exception() is not None:
            return None
        log.info(
            "shared index: pool %.0f ms after the query's start, sent as a later page",
            (time.monotonic() - pending.started) * 1000,
        )
        return pool.result()

    def _late(self, pending: Pending) -> None:
        waited = (time.monotonic() - pending.started) * 1000
        with self._lock:
            self._slow += 1
            streak = self._slow
        log.info("shared index: no pool within %.0f ms; answered locally", waited)
        if streak == SLOW_STREAK:
            self._tell(
                "Warning",
                f"nearsym: the shared index answers slower than {self.budget * 1000:.0f} ms;"
                " answering from the local index until it is faster",
                once_per="slow",
            )

    def _query(
        self, pool: Any, generation: int, query: str, width: int, skip: list[int]
    ) -> SharedPool:
        import psycopg

        from nearsym.index.shared_query import retrieve

        try:
            with pool.connection(timeout=max(1.0, self.budget * 4)) as conn:
                return retrieve(conn, query, width, skip)
        except (psycopg.errors.QueryCanceled, psycopg.errors.LockNotAvailable):
            raise  # statement or lock timeout: slow, not down; _late says so
        except Exception as error:
            self._failed(generation, error)
            raise
        finally:
            with self._lock:
                self._in_flight -= 1

    # -- health ----------------------------------------------------------------
    def _failed(self, generation: int, error: BaseException) -> None:
        from nearsym.index.shared import describe

        reason = describe(error)
        with self._lock:
            if generation != self._generation:
                return
            self._failure = reason
            pool, self._pool = self._pool, None
            self._next_probe = time.monotonic() + self._backoff
        if pool is not None:
            self._executor.submit(pool.close, 1)
        log.warning("shared index %s: %s; answering locally", _safe(self.url), reason)
        self._tell(
            "Error",
            f"nearsym: the shared index cannot be used ({reason}); answering from the"
            " local index and retrying",
            once_per="down",
        )

    def _start_probe(self) -> None:
        with self._lock:
            if self._probing or self.url is None:
                return
            self._probing = True
            url, generation = self.url, self._generation
        self._executor.submit(self._probe, url, generation)

    def _probe(self, url: str, generation: int) -> None:
        """Connect, check the schema, read the repositories; on success open
        the pool, else back off."""
        from psycopg_pool import ConnectionPool

        from nearsym.index.shared import check_schema, connect
        from nearsym.index.shared_query import repositories

        try:
            with connect(url, connect_timeout=2) as conn:
                check_schema(conn)
                found = repositories(conn)
            pool = ConnectionPool(
                url,
                min_size=1,
                max_size=MAX_IN_FLIGHT,
                kwargs={"autocommit": True, "options": _OPTIONS, "connect_timeout": 2},
                open=False,
                name="nearsym-shared",
            )
            pool.open(wait=True, timeout=5)
        except Exception as error:
            with self._lock:
                self._probing = False
                if generation != self._generation:
                    return
                first = self._failure is None
                self._failure = reason = _reason(error)
                self._next_probe = time.monotonic() + self._backoff
                self._backoff = min(BACKOFF_MAX, self._backoff * 2)
            if first:
                log.warning("shared index %s: %s; answering locally", _safe(url), reason)
            else:
                log.info("shared index %s still unusable: %s", _safe(url), reason)
            self._tell(
                "Error",
                f"nearsym: the shared index cannot be used ({reason}); answering from the"
                " local index and retrying",
                once_per="down",
            )
            return
        with self._lock:
            self._probing = False
            if generation != self._generation:
                pool.close(timeout=1)
                return
            recovered = self._failure is not None
            self._pool = pool
            self._failure = None
            self._backoff = BACKOFF_FIRST
            self._repositories = found
            self._repositories_at = time.monotonic()
        log.info("shared index %s: %d repositories", _safe(url), len(found))
        if recovered:
            self._tell("Info", "nearsym: the shared index is back", once_per=None)

    def _tell(self, level: str, message: str, once_per: str | None) -> None:
        with self._lock:
            if once_per is not None and self._said == once_per:
                return
            self._said = once_per
        loop = self._loop
        try:
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(self.say, level, message)
            else:
                self.say(level, message)
        except Exception:
            log.exception("could not show a message")

    # -- which repositories are open locally -----------------------------------
    def repositories(self) -> list[Repository]:
        """The published repositories (read at most every
        `REPOSITORIES_TTL` seconds, on a worker; the last list meanwhile)."""
        with self._lock:
            stale = time.monotonic() - self._repositories_at > REPOSITORIES_TTL
            pool = self._pool if stale else None
            if stale:
                self._repositories_at = time.monotonic()
            found = self._repositories
        if pool is not None:
            self._executor.submit(self._refresh, pool)
        return found

    def _refresh(self, pool: Any) -> None:
        from nearsym.index.shared_query import repositories

        try:
            with pool.connection(timeout=2) as conn:
                found = repositories(conn)
        except Exception as error:
            log.info("shared index: could not read the repositories: %s", error)
            return
        with self._lock:
            self._repositories = found

    def _open_locally(self, namespaces: Sequence[Namespace]) -> list[int]:
        return [r.id for r in self.repositories() if self._checkout(r, namespaces)[1]]

    def _checkout(
        self, repo: Repository, namespaces: Sequence[Namespace]
    ) -> tuple[str | None, bool]:
        """`local_checkout`, remembered for `REPOSITORIES_TTL` seconds per
        set of workspace folders (it may read every indexed path)."""
        key = (repo.id, tuple(ns.root for ns in namespaces))
        now = time.monotonic()
        with self._lock:
            if now - self._checkouts_at > REPOSITORIES_TTL:
                self._checkouts.clear()
                self._checkouts_at = now
            found = self._checkouts.get(key)
        if found is None:
            found = local_checkout(repo, namespaces)
            with self._lock:
                self._checkouts[key] = found
        return found

    def display(self, pool: SharedPool, namespaces: Sequence[Namespace]) -> dict[int, Symbol]:
        """Per shared symbol (by `id`): the symbol as the person sees it,
        opening from a local checkout where there is one, its container
        naming the repository."""
        out: dict[int, Symbol] = {}
        checkouts: dict[int, str | None] = {}
        for symbol, repo in zip(pool.symbols, pool.repositories, strict=True):
            if repo.id not in checkouts:
                checkouts[repo.id] = self._checkout(repo, namespaces)[0]
            root = checkouts[repo.id] or symbol.root
            container = f"{symbol.container} ({repo.name})" if symbol.container else repo.name
            out[id(symbol)] = Symbol(
                symbol.name,
                symbol.kind,
                container,
                root,
                symbol.path,
                symbol.span,
                symbol.language,
                symbol.local,
                symbol.deprecated,
            )
        return out


class _Workers:
    """A few daemon threads running jobs, returning futures.

    Not `ThreadPoolExecutor`: its threads are joined when the interpreter
    exits, so a query waiting on a locked table or a connection attempt to
    a host that does not answer would hold up the server's exit. Nothing
    these threads do needs finishing: a dropped query is a pool nobody waits
    for, and the database ends the session when the connection goes."""

    def __init__(self, count: int) -> None:
        self._jobs: queue.SimpleQueue[
            tuple[cf.Future[Any], Callable[..., Any], tuple[Any, ...]] | None
        ] = queue.SimpleQueue()
        self._count = count
        for n in range(count):
            threading.Thread(target=self._run, name=f"nearsym-shared-{n}", daemon=True).start()

    def submit(self, job: Callable[..., _T], *args: Any) -> cf.Future[_T]:
        future: cf.Future[_T] = cf.Future()
        self._jobs.put((future, job, args))
        return future

    def shutdown(self) -> None:
        for _ in range(self._count):
            self._jobs.put(None)

    def _run(self) -> None:
        while (item := self._jobs.get()) is not None:
            future, job, args = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job(*args))
            except BaseException as error:
                future.set_exception(error)


_T = TypeVar("_T")


_OPTIONS = (
    f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c lock_timeout={STATEMENT_TIMEOUT_MS}"
    " -c max_parallel_workers_per_gather=0 -c default_transaction_read_only=on"
)
"""Session settings of the server's connections: a query never runs on past
`STATEMENT_TIMEOUT_MS`; no parallel workers (the tiers' UNION ALL relies on
its branches running in order under the LIMIT); read-only."""


def local_checkout(repo: Repository, namespaces: Sequence[Namespace]) -> tuple[str | None, bool]:
    """Where `repo` is checked out under a workspace folder, if it is, and
    whether the live index holds it (then its shared rows are left out).

    A workspace folder is the checkout when it is the path the publisher
    recorded or has the repository's name; a folder holds the checkout as
    its subfolder of the repository's name, or the recorded path inside it.
    """
    for ns in namespaces:
        root = ns.root
        if os.path.normpath(root) == os.path.normpath(repo.root_path) or (
            os.path.basename(os.path.normpath(root)) == repo.name
        ):
            return root, True
    for ns in namespaces:
        root = ns.root
        inside = [os.path.join(root, repo.name)]
        if _within(repo.root_path, root):
            inside.insert(0, repo.root_path)
        for candidate in inside:
            if os.path.isdir(candidate):
                rel = os.path.relpath(candidate, root).replace(os.sep, "/") + "/"
                indexed = any(f.startswith(rel) for f in ns.index.files)
                return candidate, indexed
    return None, False


def _within(path: str, root: str) -> bool:
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path != root and path.startswith(root.rstrip(os.sep) + os.sep)


def _reason(error: BaseException) -> str:
    from nearsym.index.shared import describe

    return describe(error)


def _safe(url: str | None) -> str:
    """`url` without its password, for the log."""
    if not url:
        return ""
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        parts = conninfo_to_dict(url)
        if "password" in parts:
            parts["password"] = "***"
        return make_conninfo("", **parts)
    except Exception:
        return "(the configured database)"
