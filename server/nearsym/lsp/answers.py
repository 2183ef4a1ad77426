"""The answer to `workspace/symbol`: ranked, off the event loop, never
naming a file that is gone.

Searches run on one worker thread, one at a time, so the event loop keeps
reading messages: a `$/cancelRequest` for a queued or running search
answers RequestCancelled at once (the superseded keystroke's work is
dropped). The rows of a plain `workspace/symbol` answer are turned into
their JSON text on that thread too (`encoded`, `lsp.encoded`), so the loop
does not build, unstructure or dump them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, TypeVar

from nearsym.core.model import Symbol
from nearsym.core.query import Query
from nearsym.core.rank import RankPolicy, WorkspaceHints, pool_width
from nearsym.core.sortkey import ExplainedKey
from nearsym.index.namespace import Namespace
from nearsym.index.search import answer
from nearsym.lsp.encoded import EncodedResult, RowEncoder
from nearsym.lsp.shared import Pending, SharedIndex
from nearsym.workspace.imports import Relations
from nearsym.workspace.live import Change, LiveWorkspace
from nearsym.workspace.members import WorkspaceContext

if TYPE_CHECKING:
    from nearsym.index.shared_query import SharedPool
    from nearsym.lsp.dependencies import Dependencies

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_QUERY_CHARS = 1024
"""Longest query searched: every character of a query must appear in a
name it matches, and no definition's qualified name comes near this
length, so a longer query would only cost time (a 50 MB one, minutes)."""


class Answers:
    """Searches of the live workspace."""

    def __init__(
        self,
        live: LiveWorkspace,
        settle: Callable[[], Awaitable[None]],
        shared: SharedIndex | None = None,
        dependencies: Dependencies | None = None,
    ) -> None:
        self.live = live
        self.dependencies = dependencies
        """Which dependency namespaces a query asks (`lsp.dependencies`)."""
        self.shared = shared
        """Asked beside the namespaces, under its deadline (`lsp.shared`)."""
        self.settle = settle
        """Let the changes that came before a query land (briefly)."""
        self.relations = Relations()
        self.workspace = WorkspaceContext(self.relations)
        self.searcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nearsym-search")
        self.rows = RowEncoder()
        """Used on `searcher` only."""

    def warm(self, open_file: str, current: Callable[[], bool]) -> asyncio.Future[None]:
        """Read what the open file says to the ranking (the files it
        imports, its classes and their bases, `related_files` and `hints`)
        now, on the search thread, so that the first query after a switch
        finds it ready: on CPython's library that first query took 25-570
        ms, most of it parsing the files the open one imports. Not done
        when `current()` says the focus has moved on by then."""

        def read() -> None:
            if not current():
                return
            started = time.perf_counter()
            with self.live.lock:
                self.related_files(open_file)
                self.hints(open_file)
            log.debug(
                "read ahead what %s says: %.0f ms",
                open_file,
                1000 * (time.perf_counter() - started),
            )

        return asyncio.get_running_loop().run_in_executor(self.searcher, read)

    async def results(
        self,
        query: str,
        open_file: str | None,
        keys: dict[int, ExplainedKey] | None = None,
        limit: int | None = None,
        late: list[Pending] | None = None,
    ) -> list[Symbol]:
        """The answer, never naming a file that is gone. A query longer than
        `MAX_QUERY_CHARS` (without its spaces) matches no name: the answer
        is empty, found without reading it all. `keys` gets each row's sort
        key by `id()` (`nearsym.explain`); `limit` defaults to `maxResults`.
        `late` gets the shared pool that missed the budget, if one did
        (for `late_rows`)."""
        return await self._search(query, open_file, _unchanged, keys, limit, late)

    async def encoded(
        self, query: str, open_file: str | None, supported: frozenset[int]
    ) -> EncodedResult:
        """`results` as the JSON text of its `WorkspaceSymbol` rows (kinds
        the client knows, `supported`), built on the search thread."""

        def encode(found: list[Symbol]) -> EncodedResult:
            return self.rows.encode(found, supported)

        return await self._search(query, open_file, encode)

    def encoded_now(
        self, query: str, open_file: str | None, supported: frozenset[int]
    ) -> EncodedResult:
        """`encoded`, on this thread, waiting for nothing: a restart's first
        queries, answered before the server has started (`opening`)."""
        found = [] if _too_long(query) else self._results(query, open_file, [])
        return self.rows.encode(found, supported)

    async def _search(
        self,
        query: str,
        open_file: str | None,
        finish: Callable[[list[Symbol]], T],
        keys: dict[int, ExplainedKey] | None = None,
        limit: int | None = None,
        late: list[Pending] | None = None,
    ) -> T:
        """The answer, then `finish` of it, both on the search thread."""
        await self.settle()
        if _too_long(query):
            return finish([])
        extra = self.dependencies.namespaces(Query.parse(query)) if self.dependencies else []

        def search() -> T:
            return finish(self._results(query, open_file, extra, keys, limit, late))

        return await asyncio.get_running_loop().run_in_executor(self.searcher, search)

    async def late_rows(
        self,
        query: str,
        open_file: str | None,
        pending: Pending,
        first: list[Symbol],
        superseded: asyncio.Event,
    ) -> list[Symbol]:
        """The shared rows of a pool that missed the budget, to follow
        `first` (the answer already sent) as a later partial result.

        - Waits for the pool up to `shared.LATE_WAIT` from the query's
          start, off the loop; late, failed or `superseded`: none.
        - Ranked by the same rerank as the merged answer, as the only
          group (the open file, its imports and classes as for `first`);
          shown as the merged answer shows them (a local checkout's path,
          the repository in `containerName`).
        - Repositories open locally were left out by the query itself;
          rows already in `first` are left out too.
        - At most `maxResults` minus the rows of `first`.
        """
        shared = self.shared
        if shared is None:
            return []
        pool = await shared.arrival(pending, superseded)
        if pool is None or superseded.is_set():
            return []
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self.searcher, self._late_rows, shared, query, open_file, pool, first
            )
        except Exception:  # the answer is already out; a late page is extra
            log.exception("could not rank the late shared rows of %r", query)
            return []

    def _late_rows(
        self,
        shared: SharedIndex,
        query: str,
        open_file: str | None,
        pool: SharedPool,
        first: list[Symbol],
    ) -> list[Symbol]:
        limit = self.live.config.max_results
        room = limit - len(first)
        if room <= 0 or not pool.symbols:
            return []
        with self.live.lock:
            related = self.related_files(open_file)
            hints = self.hints(open_file)
            ranked = answer(
                [], query, limit, open_file, None, related, lambda: [pool.symbols], hints
            )
            shown = shared.display(pool, self.live.namespaces)
        seen = {_identity(s) for s in first}
        out: list[Symbol] = []
        for s in ranked:
            row = shown.get(id(s), s)
            if _identity(row) in seen:
                continue
            seen.add(_identity(row))
            out.append(row)
            if len(out) == room:
                break
        return out

    def related_files(self, open_file: str | None) -> frozenset[str]:
        """Files the open file imports, read from its buffer when it is open."""
        if open_file is None:
            return frozenset()
        source = self.live.buffers.get(open_file)
        try:
            return self.relations.related_files(open_file, self.live.namespaces, source)
        except Exception:  # a ranking hint must never cost an answer
            log.exception("could not read the imports of %s", open_file)
            return frozenset()

    def hints(self, open_file: str | None) -> WorkspaceHints:
        """The open file's classes and the packages' re-exports, read from
        its buffer when it is open."""
        source = self.live.buffers.get(open_file) if open_file else None
        try:
            return self.workspace.hints(open_file, self.live.namespaces, RankPolicy(), source)
        except Exception:  # a ranking hint must never cost an answer
            log.exception("could not read the classes around %s", open_file)
            return WorkspaceHints()

    def _results(
        self,
        query: str,
        open_file: str | None,
        dependencies: list[Namespace],
        keys: dict[int, ExplainedKey] | None = None,
        limit: int | None = None,
        late: list[Pending] | None = None,
    ) -> list[Symbol]:
        limit = self.live.config.max_results if limit is None else limit
        shared = self.shared
        # The shared pool's SQL starts first and runs while the local pools
        # are pulled; `answer` joins it (within its budget) before ranking.
        pending = (
            shared.start(query, pool_width(0, limit), self.live.namespaces) if shared else None
        )
        arrived: list[SharedPool] = []

        def shared_pool() -> list[list[Symbol]]:
            pool = shared.join(pending) if shared is not None else None
            if pool is None:
                if late is not None and pending is not None:
                    late.append(pending)
                return []
            arrived.append(pool)
            return [pool.symbols]

        with self.live.lock:
            related = self.related_files(open_file)
            hints = self.hints(open_file)
            found = answer(
                [*self.live.searched(), *dependencies],
                query,
                limit,
                open_file,
                None,
                related,
                shared_pool if pending is not None else None,
                hints,
                keys,
            )
            there: dict[str, bool] = {}
            if not arrived or shared is None:
                return [s for s in found if self._still_there(s, there)]
            shown = shared.display(arrived[0], self.live.namespaces)
            out = []
            for s in found:
                if id(s) in shown or self._still_there(s, there):
                    row = shown.get(id(s)) or s
                    if keys is not None and row is not s and id(s) in keys:
                        keys[id(row)] = keys[id(s)]
                    out.append(row)
            return out

    def _still_there(self, symbol: Symbol, there: dict[str, bool]) -> bool:
        """Never answer with a file that is gone (a deletion the watcher has
        not reported yet): buffers count as present. `there` holds the
        files of this answer already looked at: each is looked at once
        (rows of one file are common; on the bench's Go mix at 500 rows,
        5.0 ms of `stat` an answer became 4.2, medians)."""
        path = symbol.file
        known = there.get(path)
        if known is not None:
            return known
        present = path in self.live.buffers or os.path.exists(path)
        there[path] = present
        if not present and self.live.namespace_of(path) is not None:
            self.live.disk_changed([(Change.DELETED, path)])
        return present


def _too_long(query: str) -> bool:
    """Longer than `MAX_QUERY_CHARS` without its spaces (told without
    reading all of a huge one)."""
    return len(query) > MAX_QUERY_CHARS and (
        len(query) > 16 * MAX_QUERY_CHARS or len("".join(query.split())) > MAX_QUERY_CHARS
    )


def _unchanged(found: list[Symbol]) -> list[Symbol]:
    return found


def _identity(symbol: Symbol) -> tuple[str, str, int, int]:
    """Where a row opens and what it names: a late shared row equal to one
    already sent is not sent again."""
    return symbol.file, symbol.name, symbol.span.line, symbol.span.col
