"""The answer to `workspace/symbol`: ranked, off the event loop, never
naming a file that is gone.

Searches run on one worker thread, one at a time, so the event loop keeps
reading messages: a `$/cancelRequest` for a queued or running search
answers RequestCancelled at once (the superseded keystroke's work is
dropped).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from nearsym.core.model import Symbol
from nearsym.core.query import Query
from nearsym.core.rank import RankPolicy, WorkspaceHints, pool_width
from nearsym.core.sortkey import ExplainedKey
from nearsym.index.namespace import Namespace
from nearsym.index.search import answer
from nearsym.lsp.dependencies import Dependencies
from nearsym.lsp.shared import SharedIndex
from nearsym.workspace.imports import Relations
from nearsym.workspace.live import Change, LiveWorkspace
from nearsym.workspace.members import WorkspaceContext

if TYPE_CHECKING:
    from nearsym.index.shared_query import SharedPool

log = logging.getLogger(__name__)

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

    async def results(
        self,
        query: str,
        open_file: str | None,
        keys: dict[int, ExplainedKey] | None = None,
        limit: int | None = None,
    ) -> list[Symbol]:
        """The answer, never naming a file that is gone. A query longer than
        `MAX_QUERY_CHARS` (without its spaces) matches no name: the answer
        is empty, found without reading it all. `keys` gets each row's sort
        key by `id()` (`nearsym.explain`); `limit` defaults to `maxResults`."""
        await self.settle()
        if len(query) > MAX_QUERY_CHARS and (
            len(query) > 16 * MAX_QUERY_CHARS or len("".join(query.split())) > MAX_QUERY_CHARS
        ):
            return []
        extra = self.dependencies.namespaces(Query.parse(query)) if self.dependencies else []
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.searcher, self._results, query, open_file, extra, keys, limit
        )

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
            if not arrived or shared is None:
                return [s for s in found if self._still_there(s)]
            shown = shared.display(arrived[0], self.live.namespaces)
            out = []
            for s in found:
                if id(s) in shown or self._still_there(s):
                    row = shown.get(id(s)) or s
                    if keys is not None and row is not s and id(s) in keys:
                        keys[id(row)] = keys[id(s)]
                    out.append(row)
            return out

    def _still_there(self, symbol: Symbol) -> bool:
        """Never answer with a file that is gone (a deletion the watcher has
        not reported yet): buffers count as present."""
        path = symbol.file
        if path in self.live.buffers or os.path.exists(path):
            return True
        ns = self.live.namespace_of(path)
        if ns is not None:
            self.live.disk_changed([(Change.DELETED, path)])
        return False
