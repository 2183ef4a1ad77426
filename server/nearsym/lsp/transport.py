"""The wire: LSP base-protocol framing over stdio or TCP, and how the
process ends.

Design note
-----------
pygls' own loop reads stdin on its thread pool and decodes JSON on the
event loop; a `Content-Length` of 10^12 makes it ask for a terabyte, a
malformed body is dropped without the parse error JSON-RPC owes, and at
`exit` the interpreter waits for every thread (a walk blocked on a FIFO, a
pool's manager) and prints their tracebacks. Here instead:

- A reader thread reads the stream, frames and decodes it (`wire.Reader`);
  what it could not frame or decode is answered with a parse error. On
  stdin it starts before pygls is imported: a restart's first messages
  may be answered then (`opening`), and the rest come here in order.
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
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

from nearsym.lsp.early import Opened, Relay
from nearsym.lsp.opening import write_stdout
from nearsym.lsp.wire import Reader

log = logging.getLogger(__name__)

EXIT_GRACE = 0.5
"""Seconds `exit` gives the cache writers to finish (a snapshot lost is
rebuilt from the files; the LSP exit must be prompt)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


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
    def take(self, kind: str, value: Any) -> None:
        """A `wire.Sink`: on the reader's thread, hand each item to the loop."""
        if kind == "message":
            self.loop.call_soon_threadsafe(self.dispatch, value)
        elif kind == "error":
            self.loop.call_soon_threadsafe(self.parse_error, value)
        else:
            self.loop.call_soon_threadsafe(self.ended)

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


def serve_stdio(
    protocol: JsonRPCProtocol, server: Lifecycle, relay: Relay, opened: Opened | None = None
) -> None:
    """Serve one client on stdin/stdout (read into `relay`: `opening.read_stdin`)
    until `exit` or the end of stdin; first, what the opening kept
    (`opened`). Never returns: the process ends in `Connection.exit`."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        connection = Connection(protocol, server, loop, write_stdout)
        if opened is not None and opened.initialize_id is not None:
            protocol.quiet.add(opened.initialize_id)  # type: ignore[attr-defined]
        relay.hand_to(connection.take, opened.items if opened is not None else [])
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
                Reader(client.recv, connection.take).run()

            threading.Thread(target=read, name="nearsym-tcp", daemon=True).start()

    asyncio.run(main())
