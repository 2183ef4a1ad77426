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
import logging
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from nearsym import __version__
from nearsym.config import Config, config_from_options
from nearsym.convert import client_symbol_kinds, path_to_uri, uri_to_path, workspace_symbol
from nearsym.extract import extract_symbols
from nearsym.index import SymbolIndex
from nearsym.proximity import directory_distance
from nearsym.relations import Relations
from nearsym.search import Namespace, search
from nearsym.workspace import (
    SkippedFile,
    SourceFile,
    discover,
    parse_file,
    source_file_for,
)

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

    def structure_message(self, data: dict[str, Any]) -> Any:
        if isinstance(data, dict):
            try:
                self._server.observe(data)
            except Exception:  # a hint must never cost a message
                log.exception("could not read the open file from a message")
        return super().structure_message(data)


class NearsymServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "nearsym",
            __version__,
            protocol_cls=NearsymProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.config = Config()
        self.namespaces: list[Namespace] = []
        self.focus = Focus()
        self.request_files: dict[Any, str] = {}
        self.symbol_kinds = client_symbol_kinds(None)
        self.indexing: asyncio.Task[None] | None = None
        self.indexed = asyncio.Event()
        self.relations = Relations()

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

    # -- the index --------------------------------------------------------
    def namespace_of(self, path: str) -> Namespace | None:
        """The innermost workspace folder holding `path`."""
        best: Namespace | None = None
        for ns in self.namespaces:
            inside = path == ns.root or path.startswith(ns.root.rstrip(os.sep) + os.sep)
            if inside and (best is None or len(ns.root) > len(best.root)):
                best = ns
        return best

    def _buffer_paths(self) -> set[str]:
        paths = set()
        for uri in self.workspace.text_documents:
            path = uri_to_path(uri)
            if path is not None:
                paths.add(path)
        return paths

    def reindex_buffer(self, uri: str) -> None:
        """Index an open buffer's text in place of its file on disk."""
        path = uri_to_path(uri)
        ns = self.namespace_of(path) if path else None
        sf = source_file_for(ns.root, path) if ns and path else None
        if ns is None or sf is None:
            return
        document = self.workspace.get_text_document(uri)
        source = document.source.encode("utf-8", "surrogatepass")
        ns.index.replace_file(sf.rel, extract_symbols(source, sf.language, ns.root, sf.rel))

    def reindex_from_disk(self, path: str) -> None:
        """Index `path` as it is on disk; drop it when it is gone or skipped."""
        ns = self.namespace_of(path)
        sf = source_file_for(ns.root, path) if ns else None
        if ns is None or sf is None:
            return
        try:
            ns.index.replace_file(sf.rel, parse_file(sf, ns.root, self.config))
        except (SkippedFile, OSError) as why:
            log.info("dropped %s from the index: %s", path, why)
            ns.index.remove_file(sf.rel)

    async def index_workspace(self) -> None:
        """Index every namespace in the background, reporting progress.

        Files near the open file go first. Parsing runs in a worker thread;
        results are applied on the event loop, between requests, so queries
        answer from what is indexed so far. A file open in a buffer keeps the
        buffer's symbols.
        """
        loop = asyncio.get_running_loop()
        token: str | None = None
        if _supports_progress(self.client_capabilities):
            token = f"nearsym-index-{uuid.uuid4()}"
            try:
                await self.work_done_progress.create_async(token)
            except Exception:
                log.warning("client refused a progress token; indexing without progress")
                token = None
        started = time.perf_counter()
        if token is not None:
            self.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title="nearsym: indexing", message="finding files", percentage=0
                ),
            )
        config = self.config
        work: list[tuple[Namespace, SourceFile]] = []
        for ns in list(self.namespaces):
            found = await loop.run_in_executor(None, _discover_all, ns.root, config)
            work.extend((ns, sf) for sf in found)
        focus = self.focus.path
        if focus is not None:
            work.sort(key=lambda item: directory_distance(item[1].path, focus))

        def parse_batch(
            batch: Sequence[tuple[Namespace, SourceFile]],
        ) -> list[tuple[Namespace, SourceFile, Any]]:
            out: list[tuple[Namespace, SourceFile, Any]] = []
            for ns, sf in batch:
                try:
                    out.append((ns, sf, parse_file(sf, ns.root, config)))
                except (SkippedFile, OSError) as why:
                    out.append((ns, sf, why))
            return out

        done = 0
        last_report = 0.0
        symbols = 0
        for start in range(0, len(work), INDEX_BATCH):
            batch = work[start : start + INDEX_BATCH]
            results = await loop.run_in_executor(None, parse_batch, batch)
            buffers = self._buffer_paths()
            for ns, sf, result in results:
                if ns not in self.namespaces or sf.path in buffers:
                    continue
                if isinstance(result, list):
                    ns.index.replace_file(sf.rel, result)
                    symbols += len(result)
                else:
                    log.info("skipped %s: %s", sf.path, result)
                    ns.index.remove_file(sf.rel)
            done += len(batch)
            now = time.perf_counter()
            if token is not None and now - last_report >= PROGRESS_INTERVAL:
                last_report = now
                self.work_done_progress.report(
                    token,
                    types.WorkDoneProgressReport(
                        message=f"{done}/{len(work)} files",
                        percentage=min(99, int(100 * done / max(1, len(work)))),
                    ),
                )
        elapsed = time.perf_counter() - started
        summary = f"indexed {done} files, {symbols} definitions in {elapsed:.1f}s"
        log.info(summary)
        if token is not None:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=summary))
        self.indexed.set()

    def related_files(self, open_file: str | None) -> frozenset[str]:
        """Files the open file imports, read from its buffer when it is open."""
        if open_file is None:
            return frozenset()
        source = None
        uri = path_to_uri(open_file)
        if uri in self.workspace.text_documents:
            source = self.workspace.get_text_document(uri).source.encode("utf-8", "surrogatepass")
        try:
            return self.relations.related_files(open_file, self.namespaces, source)
        except Exception:  # a ranking hint must never cost an answer
            log.exception("could not read the imports of %s", open_file)
            return frozenset()

    def symbols_for(self, query: str, open_file: str | None) -> list[types.WorkspaceSymbol]:
        related = self.related_files(open_file)
        results = search(
            self.namespaces, query, self.config.max_results, 0, open_file, None, related
        )
        return [workspace_symbol(s, self.symbol_kinds) for s in results]


def _discover_all(root: str, config: Config) -> list[SourceFile]:
    return list(discover(root, config))


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
        ls.config, problems = config_from_options(params.initialization_options)
        for problem in problems:
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=problem)
            )
        ls.symbol_kinds = client_symbol_kinds(params.capabilities)
        ls.namespaces = [Namespace(root, SymbolIndex(root)) for root in _roots(params)]

    @server.feature(types.INITIALIZED)
    def initialized(ls: NearsymServer, params: types.InitializedParams) -> None:
        """Start indexing in the background; queries answer meanwhile."""
        ls.indexing = asyncio.ensure_future(ls.index_workspace())

    @server.feature(types.WORKSPACE_SYMBOL)
    def workspace_symbol_(
        ls: NearsymServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol]:
        """Ranked definitions for `params.query`.

        - At most `maxResults` (default 100) symbols.
        - Empty query: the definitions nearest the open file (its own, then
          its folder's, outward); with no open file known, in path order.
        - The open file is the params' `textDocument` when present, else the
          inferred focus; with none known, the name alone ranks.
        - During indexing: answers from what is indexed so far.
        """
        open_file = ls.request_files.pop(ls.protocol.msg_id, None) or ls.focus.path
        return ls.symbols_for(params.query, open_file)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: NearsymServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.reindex_buffer(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: NearsymServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.reindex_buffer(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: NearsymServer, params: types.DidSaveTextDocumentParams) -> None:
        """The buffer is already indexed; saving only moves the focus."""

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: NearsymServer, params: types.DidCloseTextDocumentParams) -> None:
        """Back to the file on disk (gone if it was never saved)."""
        path = uri_to_path(params.text_document.uri)
        if path is not None:
            ls.reindex_from_disk(path)

    @server.feature(DID_FOCUS)
    def did_focus(ls: NearsymServer, params: Any) -> None:
        """`{"textDocument": {"uri": ...}}`: read from the raw message."""

    @server.feature(DID_CHANGE_ACTIVE_DOCUMENT)
    def did_change_active_document(ls: NearsymServer, params: Any) -> None:
        """sourcekit-lsp's name for didFocus; same params."""

    return server
