"""The language server: pygls wiring, the open file, background indexing.

Handlers are named after the LSP method and delegate to `search`,
`workspace` and `extract`. This module and `convert` are the only ones that
import pygls / lsprotocol.

The open file
-------------
Editors do not say which file the person is looking at. The server infers it
from the latest document-scoped message, strongest first (see
`shared/editors/README.md`): `nearsym/didFocus` (and sourcekit-lsp's
`window/didChangeActiveDocument`) > didOpen / didChange / didSave / any
`textDocument/*` request > whole-document requests (documentSymbol, codeLens,
semanticTokens...), which VS Code also sends for editors that are merely
visible, and which therefore only count when nothing stronger came in the
last `WEAK_SIGNAL_HOLD` seconds. A `textDocument` field in the
`workspace/symbol` params overrides all of these for that one request.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from nearsym import __version__
from nearsym.core.model import Symbol
from nearsym.index.allocator import settle
from nearsym.index.cache import Cache
from nearsym.index.search import Namespace, answer, pages
from nearsym.lsp.convert import client_symbol_kinds, path_to_uri, uri_to_path, workspace_symbol
from nearsym.workspace.config import Config, config_from_options
from nearsym.workspace.imports import Relations
from nearsym.workspace.indexer import Workers, index_namespace
from nearsym.workspace.live import Change, LiveTarget, LiveWorkspace
from nearsym.workspace.watcher import WatcherProcess

log = logging.getLogger(__name__)

DID_FOCUS = "nearsym/didFocus"
DID_CHANGE_ACTIVE_DOCUMENT = "window/didChangeActiveDocument"

WEAK_SIGNAL_HOLD = 2.0
"""Seconds during which a whole-document request cannot move the focus set
by a stronger signal (VS Code sends them for every visible editor)."""

_STRONG, _DOCUMENT, _WEAK = 3, 2, 1
_WHOLE_DOCUMENT_REQUESTS = frozenset(
    {
        types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
        types.TEXT_DOCUMENT_CODE_LENS,
        types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
        types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA,
        types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE,
        types.TEXT_DOCUMENT_FOLDING_RANGE,
        types.TEXT_DOCUMENT_DOCUMENT_LINK,
        types.TEXT_DOCUMENT_DOCUMENT_COLOR,
        types.TEXT_DOCUMENT_INLAY_HINT,
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.TEXT_DOCUMENT_CODE_ACTION,
    }
)

INDEX_BATCH = 64
"""Files parsed per trip to the worker thread: large enough to amortise the
hop, small enough that a query waits at most one batch's apply step."""
PROGRESS_INTERVAL = 0.2
"""Seconds between progress reports, so a fast index does not flood the client."""
DEBOUNCE = 0.08
"""Seconds a buffer must rest before it is reparsed (80 ms: below the
200 ms VS Code waits before it asks, above a fast typist's key interval). A
query flushes pending reparses first, so it never answers from stale text."""
WATCHER_RETRIES = 3
"""Restarts of our own watcher before the server goes on without one."""
PROGRESS_MIN_FILES = 200
"""A re-index of fewer files ends before a progress bar could be read."""

_WATCH_GLOBS = "**/*.{py,pyi,js,mjs,cjs,jsx,ts,mts,cts,tsx,go,rs,java,c,h,cc,cpp,cxx,hpp,hh,hxx,cs,rb,php,sh,bash,lua,kt,kts,scala,sc,swift,ex,exs,hs,ml,mli,zig,jl}"


@dataclass(slots=True)
class Focus:
    """The file the person is most likely looking at."""

    path: str | None = None
    strength: int = 0
    at: float = 0.0

    def observe(self, path: str, strength: int, now: float) -> None:
        if strength == _WEAK and self.strength > _WEAK and now - self.at < WEAK_SIGNAL_HOLD:
            return
        self.path, self.strength, self.at = path, strength, now


def _text_document_uri(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    doc = params.get("textDocument")
    if isinstance(doc, dict) and isinstance(doc.get("uri"), str):
        return str(doc["uri"])
    return None


class NearsymProtocol(LanguageServerProtocol):
    """pygls' protocol, reading each raw message first to learn the open file.

    It sees messages in arrival order, before any handler runs, including
    requests the server has no handler for (hover, documentSymbol...).
    """

    _server: NearsymServer

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        """Requests before `initialize` get ServerNotInitialized (LSP 3.17)."""
        if not self._server.ready and method_name not in (types.INITIALIZE, types.SHUTDOWN):
            self._send_response(
                msg_id, None, JsonRpcServerNotInitialized.of(method_name).to_response_error()
            )
            return
        super()._handle_request(msg_id, method_name, params)

    def structure_message(self, data: dict[str, Any]) -> Any:
        if isinstance(data, dict):
            try:
                self._server.observe(data)
            except Exception:  # a hint must never cost a message
                log.exception("could not read the open file from a message")
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            # pygls drops a request whose params do not fit their type; the
            # client is owed an answer, so send the error before moving on.
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(data["id"], None, error.to_response_error())
            raise


class NearsymServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "nearsym",
            __version__,
            protocol_cls=NearsymProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.live = LiveWorkspace(Config())
        self.ready = False
        self.walks = 0
        self.indexing = 0
        """Cold indexes running now."""
        self.walk_of: dict[str, int] = {}
        """The newest walk of each namespace: an older walk still running
        stops applying results for a namespace a newer walk has taken over
        (settings changed twice in a row)."""
        """Set by `initialize`: requests before it are refused."""
        self.focus = Focus()
        self.request_files: dict[Any, str] = {}
        self.symbol_kinds = client_symbol_kinds(None)
        self.relations = Relations()
        self.indexed = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._client_watches = False
        self._watcher: WatcherProcess | None = None
        self.watch_ready = threading.Event()
        """Set once file changes are being watched (by the client or by our
        watcher, or when ours could not start): a cold index walks the tree
        only then, so no file created meanwhile is missed."""
        self.workers = Workers()
        """The indexing process pool, started on the first cold index."""
        self.caches: dict[str, Cache] = {}
        self.searcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nearsym-search")
        """Searches run here, one at a time, so the event loop keeps reading
        messages: a `$/cancelRequest` for a queued or running search answers
        RequestCancelled at once (the superseded keystroke's work is dropped)."""

    @property
    def config(self) -> Config:
        return self.live.config

    @property
    def namespaces(self) -> list[Namespace]:
        return self.live.namespaces

    def spawn(self, coroutine: Any) -> None:
        """Run a background job, keeping a reference so it is not collected,
        and logging (never raising) what it fails with."""
        task: asyncio.Task[None] = asyncio.ensure_future(coroutine)
        self.tasks.add(task)

        def done(t: asyncio.Task[None]) -> None:
            self.tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background job failed", exc_info=t.exception())

        task.add_done_callback(done)

    # -- the open file ---------------------------------------------------
    def observe(self, data: dict[str, Any]) -> None:
        """Read what a raw message says about the open file."""
        method = data.get("method")
        if not isinstance(method, str):
            return
        params = data.get("params")
        if method == types.INITIALIZE and isinstance(params, dict):
            _prefer_utf16(params)
            return
        uri = _text_document_uri(params)
        if uri is None:
            return
        path = uri_to_path(uri)
        if path is None:
            return
        now = time.monotonic()
        if method == types.WORKSPACE_SYMBOL:
            if "id" in data:
                self.request_files[data["id"]] = path
        elif method in (DID_FOCUS, DID_CHANGE_ACTIVE_DOCUMENT):
            self.focus.observe(path, _STRONG, now)
        elif method in _WHOLE_DOCUMENT_REQUESTS:
            self.focus.observe(path, _WEAK, now)
        elif method.startswith("textDocument/") and method != types.TEXT_DOCUMENT_DID_CLOSE:
            self.focus.observe(path, _DOCUMENT, now)

    # -- buffers ----------------------------------------------------------
    def buffer_text(self, uri: str) -> bytes:
        return self.workspace.get_text_document(uri).source.encode("utf-8", "surrogatepass")

    def buffer_changed(self, uri: str, delay: float = DEBOUNCE) -> None:
        """Reparse a buffer once it has rested `delay` seconds."""
        path = uri_to_path(uri)
        if path is None:
            return
        pending = self._pending.pop(path, None)
        if pending is not None:
            pending.cancel()
        loop = asyncio.get_running_loop()
        self._pending[path] = loop.call_later(delay, self._reparse, path, uri)

    def _reparse(self, path: str, uri: str) -> None:
        self._pending.pop(path, None)
        if uri in self.workspace.text_documents:
            self.live.change_buffer(path, self.buffer_text(uri))

    def flush(self) -> None:
        """Reparse every buffer still waiting out its debounce."""
        for path, handle in list(self._pending.items()):
            handle.cancel()
            self._reparse(path, path_to_uri(path))

    # -- the index --------------------------------------------------------
    async def index_namespaces(self, namespaces: Sequence[Namespace], title: str) -> None:
        """`_index_namespaces`; the process pool is shut down when no index
        runs (its workers hold tens of MB each, idle)."""
        self.indexing += 1
        try:
            await self._index_namespaces(namespaces, title)
        finally:
            self.indexing -= 1
            if self.indexing == 0:
                self.workers.close()

    async def _index_namespaces(self, namespaces: Sequence[Namespace], title: str) -> None:
        """Walk and index `namespaces` in the background, reporting progress.

        `indexer.index_namespace` runs on a thread: the open file's folder
        first, then the cache's still-valid files, then the rest, nearest
        first, on a process pool. Results are applied in batches under the
        workspace lock, so queries answer from what is indexed so far; a file
        open in a buffer keeps the buffer's symbols. The segments are merged
        at the end, outside the lock.
        """
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        self.walks += 1
        walk = self.walks
        for ns in namespaces:
            self.walk_of[ns.root] = walk
        token = await self._progress_begin(title, None)
        live = self.live
        last_report = [0.0]

        def report(done: int, total: int) -> None:
            now = time.perf_counter()
            if token is None or now - last_report[0] < PROGRESS_INTERVAL:
                return
            last_report[0] = now
            message = types.WorkDoneProgressReport(
                message=f"{done}/{total} files",
                percentage=min(99, int(100 * done / max(1, total))),
            )
            loop.call_soon_threadsafe(self.work_done_progress.report, token, message)

        files = symbols = cached = 0
        for ns in namespaces:

            def cancelled(ns: Namespace = ns) -> bool:
                return self.walk_of.get(ns.root) != walk or ns not in live.namespaces

            cache = self.cache_for(ns.root)
            ns.index.bulk = True
            # Large merges run on the pool, not in the server's heap.
            ns.index.merger = self.workers.merge if self.workers.failures < 3 else None
            stats = None
            try:
                stats = await loop.run_in_executor(
                    None,
                    functools.partial(
                        index_namespace,
                        ns.root,
                        self.config,
                        LiveTarget(live, ns, cancelled),
                        workers=self.workers,
                        cache=cache,
                        focus=lambda: self.focus.path,
                        cancelled=cancelled,
                        progress=report,
                        walk_gate=self.watch_ready,
                    ),
                )
                files += stats.files
                cached += stats.from_snapshot + stats.from_cache
            finally:
                await loop.run_in_executor(None, live.compact, ns)
                ns.index.merger = None
                settle()
            symbols += len(ns.index)
            if cache is not None and stats is not None and stats.changed and not cancelled(ns):
                parts = await loop.run_in_executor(None, live.snapshot, ns, stats.stamps)
                if parts is not None:
                    cache.store_snapshot(parts)
        for ns in namespaces:
            for path, text in list(live.buffers.items()):
                if live.namespace_of(path) is ns:
                    live.change_buffer(path, text)
        summary = (
            f"indexed {files} files, {symbols} definitions in {time.perf_counter() - started:.1f}s"
            f" ({cached} files from the cache)"
        )
        log.info(summary)
        if token is not None:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=summary))
        self.indexed.set()

    def cache_for(self, root: str) -> Cache | None:
        """The on-disk cache of `root`, unless the `cache` setting is off."""
        if not self.config.cache:
            return None
        found = self.caches.get(root)
        if found is None:
            found = self.caches[root] = Cache(root)
        return found

    async def _progress_begin(self, title: str, files: int | None) -> str | None:
        if not _supports_progress(self.client_capabilities):
            return None
        if self.indexed.is_set() and files is not None and files < PROGRESS_MIN_FILES:
            return None
        token = f"nearsym-index-{uuid.uuid4()}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception:
            log.warning("client refused a progress token; indexing without progress")
            return None
        self.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title=title,
                message="walking" if files is None else f"{files} files",
                percentage=0,
            ),
        )
        return token

    async def apply_disk_changes(self, changes: list[tuple[Change, str]]) -> None:
        """Apply file events in batches, yielding to queries between them."""
        for start in range(0, len(changes), INDEX_BATCH):
            batch = changes[start : start + INDEX_BATCH]
            self.live.disk_changed(batch)
            await asyncio.sleep(0)

    async def watch(self) -> None:
        """Our own watcher (a helper process: see `nearsym.workspace.watcher`), for
        clients that do not watch; restarted when it fails, a few times. A
        new one replaces the old only once its watches are in place, so
        folders watched before a folder change miss nothing meanwhile."""
        failures = 0
        while failures < WATCHER_RETRIES:
            old = self._watcher
            if not self.namespaces:
                self._watcher = None
                if old is not None:
                    old.close()
                break
            watcher = WatcherProcess([ns.root for ns in self.namespaces])
            self._watcher = watcher

            def ready(old: WatcherProcess | None = old) -> None:
                if old is not None:
                    old.close()
                self.watch_ready.set()

            async def on_batch(batch: list[tuple[int, str]]) -> None:
                await self.apply_disk_changes([(Change(kind), path) for kind, path in batch])

            try:
                stopped = await watcher.run(ready, on_batch)
            except (OSError, RuntimeError):
                log.exception("could not start the file watcher")
                ready()
                stopped = False
            if self._watcher is not watcher or stopped:
                return  # replaced (folders changed) or shut down
            failures += 1
            log.warning("the file watcher stopped; restarting it (%d)", failures)
        self.watch_ready.set()

    def restart_watcher(self) -> None:
        """(Re)start our own watcher on the current folders; with a client
        that watches, the index walks at once."""
        if self._client_watches:
            self.watch_ready.set()
            return
        self.watch_ready.clear()
        self.spawn(self.watch())

    # -- answers ----------------------------------------------------------
    def related_files(self, open_file: str | None) -> frozenset[str]:
        """Files the open file imports, read from its buffer when it is open."""
        if open_file is None:
            return frozenset()
        source = self.live.buffers.get(open_file)
        try:
            return self.relations.related_files(open_file, self.namespaces, source)
        except Exception:  # a ranking hint must never cost an answer
            log.exception("could not read the imports of %s", open_file)
            return frozenset()

    async def results(self, query: str, open_file: str | None) -> list[Symbol]:
        """The answer, never naming a file that is gone."""
        self.flush()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.searcher, self._results, query, open_file)

    def _results(self, query: str, open_file: str | None) -> list[Symbol]:
        with self.live.lock:
            related = self.related_files(open_file)
            limit = self.config.max_results
            found = answer(self.namespaces, query, limit, open_file, None, related)
            return [s for s in found if self._still_there(s)]

    def _still_there(self, symbol: Symbol) -> bool:
        """Never answer with a file that is gone (a deletion the watcher has
        not reported yet): buffers count as present."""
        path = os.path.join(symbol.root, *symbol.path.split("/"))
        if path in self.live.buffers or os.path.exists(path):
            return True
        ns = self.live.namespace_of(path)
        if ns is not None:
            self.live.disk_changed([(Change.DELETED, path)])
        return False

    def to_lsp(self, symbol: Symbol) -> types.WorkspaceSymbol:
        return workspace_symbol(symbol, self.symbol_kinds)

    async def apply_settings(self, settings: Any) -> None:
        """New settings: report bad values, re-index when membership changed."""
        if isinstance(settings, dict) and isinstance(settings.get("nearsym"), dict):
            settings = settings["nearsym"]
        config, problems = config_from_options(settings, Config())
        for problem in problems:
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=problem)
            )
        old = self.live.config
        self.live.config = config
        membership = (old.exclude, old.max_file_bytes, old.follow_symlinks, old.languages)
        if membership != (
            config.exclude,
            config.max_file_bytes,
            config.follow_symlinks,
            config.languages,
        ):
            loop = asyncio.get_running_loop()
            for ns in list(self.namespaces):
                keep = {sf.rel for sf in await loop.run_in_executor(None, self.live.discover, ns)}
                with self.live.lock:
                    for rel in ns.index.files:
                        if rel not in keep:
                            ns.index.remove_file(rel)
            await self.index_namespaces(list(self.namespaces), "nearsym: re-indexing")


def _supports_progress(capabilities: types.ClientCapabilities) -> bool:
    window = capabilities.window
    return bool(window and window.work_done_progress)


def _prefer_utf16(params: dict[str, Any]) -> None:
    """Drop the client's position-encoding preferences, so UTF-16 (the
    mandatory one, and what extraction computes) is negotiated."""
    general = (params.get("capabilities") or {}).get("general")
    if isinstance(general, dict):
        general.pop("positionEncodings", None)


def _roots(params: types.InitializeParams) -> list[str]:
    roots: list[str] = []
    for folder in params.workspace_folders or []:
        path = uri_to_path(folder.uri)
        if path is not None:
            roots.append(path)
    if not roots:
        if params.root_uri and (path := uri_to_path(params.root_uri)):
            roots.append(path)
        elif params.root_path:
            roots.append(os.path.abspath(params.root_path))
    return list(dict.fromkeys(roots))


def make_server() -> NearsymServer:
    server = NearsymServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: NearsymServer, params: types.InitializeParams) -> None:
        """Read roots and options. Bad options are reported and replaced by
        their defaults; with no root the server answers from open buffers."""
        config, problems = config_from_options(params.initialization_options)
        ls.live.config = config
        for problem in problems:
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=problem)
            )
        ls.symbol_kinds = client_symbol_kinds(params.capabilities)
        ls.ready = True
        for root in _roots(params):
            ls.live.add_root(root)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: NearsymServer, params: types.InitializedParams) -> None:
        """Watch files (the client's watcher when it offers one, else ours),
        then index in the background; queries answer meanwhile."""
        ls._client_watches = await _register_watchers(ls)
        ls.restart_watcher()
        ls.spawn(ls.index_namespaces(list(ls.namespaces), "nearsym: indexing"))

    @server.feature(
        types.WORKSPACE_SYMBOL,
        types.WorkspaceSymbolOptions(resolve_provider=False, work_done_progress=False),
    )
    async def workspace_symbol_(
        ls: NearsymServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol]:
        """Ranked definitions for `params.query`.

        - At most `maxResults` (default 100) symbols.
        - Empty query: the definitions nearest the open file (its own, then
          its folder's, outward); with no open file known, in path order.
        - The open file is the params' `textDocument` when present, else the
          inferred focus; with none known, the name alone ranks.
        - During indexing: answers from what is indexed so far.
        - With a `partialResultToken`: the answer goes as `$/progress` pages
          of `PAGE_SIZE`, best first (slices of one ranking, so none
          reshuffles an earlier one); the response itself is then empty.
        - Cancelled (`$/cancelRequest`) before it runs: RequestCancelled.
        - Always a full `Location` (uri and range), even for a client that
          could resolve ranges lazily: the range is at hand, and a client
          that opens a uri-only answer without resolving it lands on line 1.
        """
        msg_id = ls.protocol.msg_id
        open_file = ls.request_files.pop(msg_id, None) or ls.focus.path
        found = await ls.results(params.query, open_file)
        token = params.partial_result_token
        if token is None:
            return [ls.to_lsp(s) for s in found]
        for part in pages(found):
            ls.progress(types.ProgressParams(token=token, value=[ls.to_lsp(s) for s in part]))
            await asyncio.sleep(0)
        return []

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: NearsymServer, params: types.DidOpenTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is not None:
            ls.live.open_buffer(path, ls.buffer_text(params.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: NearsymServer, params: types.DidChangeTextDocumentParams) -> None:
        """Reparsed after `DEBOUNCE` of rest (or at the next query)."""
        ls.buffer_changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: NearsymServer, params: types.DidSaveTextDocumentParams) -> None:
        """The buffer is already indexed; saving only moves the focus."""

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: NearsymServer, params: types.DidCloseTextDocumentParams) -> None:
        """Back to the file on disk (gone if it was never saved)."""
        path = uri_to_path(params.text_document.uri)
        if path is not None:
            pending = ls._pending.pop(path, None)
            if pending is not None:
                pending.cancel()
            ls.live.close_buffer(path)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(
        ls: NearsymServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        """Creates, changes and deletes from the client's watcher, in batches."""
        kinds = {
            types.FileChangeType.Created: Change.CREATED,
            types.FileChangeType.Changed: Change.CHANGED,
            types.FileChangeType.Deleted: Change.DELETED,
        }
        changes = []
        for event in params.changes:
            path = uri_to_path(event.uri)
            if path is not None:
                changes.append((kinds.get(event.type, Change.CHANGED), path))
        await ls.apply_disk_changes(changes)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(
        ls: NearsymServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        """A folder added is a new namespace, indexed in the background; a
        folder removed takes its namespace with it."""
        for folder in params.event.removed:
            path = uri_to_path(folder.uri)
            if path is not None:
                ls.live.remove_root(path)
        added = []
        for folder in params.event.added:
            path = uri_to_path(folder.uri)
            if path is not None:
                added.append(ls.live.add_root(path))
        ls.restart_watcher()
        if added:
            ls.spawn(ls.index_namespaces(added, "nearsym: indexing new folders"))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: NearsymServer, params: types.DidChangeConfigurationParams
    ) -> None:
        """Pull the `nearsym` section when the client supports it; else read
        the pushed settings."""
        settings: Any = params.settings
        workspace = ls.client_capabilities.workspace
        if workspace is not None and workspace.configuration:
            try:
                pulled = await ls.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="nearsym")])
                )
                settings = pulled[0] if pulled else settings
            except Exception:
                log.warning("workspace/configuration failed; using the pushed settings")
        await ls.apply_settings(settings)

    @server.feature(DID_FOCUS)
    def did_focus(ls: NearsymServer, params: Any) -> None:
        """`{"textDocument": {"uri": ...}}`: read from the raw message."""

    @server.feature(DID_CHANGE_ACTIVE_DOCUMENT)
    def did_change_active_document(ls: NearsymServer, params: Any) -> None:
        """sourcekit-lsp's name for didFocus; same params."""

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: NearsymServer, params: Any) -> None:
        if ls._watcher is not None:
            ls._watcher.close()
            ls._watcher = None
        for task in list(ls.tasks):
            task.cancel()
        ls.workers.close()
        for cache in ls.caches.values():
            cache.close()

    return server


async def _register_watchers(ls: NearsymServer) -> bool:
    """Ask the client to watch source files for us, when it can."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return False
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[
            types.FileSystemWatcher(glob_pattern=_WATCH_GLOBS),
            types.FileSystemWatcher(glob_pattern="**/.gitignore"),
        ]
    )
    try:
        await ls.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=f"nearsym-watch-{uuid.uuid4()}",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=options,
                    )
                ]
            )
        )
    except Exception:
        log.warning("the client would not watch files; using our own watcher")
        return False
    return True
