"""Open buffers: debounced reparses of what the editor holds.

A buffer is reparsed once it has rested `DEBOUNCE` seconds; a query
flushes every pending reparse first, so it never answers from stale text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from nearsym.lsp.convert import path_to_uri, uri_to_path
from nearsym.workspace.live import LiveWorkspace

DEBOUNCE = 0.08
"""Seconds a buffer must rest before it is reparsed (80 ms: below the
200 ms VS Code waits before it asks, above a fast typist's key interval). A
query flushes pending reparses first, so it never answers from stale text."""


class Buffers:
    """The editor's buffers as the live workspace sees them."""

    def __init__(self, live: LiveWorkspace, text_of: Callable[[str], bytes | None]) -> None:
        self.live = live
        self.text_of = text_of
        """The buffer's text by URI (None once the editor closed it)."""
        self._pending: dict[str, asyncio.TimerHandle] = {}

    def opened(self, uri: str) -> None:
        path = uri_to_path(uri)
        text = self.text_of(uri)
        if path is not None and text is not None:
            self.live.open_buffer(path, text)

    def changed(self, uri: str, delay: float = DEBOUNCE) -> None:
        """Reparse a buffer once it has rested `delay` seconds."""
        path = uri_to_path(uri)
        if path is None:
            return
        self._cancel(path)
        loop = asyncio.get_running_loop()
        self._pending[path] = loop.call_later(delay, self._reparse, path, uri)

    def closed(self, uri: str) -> None:
        path = uri_to_path(uri)
        if path is not None:
            self._cancel(path)
            self.live.close_buffer(path)

    def flush(self) -> None:
        """Reparse every buffer still waiting out its debounce."""
        for path, handle in list(self._pending.items()):
            handle.cancel()
            self._reparse(path, path_to_uri(path))

    def _cancel(self, path: str) -> None:
        pending = self._pending.pop(path, None)
        if pending is not None:
            pending.cancel()

    def _reparse(self, path: str, uri: str) -> None:
        self._pending.pop(path, None)
        text = self.text_of(uri)
        if text is not None:
            self.live.change_buffer(path, text)
