"""The input stream: LSP base-protocol framing and JSON, read on a thread.

Design note
-----------
A `Reader` reads the stream, frames it (`Framer`) and decodes each body on
its own thread, so neither a large message nor a slow client holds the
event loop. Bodies over `MAX_MESSAGE_BYTES` are refused; so are headers
without a usable `Content-Length`. After any framing error the reader skips
to the next `Content-Length:` (the bytes of a refused body are skipped with
it, as they arrive, without being kept), so the stream recovers at the next
message; a body holding that text in a string could be cut there. Header
names are read case-insensitively and LF-only line ends are accepted (the
base protocol says CRLF; being lenient costs nothing). This module knows
nothing of pygls: what to do with each item is its sink's business
(`transport.Connection.take`).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Largest body accepted: above the 50 MB past which VS Code stops syncing
a file to its extensions, so any buffer an editor sends fits, while a
`Content-Length` of 10^12 is refused instead of allocated."""
MAX_HEADER_BYTES = 4096
"""Longest header block (LSP defines two short headers)."""
READ_BYTES = 1 << 16

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_RESYNC = re.compile(rb"content-length:", re.IGNORECASE)


class Framer:
    """Splits a byte stream into message bodies, reporting framing errors.

    `feed` returns, in order, `bytes` bodies and `str` errors."""

    def __init__(self, max_body: int = MAX_MESSAGE_BYTES) -> None:
        self.max_body = max_body
        self._buf = bytearray()
        self._need: int | None = None
        """The body length being read, once a header has been."""
        self._lost = False
        """After a framing error: skipping to the next header."""

    def feed(self, data: bytes) -> list[bytes | str]:
        self._buf += data
        out: list[bytes | str] = []
        while True:
            if self._lost:
                found = _RESYNC.search(self._buf)
                if found is None:
                    # keep a tail that may hold the start of a header
                    del self._buf[: max(0, len(self._buf) - 32)]
                    return out
                del self._buf[: found.start()]
                self._lost = False
            if self._need is None:
                end = _HEADER_END.search(self._buf, 0, MAX_HEADER_BYTES + 4)
                if end is None:
                    if len(self._buf) > MAX_HEADER_BYTES:
                        del self._buf[:1]  # so the search for the next header moves on
                        self._error(out, f"a header block longer than {MAX_HEADER_BYTES} bytes")
                        continue
                    return out
                header = bytes(self._buf[: end.start()])
                del self._buf[: end.end()]
                length = self._length(header)
                if isinstance(length, str):
                    self._error(out, length)
                    continue
                self._need = length
            if len(self._buf) < self._need:
                return out
            out.append(bytes(self._buf[: self._need]))
            del self._buf[: self._need]
            self._need = None

    def _error(self, out: list[bytes | str], reason: str) -> None:
        out.append(reason)
        self._lost = True
        self._need = None

    def _length(self, header: bytes) -> int | str:
        """The header block's Content-Length, or what is wrong with it."""
        length: int | str = "a header without Content-Length"
        for line in header.split(b"\n"):
            name, colon, value = line.rstrip(b"\r").partition(b":")
            if not colon or name.strip().lower() != b"content-length":
                continue
            text = value.strip()
            if not text.isdigit():
                return f"Content-Length {text[:40].decode('latin-1')!r} is not a byte count"
            number = int(text[:20]) if len(text) <= 20 else self.max_body + 1
            if number > self.max_body:
                return f"Content-Length {text[:40].decode('latin-1')} is over the limit of {self.max_body}"
            length = number
        return length


def decode(body: bytes) -> Any:
    """A body's JSON, or the parse error's message (a `ValueError`)."""
    return json.loads(body)


Sink = Callable[[str, Any], None]
"""What a reader hands on, in order, on its thread: `("message", decoded
JSON)`, `("error", what was wrong)` for a body that could not be framed or
decoded, and `("end", None)` once the stream ends."""


class Reader:
    """One input stream, framed and decoded, each item handed to `sink`
    in order on the reading thread (see the module note)."""

    def __init__(self, read: Callable[[int], bytes], sink: Sink) -> None:
        self._read = read
        self._sink = sink

    def start(self, name: str) -> None:
        threading.Thread(target=self.run, name=name, daemon=True).start()

    def run(self) -> None:
        """Frame and decode until the stream ends."""
        framer = Framer()
        while True:
            try:
                data = self._read(READ_BYTES)
            except OSError as error:
                log.info("reading the client failed (%s)", error)
                data = b""
            if not data:
                self._sink("end", None)
                return
            for item in framer.feed(data):
                if isinstance(item, str):
                    log.error("framing error: %s; skipping to the next message", item)
                    self._sink("error", item)
                    continue
                try:
                    message = decode(item)
                except ValueError as error:  # JSON, or UTF-8
                    log.error("a message that is not JSON: %s", error)
                    self._sink("error", str(error))
                    continue
                self._sink("message", message)


def frame(message: dict[str, Any] | str) -> bytes:
    """A message (or its JSON text) with the base protocol's header: what
    the start writes itself before pygls (`opening`, `early`)."""
    body = (message if isinstance(message, str) else json.dumps(message)).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
