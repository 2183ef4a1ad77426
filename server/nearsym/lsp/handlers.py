"""The handlers, named after the LSP methods, each delegating to a part of
`NearsymServer` (see `server`); their docstrings list edge behaviour."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from nearsym.core.model import Symbol
from nearsym.index.search import pages
from nearsym.lsp import explain, settings
from nearsym.lsp.convert import client_symbol_kinds, uri_to_path
from nearsym.lsp.early import Opened
from nearsym.lsp.encoded import EncodedResult
from nearsym.lsp.focus import DID_CHANGE_ACTIVE_DOCUMENT, DID_FOCUS
from nearsym.lsp.server import NearsymServer
from nearsym.lsp.shared import Pending
from nearsym.lsp.watching import register_watchers
from nearsym.workspace.live import Change


def initialize(ls: NearsymServer, params: types.InitializeParams) -> None:
    """Read roots and options. Bad options are reported and replaced by
    their defaults; with no root, files are answered as they are opened
    (`did_open`)."""
    ls.live.config = settings.initial_config(ls, params.initialization_options)
    ls.use_shared_index(ls.live.config)
    ls.symbol_kinds = client_symbol_kinds(params.capabilities)
    ls.ready = True
    roots = settings.roots(params)
    ls.outside.client_roots = bool(roots)
    for root in roots:
        # Indexed cold at `initialized`, which a client sends before any
        # other message: a buffer opened meanwhile as on disk is then not
        # parsed (`LiveWorkspace.open_buffer`).
        ls.live.add_root(root).index.bulk = True


async def initialized(ls: NearsymServer, params: types.InitializedParams) -> None:
    """Index in the background (queries answer meanwhile), and watch files:
    the client's watcher when it offers one, else ours. The index reads
    its snapshot during the client's round trip; it walks the tree only
    once changes are watched (`Watching.ready`). Before `initialize`:
    ignored (no folder, no client known yet)."""
    if not ls.ready:
        return
    if ls.indexing.early is not None:  # indexed before the server (`opening`)
        ls.indexing.indexed_early()
    else:
        ls.spawn(ls.indexing.index_namespaces(list(ls.live.namespaces), "nearsym: indexing"))
    if ls.watching.registered is None:
        ls.watching.client_watches = await register_watchers(ls)
    else:  # asked before the server (`opening`)
        ls.watching.client_watches = ls.watching.registered
    ls.watching.restart()
    ls.dependencies.configure(ls.live.config)  # indexed after the workspace


async def workspace_symbol(
    ls: NearsymServer, params: types.WorkspaceSymbolParams
) -> EncodedResult | list[types.WorkspaceSymbol]:
    """Ranked definitions for `params.query`.

    - At most `maxResults` (default 100) symbols.
    - Empty query: the definitions nearest the open file (its own, then
      its folder's, outward); with no open file known, in path order.
    - The open file is the params' `textDocument` when present, else the
      inferred focus; with none known, the name alone ranks.
    - During indexing: answers from what is indexed so far. Before the
      start's index has anything (a restart's snapshot being read), the
      start's queries wait for it, up to `START_WAIT` in all.
    - Edits and file events sent before it are waited for, up to
      `SETTLE_WAIT` (a small buffer just opened, up to `OPEN_WAIT`: nothing
      else gives its symbols); a re-walk (a `.gitignore` saved) or a large buffer's
      parse still running then is not: the answer comes from the index as
      it stands, the old text's symbols for that buffer.
    - A query over `MAX_QUERY_CHARS` (spaces aside): empty, at once.
    - With a `partialResultToken`: the answer goes as `$/progress` pages
      of `PAGE_SIZE`, best first (slices of one ranking, so none
      reshuffles an earlier one); the response itself is then empty.
      A shared pool that missed the budget then follows as later pages
      when it arrives within `shared.LATE_WAIT` (`Answers.late_rows`:
      its rows not already sent, ranked, up to `maxResults` in all); not
      when the request is cancelled or a newer query has come (then the
      response is empty at once, or RequestCancelled).
    - Cancelled (`$/cancelRequest`) before it runs: RequestCancelled.
    - Always a full `Location` (uri and range), even for a client that
      could resolve ranges lazily: the range is at hand, and a client
      that opens a uri-only answer without resolving it lands on line 1.
    - The rows are built as JSON text on the search thread
      (`lsp.encoded`), the text lsprotocol's objects would give.
    """
    open_file = ls.focus.for_request(ls.protocol.msg_id)
    superseded = ls.shared.asked()
    token = params.partial_result_token
    if token is None:
        return await ls.answers.encoded(params.query, open_file, ls.symbol_kinds)
    late: list[Pending] = []
    found = await ls.answers.results(params.query, open_file, late=late)
    await _report(ls, token, found)
    if late:
        rows = await ls.answers.late_rows(params.query, open_file, late[0], found, superseded)
        await _report(ls, token, rows, superseded)
    return []


async def _report(
    ls: NearsymServer,
    token: types.ProgressToken,
    rows: list[Symbol],
    superseded: asyncio.Event | None = None,
) -> None:
    """`rows` as `$/progress` partial results of `token`, `PAGE_SIZE` a
    page; none once `superseded` is set (checked right before each)."""
    for part in pages(rows):
        if superseded is not None and superseded.is_set():
            return
        ls.progress(types.ProgressParams(token=token, value=[ls.to_lsp(s) for s in part]))
        await asyncio.sleep(0)


async def nearsym_explain(ls: NearsymServer, *arguments: Any) -> dict[str, Any]:
    """`workspace/executeCommand` `nearsym.explain` with arguments `[query,
    open file URI or null, maxResults]` (the last two optional): the
    answer `workspace/symbol` gives for them, each row with its sort keys in
    comparison order (`lsp.explain`). Bad arguments: InvalidParams."""
    return await explain.explain(ls, arguments)


def did_open(ls: NearsymServer, params: types.DidOpenTextDocumentParams) -> None:
    """From now on the buffer stands for its file; parsed off the loop (a
    buffer over `IN_PROCESS_BYTES` in a helper process, one over
    `maxFileBytes` not at all, as its file would not be).

    A file outside every workspace folder: with no folder at all, its
    project (the nearest folder with `.git`, `pyproject.toml`, ...) is
    indexed as one; else it is answered from its own text and its folder's
    other files (never `/`, home or a top-level folder as a whole)."""
    path = uri_to_path(params.text_document.uri)
    if path is not None:
        ls.outside.opened(path)
    ls.buffers.opened(params.text_document.uri)


def did_change(ls: NearsymServer, params: types.DidChangeTextDocumentParams) -> None:
    """Reparsed after `DEBOUNCE` of rest (or at the next query), off the loop."""
    ls.buffers.changed(params.text_document.uri)


def did_save(ls: NearsymServer, params: types.DidSaveTextDocumentParams) -> None:
    """The buffer is already indexed; saving only moves the focus."""


def did_close(ls: NearsymServer, params: types.DidCloseTextDocumentParams) -> None:
    """Back to the file on disk (gone if it was never saved)."""
    ls.buffers.closed(params.text_document.uri)


async def did_change_watched_files(
    ls: NearsymServer, params: types.DidChangeWatchedFilesParams
) -> None:
    """Creates, changes and deletes from the client's watcher, applied in
    order off the loop; a `.gitignore` among them re-walks its folder (and a
    folder created is walked), which queries do not wait for."""
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
    await ls.watching.apply_disk_changes(changes)


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
    ls.watching.restart()
    if added:
        ls.spawn(ls.indexing.index_namespaces(added, "nearsym: indexing new folders"))
    ls.dependencies.folders_changed()


async def did_change_configuration(
    ls: NearsymServer, params: types.DidChangeConfigurationParams
) -> None:
    """Pull the `nearsym` section when the client supports it; else read
    the pushed settings. Bad values are reported and defaulted."""
    pulled = await settings.pull(ls, params.settings)
    await settings.apply_settings(ls, ls.indexing, pulled, ls.use_shared_index)
    ls.dependencies.configure(ls.live.config)


def did_focus(ls: NearsymServer, params: Any) -> None:
    """`{"textDocument": {"uri": ...}}`: read from the raw message."""


def did_change_active_document(ls: NearsymServer, params: Any) -> None:
    """sourcekit-lsp's name for didFocus; same params."""


SHUTDOWN_WRITES = 1.5
"""Seconds `shutdown` waits for the cache's queued writes before it
answers: a snapshot written just after an index (the Linux kernel's 284
MB: 1.7 s here) is what the next start loads in 2 s instead of 23 s of
loading file by file; under the 2 s VS Code's client gives `shutdown`."""


async def shutdown(ls: NearsymServer, params: Any) -> None:
    """Stop the watcher, the background jobs and the pool, and let the
    cache finish its queued writes for up to `SHUTDOWN_WRITES` (off the
    loop). Any request after it (a second `shutdown` too) gets
    InvalidRequest; `exit` then ends the process with 0 (see
    `transport`)."""
    ls.close()
    await asyncio.get_running_loop().run_in_executor(None, ls.finish_writes, SHUTDOWN_WRITES)


def make_server(opened: Opened | None = None) -> NearsymServer:
    """A server with every handler registered (`opened`: what the start
    read before pygls was imported)."""
    server = NearsymServer(opened)
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(
        types.WORKSPACE_SYMBOL,
        types.WorkspaceSymbolOptions(resolve_provider=False, work_done_progress=False),
    )(workspace_symbol)
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
    server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)(did_change_watched_files)
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(did_change_workspace_folders)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(DID_FOCUS)(did_focus)
    server.feature(DID_CHANGE_ACTIVE_DOCUMENT)(did_change_active_document)
    server.feature(types.SHUTDOWN)(shutdown)
    server.command(explain.EXPLAIN)(nearsym_explain)
    return server
