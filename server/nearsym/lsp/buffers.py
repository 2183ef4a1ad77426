"""Open buffers: debounced reparses of what the editor holds, off the
event loop.

A buffer is reparsed once it has rested `DEBOUNCE` seconds, on a thread of
its own; a query starts every pending reparse at once and waits for them a
little (see `server.NearsymServer.settle`). tree-sitter holds the
interpreter lock while it parses (a 10 MB Python buffer: 18 s in one
stretch, measured with `tests/bench/soak.py`'s sibling probe), so a buffer
over `IN_PROCESS_BYTES` is parsed in a helper process instead
(`workspace.parsehelper`), on a second thread: the server answers meanwhile, from the buffer's previous text.
Whichever parse ends last, the newest text's symbols are the ones kept
(`LiveWorkspace.change_buffer`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from nearsym.extract.definitions import extract_symbols
from nearsym.lsp.convert import path_to_uri, uri_to_path
from nearsym.workspace.live import LiveWorkspace
from nearsym.workspace.parsehelper import ParseHelper

log = logging.getLogger(__name__)

DEBOUNCE = 0.08
"""Seconds a buffer must rest before it is reparsed (80 ms: below the
200 ms VS Code waits before it asks, above a fast typist's key interval). A
query starts pending reparses at once, so it never answers from text older
than its own."""
IN_PROCESS_BYTES = 64 * 1024
"""Larger buffers are parsed in a helper process. Dense Python parses at
about 2.7 us a byte here (10 MB in 27 s), so 64 KB holds the interpreter
lock for about 0.2 s at most; a helper costs its start (an interpreter and
the grammars, about 0.5 s here) and a copy of the text."""


class Buffers:
    """The editor's buffers as the live workspace sees them."""

    def __init__(
        self,
        live: LiveWorkspace,
        text_of: Callable[[str], bytes | None],
        track: Callable[..., None],
    ) -> None:
        self.live = live
        self.text_of = text_of
        """The buffer's text by URI (None once the editor closed it)."""
        self.track = track
        """Registers a reparse a query should wait for (`opening=True`: a
        buffer just opened, parsed here, waited for longer)."""
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._opening: dict[str, object] = {}
        """Buffers being opened, by path: a token an edit or close replaces."""
        self._small = ThreadPoolExecutor(1, thread_name_prefix="nearsym-buffers")
        self._large = ThreadPoolExecutor(1, thread_name_prefix="nearsym-large-buffers")
        self.helper = ParseHelper()
        live.extract = self.extract

    def opened(self, uri: str) -> None:
        """Indexed at once (off the loop), unless its text is its file's
        (`LiveWorkspace.open_buffer`)."""
        path = uri_to_path(uri)
        text = self.text_of(uri)
        if path is None or text is None:
            return
        self._cancel(path)
        token = object()
        self._opening[path] = token

        def current() -> bool:
            return self._opening.get(path) is token

        def done(_: asyncio.Future[Any]) -> None:
            if current():
                del self._opening[path]

        pool = self._small if len(text) <= IN_PROCESS_BYTES else self._large
        loop = asyncio.get_running_loop()
        opening = loop.run_in_executor(pool, self.live.open_buffer, path, text, current)
        opening.add_done_callback(done)
        self.track(opening, opening=pool is self._small)

    def changed(self, uri: str, delay: float = DEBOUNCE) -> None:
        """Reparse a buffer once it has rested `delay` seconds."""
        path = uri_to_path(uri)
        if path is None:
            return
        self._cancel(path)
        loop = asyncio.get_running_loop()
        self._pending[path] = loop.call_later(delay, self._reparse, path, uri)

    def closed(self, uri: str) -> None:
        """Back to the file on disk; a reparse still running is dropped."""
        path = uri_to_path(uri)
        if path is not None:
            self._cancel(path)
            self.live.drop_buffer(path)
            loop = asyncio.get_running_loop()
            self.track(loop.run_in_executor(self._small, self.live.reread, path))

    def flush(self) -> None:
        """Start every reparse still waiting out its debounce."""
        for path, handle in list(self._pending.items()):
            handle.cancel()
            self._reparse(path, path_to_uri(path))

    def extract(self, text: bytes, language: Any, root: str, rel: str) -> Any:
        """A buffer's symbols: here when small, else in the helper process."""
        if len(text) <= IN_PROCESS_BYTES:
            return extract_symbols(text, language, root, rel)
        try:
            return self.helper.parse(text, language.name)
        except (OSError, ValueError) as error:  # the helper died, or was stopped
            log.warning("could not parse %s in the helper (%s); not indexed", rel, error)
            return []

    def close(self) -> None:
        """Stop every helper process (shutdown, exit)."""
        self.helper.kill()

    def _submit(self, path: str, text: bytes) -> None:
        """The text stands for its file from now (in message order); its
        parse runs off the loop."""
        self.live.set_buffer(path, text)
        pool = self._small if len(text) <= IN_PROCESS_BYTES else self._large
        loop = asyncio.get_running_loop()
        self.track(loop.run_in_executor(pool, self.live.index_buffer, path, text))

    def _cancel(self, path: str) -> None:
        self._opening.pop(path, None)
        pending = self._pending.pop(path, None)
        if pending is not None:
            pending.cancel()

    def _reparse(self, path: str, uri: str) -> None:
        self._pending.pop(path, None)
        text = self.text_of(uri)
        if text is not None:
            self._submit(path, text)
