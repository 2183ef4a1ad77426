"""The language server's state: one object holding each concern's part.

`NearsymServer` is pygls' `LanguageServer` with the live workspace and the
parts that act on it, one module each:

- `focus`: which file is open (read from every raw message, `protocol`);
- `buffers`: the editor's buffers, reparsed after a debounce;
- `indexing`: cold indexes in the background, with work-done progress;
- `watching`: the client's file watcher or our own;
- `settings`: initializationOptions and configuration changes;
- `answers`: the ranked answer, off the event loop;
- `outside`: files opened outside every workspace folder;
- `shared`: a team's shared index (PostgreSQL), asked beside the answer;
- `dependencies`: the project's dependencies, indexed after the workspace.

The handlers, named after the LSP methods, are in `handlers`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from nearsym import __version__
from nearsym.core.model import Symbol
from nearsym.index.allocator import idle
from nearsym.lsp.answers import Answers
from nearsym.lsp.buffers import Buffers
from nearsym.lsp.convert import client_symbol_kinds, workspace_symbol
from nearsym.lsp.dependencies import Dependencies
from nearsym.lsp.early import Opened
from nearsym.lsp.focus import Focus
from nearsym.lsp.indexing import Indexing
from nearsym.lsp.outside import Outside
from nearsym.lsp.protocol import NearsymProtocol
from nearsym.lsp.shared import SharedIndex
from nearsym.lsp.watching import Watching
from nearsym.workspace.config import Config
from nearsym.workspace.live import LiveWorkspace

log = logging.getLogger(__name__)

WARM_DELAY = 0.15
"""Seconds the focus must rest on a file before what it says to the
ranking is read ahead of a query (`Answers.warm`): a session restored
opens several files at once, and only the last needs it; a person looks
at a file longer than this before typing a query."""

IDLE_TRIM = 0.5
"""Seconds of quiet (no message from the client, no change being applied)
after which the heap's free pages go back to the system (`allocator.idle`,
on the search thread): a query's temporaries leave glibc's heaps holding
freed pages. In process on the Linux kernel, two passes of the bench's
query mix left 42 MB resident that one `malloc_trim` (6.5 ms) gave back.
The first time after an index, the start-up's garbage is collected too."""

SETTLE_WAIT = 0.1
"""Longest a query waits for the changes before it (a guess to measure:
one small file or buffer is parsed in milliseconds; the answer must come
within 200 ms even while a re-walk or a 10 MB buffer's parse runs). The
wait is counted from the change's start, not the query's: a change older
than this is not waited for again by every query that follows it."""
OPEN_WAIT = 1.0
"""Longest a query waits for a buffer just opened (one parsed in this
process: `buffers.IN_PROCESS_BYTES` at most, so its parse is bounded),
whose symbols nothing else gives: the first parse of a language also loads
its grammar (12 ms here), which a loaded machine stretched past
`SETTLE_WAIT` (213 ms seen with three other processes busy), and the
first answer then missed the file just opened."""
START_WAIT = 0.5
"""Longest the queries of a start wait, in all, for its index to have
anything to answer from (`Indexing.searchable`): a restart's snapshot
installed (Go's library: 60-100 ms after `initialized`), a cold index's
first files parsed near the open file. An answer from the empty index
was an empty list, which an editor shows until the next keystroke, and
its ranking hints (the open file's imports and classes, 50-90 ms of the
interpreter on Go's library) took turns with the snapshot's read."""


class NearsymServer(LanguageServer):
    def __init__(self, opened: Opened | None = None) -> None:
        """`opened`: what the start read before pygls was imported."""
        super().__init__(
            "nearsym",
            __version__,
            protocol_cls=NearsymProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        live = opened.live if opened is not None else None
        self.live = live if live is not None else LiveWorkspace(Config())
        self.ready = False
        """Set by `initialize`: requests before it are refused."""
        self.focus = Focus()
        self.symbol_kinds = client_symbol_kinds(None)
        self.tasks: set[asyncio.Future[Any]] = set()
        self.jobs: set[asyncio.Future[Any]] = set()
        """Jobs off the loop no query waits for (`track_background`)."""
        self.changes: set[asyncio.Future[Any]] = set()
        """Buffer and disk changes being applied off the loop (see `settle`)."""
        self.opening: set[asyncio.Future[Any]] = set()
        """Buffers just opened, being parsed here (see `settle`)."""
        self._since: dict[asyncio.Future[Any], float] = {}
        """When each change or opening began (the loop's clock)."""
        self.buffers = Buffers(self.live, self._buffer_text, self.track)
        self.watching = Watching(self.live, self.spawn, self.track)
        self.indexing = Indexing(
            self, self.live, lambda: self.focus.path, self.watching.ready, self._quiet_later
        )
        if opened is not None:
            walks = opened.walks if opened.indexed else None
            self.indexing.adopt(
                opened.installed, opened.caches, walks, opened.workers, opened.prefetches
            )
            self.watching.adopted = opened.watcher
            self.watching.registered = opened.registered
        self.shared = SharedIndex(self._say)
        """A team's shared index, when the settings name one."""
        self.dependencies = Dependencies(self.live, self.indexing, self.spawn)
        """The project's dependencies as namespaces, when asked."""
        self.answers = Answers(self.live, self.settle, self.shared, self.dependencies)
        self.outside = Outside(self.live, self.indexing, self.watching, self.spawn)
        self._warming: asyncio.TimerHandle | None = None
        self._trimming: asyncio.TimerHandle | None = None
        self._start_deadline: float | None = None
        """When the start's queries stop waiting for the index (`START_WAIT`)."""
        self.on_exit: list[Callable[[], None]] = []
        """Quick writes for the next start, done at `shutdown` and `exit`
        (`prebuilt.cattrs_code`)."""

    def observe(self, data: dict[str, Any]) -> None:
        """Read what a raw message says about the open file; when the focus
        moves to another file, read what that file says to the ranking
        ahead of the first query (`Answers.warm`); once the client has
        been quiet for `IDLE_TRIM`, trim the heap."""
        self._quiet_later()
        before = self.focus.path
        self.focus.observe_message(data)
        path = self.focus.path
        if path is None or path == before or not self.ready:
            return
        if self._warming is not None:
            self._warming.cancel()
        self._warming = asyncio.get_running_loop().call_later(WARM_DELAY, self._warm, path)

    def _warm(self, path: str) -> None:
        self._warming = None
        self.track_background(self.answers.warm(path, lambda: self.focus.path == path))

    def _quiet_later(self) -> None:
        """(Re)start the wait for `IDLE_TRIM` of quiet."""
        if self._trimming is not None:
            self._trimming.cancel()
        self._trimming = asyncio.get_running_loop().call_later(IDLE_TRIM, self._trim)

    def _trim(self) -> None:
        self._trimming = None
        if self.changes or self.opening:  # still applying: its end restarts the wait
            return
        try:
            trimmed = asyncio.get_running_loop().run_in_executor(self.answers.searcher, idle)
        except RuntimeError:  # the search thread is gone: shutting down
            return
        self.track_background(trimmed)

    def spawn(self, coroutine: Any) -> None:
        """Run a background job, keeping a reference so it is not collected,
        and logging (never raising) what it fails with."""
        _hold(asyncio.ensure_future(coroutine), self.tasks, "background job failed")

    def track_background(self, job: asyncio.Future[Any]) -> None:
        """A job off the loop no query waits for: kept referenced until it
        ends, what it fails with logged."""
        _hold(job, self.jobs, "background job failed")

    def track(self, change: asyncio.Future[Any], opening: bool = False) -> None:
        """A change being applied off the loop, which queries wait for (up
        to `OPEN_WAIT` for a buffer just `opening`, else `SETTLE_WAIT`)."""
        waiting = self.opening if opening else self.changes
        self._since[change] = asyncio.get_running_loop().time()
        change.add_done_callback(self._since.pop)
        _hold(change, waiting, "applying a change failed", self._quiet_later)

    async def settle(self) -> None:
        """Before a query: start every pending buffer reparse, wait for the
        start's first results (`START_WAIT`), and wait for the changes that
        came before it until each is `SETTLE_WAIT` old (a small buffer just
        opened: `OPEN_WAIT`). A small edit is applied well
        within that, so the answer reflects it; a re-walk or a large
        buffer's parse is not waited for past it (the answer then comes from
        the index as it stands, being updated). Every query during a
        kernel's re-walk (a `.gitignore` saved) waited the whole
        `SETTLE_WAIT` again: 128 ms a query where 14 ms do without one."""
        self.buffers.flush()
        loop = asyncio.get_running_loop()
        await self._first_results(loop)
        for waiting, longest in ((self.changes, SETTLE_WAIT), (self.opening, OPEN_WAIT)):
            start = loop.time()
            until = {f: self._since.get(f, start) + longest for f in waiting}
            while True:  # until each is done or past its own end
                now = loop.time()
                young = [f for f, end in until.items() if end > now and not f.done()]
                if not young:
                    break
                await asyncio.wait(young, timeout=min(until[f] for f in young) - now)

    async def _first_results(self, loop: asyncio.AbstractEventLoop) -> None:
        """Before the start's index has anything to answer from, wait for
        it, until `START_WAIT` after the first query that waited: a client
        that never sends `initialized`, or an index whose first results
        are slow to come, delays the start's queries by that much in all."""
        searchable = self.indexing.searchable
        if searchable.is_set() or not self.live.namespaces:
            return
        if self._start_deadline is None:
            self._start_deadline = loop.time() + START_WAIT
        left = self._start_deadline - loop.time()
        if left > 0:
            try:
                await asyncio.wait_for(searchable.wait(), left)
            except TimeoutError:
                log.info("answering before the index has anything to answer from")

    def to_lsp(self, symbol: Symbol) -> types.WorkspaceSymbol:
        return workspace_symbol(symbol, self.symbol_kinds)

    def use_shared_index(self, config: Config) -> None:
        """Settings `sharedIndex` and `sharedIndexBudgetMs` (`lsp.shared`)."""
        self.shared.configure(config.shared_index, config.shared_index_budget_ms)

    def _say(self, level: str, message: str) -> None:
        self.window_show_message(
            types.ShowMessageParams(type=getattr(types.MessageType, level), message=message)
        )

    def close(self) -> None:
        """Shutdown: stop the watcher, the background jobs, the pool, the
        caches and the shared index, without waiting for any of them."""
        for timer in (self._warming, self._trimming):
            if timer is not None:
                timer.cancel()
        self.shared.close()
        self.watching.close()
        for task in list(self.tasks):
            task.cancel()
        self.indexing.stop()
        self.buffers.close()

    def terminate(self) -> None:
        """Exit: kill our helper processes now (the watcher, the pool's
        workers); the forkserver ends with this process."""
        self.close()
        self.watching.kill()
        self.indexing.workers.kill()
        self.buffers.close()

    def finish_writes(self, seconds: float) -> None:
        self.indexing.finish_writes(seconds)
        for write in self.on_exit:
            try:
                write()
            except Exception:  # what the next start reads: never this one's exit
                log.exception("could not write what the next start reads")

    def _buffer_text(self, uri: str) -> bytes | None:
        if uri not in self.workspace.text_documents:
            return None
        return self.workspace.get_text_document(uri).source.encode("utf-8", "surrogatepass")


def _hold(
    job: asyncio.Future[Any],
    held: set[asyncio.Future[Any]],
    failure: str,
    then: Callable[[], None] | None = None,
) -> None:
    """Keep `job` in `held` until it ends (so it is not collected, and so
    whoever reads `held` sees it running), then log what it failed with as
    `failure` and call `then`."""
    held.add(job)

    def done(f: asyncio.Future[Any]) -> None:
        held.discard(f)
        if then is not None:
            then()
        if not f.cancelled() and f.exception() is not None:
            log.error(failure, exc_info=f.exception())

    job.add_done_callback(done)
