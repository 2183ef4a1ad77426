"""The wire: LSP base-protocol framing over stdio or TCP, and how the
process ends.

Design note
-----------
pygls' own loop reads stdin on its thread pool and decodes JSON on the
event loop; a `Content-Length` of 10^12 makes it ask for a terabyte, a
malformed body is dropped without the parse error JSON-RPC owes, and at
`exit` the interpreter waits for every thread (a walk blocked on a FIFO, a
pool's manager) and prints their tracebacks. Here instead:

- A reader thread reads the stream, frames it (`Framer`) and decodes each
  body, so neither a large message nor a slow client holds the event loop.
  Bodies over `MAX_MESSAGE_BYTES` are refused with a parse error; so are
  headers without a usable `Content-Length`. After any framing error the
  reader skips to the next `Content-Length:` (the bytes of a refused body
  are skipped with it, as they arrive, without being kept), so the stream
  recovers at the next message; a body holding that text in a string could
  be cut there, and is then answered with one more parse error.
- Header names are read case-insensitively and LF-only line ends are
  accepted (the base protocol says CRLF; being lenient costs nothing).
- `dispatch` answers what JSON-RPC and LSP say: -32700 for a body that is
  not JSON, -32600 for one that is not a request, a notification or a
  response, and for any request after `shutdown` (a second `shutdown`
  included); other messages after `shutdown` are dropped, but `exit`.
- `exit` (and the end of the input stream) ends the process at once with
  `os._exit`: 0 after `shutdown`, 1 without (LSP). Our helpers go first:
  the watcher and the pool's workers are killed (they hold nothing worth
  saving), the cache writers get `EXIT_GRACE` seconds to finish. Threads
  still running (a walk blocked in `open()` on a FIFO cannot be
  interrupted) end with the process instead of being waited for.
- TCP serves one client at a time. A client that closes before
  `initialize` (a port probe) leaves the server listening for the next; a
  session's end (the socket closed after `initialize`) is the input
  stream's end.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Largest body accepted: above the 50 MB past which VS Code stops syncing
a file to its extensions, so any buffer an editor sends fits, while a
`Content-Length` of 10^12 is refused instead of allocated."""
MAX_HEADER_BYTES = 4096
"""Longest header block (LSP defines two short headers)."""
READ_BYTES = 1 << 16
EXIT_GRACE = 0.5
"""Seconds `exit` gives the cache writers to finish (a snapshot lost is
rebuilt from the files; the LSP exit must be prompt)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

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


class Lifecycle(Protocol):
    """What the transport needs of the server."""

    def terminate(self) -> None:
        """Kill our helper processes now, without waiting."""

    def finish_writes(self, seconds: float) -> None:
        """Let the cache writers finish, for at most `seconds`."""


class Connection:
    """One client's stream of messages into a pygls protocol."""

    def __init__(
        self,
        protocol: JsonRPCProtocol,
        server: Lifecycle,
        loop: asyncio.AbstractEventLoop,
        write: Callable[[bytes], None],
    ) -> None:
        self.protocol = protocol
        self.server = server
        self.loop = loop
        self._write = write
        self._write_lock = threading.Lock()
        self.initialized = False
        """A request reached the server (TCP: the session has begun)."""
        protocol.set_writer(self)

    # -- pygls' writer interface -----------------------------------------
    def write(self, data: bytes) -> None:
        with self._write_lock:
            try:
                self._write(data)
            except OSError as error:  # the client is gone: nothing to answer
                log.info("the client stopped reading (%s); exiting", error)
                self.loop.call_soon_threadsafe(self.exit)

    def close(self) -> None:
        """pygls' writer interface; the stream ends with the process."""

    # -- reading -----------------------------------------------------------
    def read_forever(self, read: Callable[[int], bytes]) -> None:
        """The reader thread: frame and decode until the stream ends, then
        tell the loop."""
        framer = Framer()
        while True:
            try:
                data = read(READ_BYTES)
            except OSError as error:
                log.info("reading the client failed (%s)", error)
                data = b""
            if not data:
                self.loop.call_soon_threadsafe(self.ended)
                return
            for item in framer.feed(data):
                if isinstance(item, str):
                    log.error("framing error: %s; skipping to the next message", item)
                    self.loop.call_soon_threadsafe(self.parse_error, item)
                    continue
                try:
                    message = decode(item)
                except ValueError as error:  # JSON, or UTF-8
                    log.error("a message that is not JSON: %s", error)
                    self.loop.call_soon_threadsafe(self.parse_error, str(error))
                    continue
                self.loop.call_soon_threadsafe(self.dispatch, message)

    # -- on the event loop -------------------------------------------------
    def dispatch(self, data: Any) -> None:
        """Hand a decoded message to pygls, answering what it would drop."""
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            self.error(data.get("id") if isinstance(data, dict) else None, INVALID_REQUEST,
                       "not a JSON-RPC 2.0 message")  # fmt: skip
            return
        method = data.get("method")
        if method is not None and not isinstance(method, str):
            self.error(data.get("id"), INVALID_REQUEST, "method must be a string")
            return
        is_request = method is not None and "id" in data
        if method is None and "id" not in data:
            self.error(None, INVALID_REQUEST, "neither a request, a notification nor a response")
            return
        if method == "exit":
            self.exit()
            return
        if self.protocol._shutdown:
            if is_request:
                self.error(data["id"], INVALID_REQUEST, "the server is shut down")
            return
        if is_request:
            self.initialized = True
        try:
            message = self.protocol.structure_message(data)
        except JsonRpcException:
            return  # a request whose params do not fit: answered already
        try:
            self.protocol.handle_message(message)
        except Exception:  # a handler's bug must never end the session
            log.exception("could not handle %s", method or "a response")

    def parse_error(self, reason: str) -> None:
        self.error(None, PARSE_ERROR, f"Parse error: {reason}")

    def error(self, msg_id: Any, code: int, message: str) -> None:
        if not isinstance(msg_id, (int, str)):
            msg_id = None
        body = json.dumps(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        ).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def ended(self) -> None:
        """The input stream ended: as `exit`."""
        self.exit()

    def exit(self) -> None:
        """End the process now: 0 after `shutdown`, 1 without (LSP)."""
        code = 0 if self.protocol._shutdown else 1
        try:
            self.server.terminate()
            self.server.finish_writes(EXIT_GRACE)
        except Exception:
            log.exception("stopping the helpers failed")
        for handler in logging.getLogger().handlers:
            handler.flush()
        os._exit(code)


def _write_all(fd: int) -> Callable[[bytes], None]:
    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]

    return write


def serve_stdio(protocol: JsonRPCProtocol, server: Lifecycle) -> None:
    """Serve one client on stdin/stdout until `exit` or the end of stdin.
    Never returns: the process ends in `Connection.exit`."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        connection = Connection(protocol, server, loop, _write_all(1))
        reader = threading.Thread(
            target=connection.read_forever,
            args=(lambda n: os.read(0, n),),
            name="nearsym-stdin",
            daemon=True,
        )
        reader.start()
        await asyncio.Event().wait()

    asyncio.run(main())


def serve_tcp(protocol: JsonRPCProtocol, server: Lifecycle, host: str, port: int) -> None:
    """Serve clients one at a time on `host:port` (see the module note).
    Raises OSError when the address cannot be bound."""
    listener = socket.create_server((host, port))
    bound = listener.getsockname()
    sys.stderr.write(f"nearsym: listening on {bound[0]}:{bound[1]}\n")
    sys.stderr.flush()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        busy = threading.Lock()
        listener.setblocking(False)
        while True:
            client, address = await loop.sock_accept(listener)
            if not busy.acquire(blocking=False):
                log.warning("refusing %s: a client is connected already", address)
                client.close()
                continue
            client.setblocking(True)
            connection = Connection(protocol, server, loop, client.sendall)

            def read(client: socket.socket = client, connection: Connection = connection) -> None:
                def ended() -> None:
                    client.close()
                    if connection.initialized:
                        connection.exit()
                    busy.release()  # a probe: wait for the next client
                    log.info("a client closed before initialize; listening again")

                connection.ended = ended  # type: ignore[method-assign]
                connection.read_forever(client.recv)

            threading.Thread(target=read, name="nearsym-tcp", daemon=True).start()

    asyncio.run(main())
