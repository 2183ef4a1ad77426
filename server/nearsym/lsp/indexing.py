"""Cold indexes in the background, with work-done progress.

`indexer.index_namespace` runs on a thread: the open file's folder first,
then the cache's still-valid files, then the rest, nearest first, on a
process pool. Results are applied in batches under the workspace lock, so
queries answer from what is indexed so far; a file open in a buffer keeps
the buffer's symbols. The segments are merged at the end, outside the lock;
the process's memory is settled (`allocator.settle`) after the progress
ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from nearsym.index.allocator import settle
from nearsym.index.cache import Cache
from nearsym.index.namespace import Namespace
from nearsym.workspace.coldstats import ColdStats
from nearsym.workspace.config import Config, index_key
from nearsym.workspace.dependencies import walk_dependency
from nearsym.workspace.discovery import WalkReport
from nearsym.workspace.indexer import index_namespace
from nearsym.workspace.live import LiveTarget, LiveWorkspace
from nearsym.workspace.pool import Workers
from nearsym.workspace.prefetch import Prefetch

log = logging.getLogger(__name__)

PROGRESS_INTERVAL = 0.2
"""Seconds between progress reports, so a fast index does not flood the client."""
PROGRESS_MIN_FILES = 200
"""A re-index of fewer files ends before a progress bar could be read."""
TOKEN_WAIT = 5.0
"""Seconds an index that has ended waits for the client to take its
progress token (`window/workDoneProgress/create`), so that the progress it
asked for is shown begun and ended; after that, none is shown."""
MAX_PROBLEM_MESSAGES = 3
"""Bad ignore-file lines shown per walk (each is logged); more would bury
the editor in pop-ups."""


class Indexing:
    """The cold indexes of a server's namespaces, and their process pool."""

    def __init__(
        self,
        server: LanguageServer,
        live: LiveWorkspace,
        focus: Callable[[], str | None],
        watch_ready: threading.Event,
        quiet: Callable[[], None] = lambda: None,
    ) -> None:
        self.server = server
        """For work-done progress."""
        self.quiet = quiet
        """Asks for the housekeeping done once the client is quiet
        (`allocator.idle`)."""
        self.live = live
        self.focus = focus
        self.watch_ready = watch_ready
        """A cold index walks the tree only once file changes are watched."""
        self.walks = 0
        self.running = 0
        """Cold indexes running now."""
        self.walk_of: dict[str, int] = {}
        """The newest walk of each namespace: an older walk still running
        stops applying results for a namespace a newer walk has taken over
        (settings changed twice in a row)."""
        self.indexed = asyncio.Event()
        """Set once the first cold index has ended."""
        self.searchable = asyncio.Event()
        """Set once the first cold index has anything to answer from (a
        restart's snapshot installed, the open file's first files parsed),
        or has ended."""
        self.workers = Workers()
        """The indexing process pool, started on the first cold index."""
        self.caches: dict[tuple[str, str], Cache] = {}
        """Per root and indexing settings (`index_key`)."""
        self._caches_lock = threading.Lock()
        self.told: set[str] = set()
        """Messages already shown (`report_walk`): each is said once."""
        self.stopped = False
        """Set by `shutdown`: every walk stops at its next step."""
        self.installed: dict[str, dict[str, tuple[int, int]]] = {}
        """Folders whose snapshot was installed before the server started
        (`opening`), with its stamps: their first index reads no snapshot."""
        self.prefetches: dict[str, Prefetch] = {}
        """Cold folders' first tasks, sent before the server started
        (`opening`), until their first index takes them."""
        self.early: dict[str, WalkReport] | None = None
        """The walks of an index made before the server started, until
        `indexed_early` takes them."""

    def adopt(
        self,
        installed: dict[str, tuple[Cache, dict[str, tuple[int, int]]]],
        caches: dict[str, Cache],
        walks: dict[str, WalkReport] | None,
        workers: Workers | None = None,
        prefetches: dict[str, Prefetch] | None = None,
    ) -> None:
        """What the start read before the server (`early.Opened`): the
        snapshots `installed` (each folder's cache and stamps), the `caches`
        of folders it indexed, that index's `walks` when it was made, the
        process pool it started (`workers`, for a cold index) and the first
        tasks it sent there (`prefetches`)."""
        if workers is not None:
            self.workers = workers
            self.prefetches.update(prefetches or {})
        key = index_key(self.live.config)
        for root, (cache, stamps) in installed.items():
            self.caches[(root, key)] = cache
            self.installed[root] = stamps
        for root, cache in caches.items():
            self.caches[(root, key)] = cache
        self.early = walks

    def indexed_early(self) -> None:
        """The first index ran before the server did (`early.index_early`,
        its progress begun and ended there): what the end of an index does
        here."""
        walks, self.early = self.early or {}, None
        for root, walk in walks.items():
            ns = self.live.namespace_of(root)
            if ns is not None:
                ns.index.bulk = False  # compacted there; `initialize` set it again
            self.report_walk(root, walk)
        self.searchable.set()
        self.indexed.set()
        settle()
        self.quiet()

    async def index_namespaces(self, namespaces: Sequence[Namespace], title: str) -> None:
        """`_index_namespaces`; the process pool is shut down when no index
        runs (its workers hold tens of MB each, idle)."""
        self.running += 1
        try:
            await self._index_namespaces(namespaces, title)
        finally:
            self.running -= 1
            if self.running == 0 and not self.stopped:
                # Off the loop: stopping the forkserver waits for it to end
                # (47 ms after Go's cold index, during which the client's
                # first messages after the progress waited). A pool that a
                # new index has used meanwhile is left running.
                close = functools.partial(self.workers.close, unused_since=self.workers.used)
                asyncio.get_running_loop().run_in_executor(None, close).add_done_callback(_logged)

    async def _index_namespaces(self, namespaces: Sequence[Namespace], title: str) -> None:
        """Walk and index `namespaces` in the background, reporting progress
        (see the module note)."""
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        self.walks += 1
        walk = self.walks
        for ns in namespaces:
            self.walk_of[ns.root] = walk
            ns.index.bulk = True  # before the client's word on progress: see `open_buffer`
        live = self.live
        last_report = [0.0]
        progress = self.server.work_done_progress
        begun: list[str | None] = [None]
        """The progress token, once the client has taken it."""

        async def begin() -> None:
            begun[0] = await self._progress_begin(title, None)

        # The index starts at once, not after the client's answer on the
        # progress token: a client slow to answer (or that never does) is
        # not left without an index, and a restart's snapshot is read
        # during the round trip.
        beginning = asyncio.ensure_future(begin())

        def report(done: int, total: int) -> None:
            now = time.perf_counter()
            token = begun[0]
            if token is None or now - last_report[0] < PROGRESS_INTERVAL:
                return
            last_report[0] = now
            message = types.WorkDoneProgressReport(
                message=f"{done}/{total} files",
                percentage=min(99, int(100 * done / max(1, total))),
            )
            loop.call_soon_threadsafe(progress.report, token, message)

        summary = "indexing stopped"
        try:
            files = symbols = cached = 0
            for ns in namespaces:

                def cancelled(ns: Namespace = ns) -> bool:
                    return (
                        self.stopped
                        or self.walk_of.get(ns.root) != walk
                        or (ns not in live.namespaces and ns not in live.dependencies)
                    )

                ns.index.bulk = True
                # Large merges run on the pool, not in the server's heap.
                ns.index.merger = self.workers.merge if self.workers.failures < 3 else None

                def run(
                    ns: Namespace = ns,
                    cancelled: Callable[[], bool] = cancelled,
                    config: Config = live.config,
                ) -> tuple[ColdStats, Cache | None]:
                    # The cache is opened here, off the loop: SQLite may wait
                    # up to its timeout for a lock another process holds.
                    cache = self.cache_for(ns.root, config)
                    installed = self.installed.pop(ns.root, None)
                    prefetch = self.prefetches.pop(ns.root, None)
                    early = prefetch.take() if prefetch is not None else []
                    if prefetch is not None and prefetch.settings != index_key(config):
                        early = []  # walked under other settings: parsed again
                    stats = index_namespace(
                        ns.root,
                        config,
                        LiveTarget(live, ns, cancelled),
                        workers=self.workers,
                        cache=cache,
                        focus=no_focus if ns.dependency else self.focus,
                        cancelled=cancelled,
                        progress=report,
                        walk_gate=None if ns.dependency else self.watch_ready,
                        walker=walk_dependency if ns.dependency else None,
                        searchable=functools.partial(_set_from_thread, loop, self.searchable),
                        installed=installed if cache is not None else None,
                        prefetched=early,
                    )
                    return stats, cache

                stats: ColdStats | None = None
                cache: Cache | None = None
                try:
                    found, cache = await loop.run_in_executor(None, run)
                    stats = found
                    files += found.files
                    cached += found.from_snapshot + found.from_cache
                    self.report_walk(ns.root, found.walk)
                finally:
                    if not self.stopped:  # at shutdown, nothing more is built
                        await loop.run_in_executor(None, live.compact, ns)
                    ns.index.merger = None
                    if not self.stopped and ns is not namespaces[-1]:
                        settle()  # the last one's after the progress ends
                symbols += len(ns.index)
                if cache is not None and stats is not None and stats.changed and not cancelled(ns):
                    parts = await loop.run_in_executor(
                        None, live.snapshot, ns, cache.trusted(stats.stamps)
                    )
                    if parts is not None:
                        cache.store_snapshot(parts)
            for ns in namespaces:
                if not self.stopped:
                    await loop.run_in_executor(None, live.reindex_buffers, ns)
            summary = (
                f"indexed {files} files, {symbols} definitions in {time.perf_counter() - started:.1f}s"
                f" ({cached} files from the cache)"
            )
            log.info(summary)
            await asyncio.wait({beginning}, timeout=TOKEN_WAIT)
        finally:
            self.searchable.set()  # whatever ended the index
            if not beginning.done():
                beginning.cancel()  # the token not taken (yet): no progress shown
            elif begun[0] is not None:  # begun: ended, whatever ended the index
                progress.end(begun[0], types.WorkDoneProgressEnd(message=summary))
        self.indexed.set()
        if not self.stopped:
            # Housekeeping, not part of the index, once the person has been
            # told it is done: a collection of what the index made; the
            # start-up's garbage once the client is quiet (`quiet`).
            settle()
            self.quiet()

    def cache_for(self, root: str, config: Config) -> Cache | None:
        """The on-disk cache of `root` under `config`, unless its `cache`
        setting is off."""
        if not config.cache:
            return None
        key = index_key(config)
        with self._caches_lock:  # opened on the index threads
            found = self.caches.get((root, key))
            if found is None:
                found = self.caches[(root, key)] = Cache(root, settings=key)
        return found

    def report_walk(self, root: str, walk: WalkReport) -> None:
        """Tell the person, once each, about ignore-file lines skipped and a
        folder that ignore rules left (nearly) empty."""
        for message in [*walk.problems[:MAX_PROBLEM_MESSAGES], walk.warning(root)]:
            if message is None or message in self.told:
                continue
            self.told.add(message)
            log.warning("%s", message)
            self.server.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=message)
            )

    async def _progress_begin(self, title: str, files: int | None) -> str | None:
        if not _supports_progress(self.server.client_capabilities):
            return None
        if self.indexed.is_set() and files is not None and files < PROGRESS_MIN_FILES:
            return None
        token = f"nearsym-index-{uuid.uuid4()}"
        progress = self.server.work_done_progress
        try:
            await progress.create_async(token)
        except Exception:
            log.warning("client refused a progress token; indexing without progress")
            return None
        progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title=title,
                message="walking" if files is None else f"{files} files",
                percentage=0,
            ),
        )
        return token

    def stop(self) -> None:
        """Shutdown: walks stop, the pool closes for good, and each cache
        writer stops once its queued writes are on disk (see
        `finish_writes`)."""
        self.stopped = True
        self.workers.stop()
        with self._caches_lock:
            caches = list(self.caches.values())
        for cache in caches:
            threading.Thread(target=cache.close, name="nearsym-cache-close", daemon=True).start()

    def finish_writes(self, seconds: float) -> None:
        """Wait, at most `seconds` in all, for the cache writers to finish."""
        deadline = time.monotonic() + seconds
        for thread in threading.enumerate():
            if thread.name in ("nearsym-cache-close", "nearsym-cache"):
                while True:
                    try:
                        thread.join(max(0.0, deadline - time.monotonic()))
                        break
                    except RuntimeError:  # listed while still starting (`stop` just made it)
                        if time.monotonic() >= deadline:
                            break
                        time.sleep(0.001)


def _logged(done: asyncio.Future[None]) -> None:
    """Log what a job off the loop no one waits for failed with."""
    if not done.cancelled() and done.exception() is not None:
        log.error("closing the indexing pool failed", exc_info=done.exception())


def no_focus() -> str | None:
    """A dependency folder is indexed without an open file's neighbourhood
    first: the workspace walk's rules (which skip it) would judge it."""
    return None


def _supports_progress(capabilities: types.ClientCapabilities) -> bool:
    window = capabilities.window
    return bool(window and window.work_done_progress)


def _set_from_thread(loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
    """Set `event` of `loop` from another thread (not once the loop is closed)."""
    with contextlib.suppress(RuntimeError):  # the loop has ended: the process is exiting
        loop.call_soon_threadsafe(event.set)
