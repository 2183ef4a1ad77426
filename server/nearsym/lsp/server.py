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
- `shared`: a team's shared index (PostgreSQL), asked beside the answer.

The handlers, named after the LSP methods, are in `handlers`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from nearsym import __version__
from nearsym.core.model import Symbol
from nearsym.lsp.answers import Answers
from nearsym.lsp.buffers import Buffers
from nearsym.lsp.convert import client_symbol_kinds, workspace_symbol
from nearsym.lsp.focus import Focus
from nearsym.lsp.indexing import Indexing
from nearsym.lsp.outside import Outside
from nearsym.lsp.protocol import NearsymProtocol
from nearsym.lsp.shared import SharedIndex
from nearsym.lsp.watching import Watching
from nearsym.workspace.config import Config
from nearsym.workspace.live import LiveWorkspace

log = logging.getLogger(__name__)


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
        """Set by `initialize`: requests before it are refused."""
        self.focus = Focus()
        self.symbol_kinds = client_symbol_kinds(None)
        self.tasks: set[asyncio.Task[None]] = set()
        self.buffers = Buffers(self.live, self._buffer_text)
        self.watching = Watching(self.live, self.spawn)
        self.indexing = Indexing(self, self.live, lambda: self.focus.path, self.watching.ready)
        self.shared = SharedIndex(self._say)
        """A team's shared index, when the settings name one."""
        self.answers = Answers(self.live, self.buffers.flush, self.shared)
        self.outside = Outside(self.live, self.indexing, self.watching, self.spawn)

    def observe(self, data: dict[str, Any]) -> None:
        """Read what a raw message says about the open file."""
        self.focus.observe_message(data)

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
        """Stop the watcher, the background jobs, the pool and the caches."""
        self.shared.close()
        self.watching.close()
        for task in list(self.tasks):
            task.cancel()
        self.indexing.close()

    def _buffer_text(self, uri: str) -> bytes | None:
        if uri not in self.workspace.text_documents:
            return None
        return self.workspace.get_text_document(uri).source.encode("utf-8", "surrogatepass")
