"""pygls' protocol, reading each raw message before it is structured.

The server learns the open file from every message (see `focus`), answers
requests before `initialize` with ServerNotInitialized, negotiates UTF-16
positions, answers a request whose params do not fit their type instead
of dropping it, and writes a result that is already JSON text
(`encoded.EncodedResult`) as it is.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcServerNotInitialized
from pygls.protocol import JsonRPCResponseMessage, LanguageServerProtocol

from nearsym.index.cache import cache_dir
from nearsym.lsp.encoded import EncodedResult
from nearsym.lsp.opening import client_key, remember_reply

log = logging.getLogger(__name__)


class _OneLine(logging.Filter):
    """pygls logs a whole traceback for a message whose params do not fit
    their type; the client's mistake is worth one line, not a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("Unable to deserialize message"):
            record.msg, record.args, record.exc_info = "a message whose params do not fit", (), None
        return True


logging.getLogger("pygls.protocol.json_rpc").addFilter(_OneLine())


class Observer(Protocol):
    """What the protocol needs of the server."""

    ready: bool
    """Set by `initialize`: requests before it are refused."""

    def observe(self, data: dict[str, Any]) -> None:
        """Read a raw message (the open file)."""


class NearsymProtocol(LanguageServerProtocol):
    """pygls' protocol, reading each raw message first to learn the open file.

    It sees messages in arrival order, before any handler runs, including
    requests the server has no handler for (hover, documentSymbol...).
    """

    _server: Any  # an Observer; pygls types it as its own server class

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.quiet: set[Any] = set()
        """Requests answered before pygls was imported (`opening`): their
        replies here are not sent again."""
        self._initialize: tuple[Any, str] | None = None
        """The `initialize` request's id and its client's `opening.client_key`."""

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        """Requests before `initialize` get ServerNotInitialized (LSP 3.17)."""
        observer: Observer = self._server
        if not observer.ready and method_name not in (types.INITIALIZE, types.SHUTDOWN):
            self._send_response(
                msg_id, None, JsonRpcServerNotInitialized.of(method_name).to_response_error()
            )
            return
        super()._handle_request(msg_id, method_name, params)

    def structure_message(self, data: dict[str, Any]) -> Any:
        if isinstance(data, dict):
            try:
                if data.get("method") == types.INITIALIZE and isinstance(data.get("params"), dict):
                    self._initialize = (data.get("id"), client_key(data["params"]))
                    prefer_utf16(data["params"])
                observer: Observer = self._server
                observer.observe(data)
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

    def _send_data(self, data: Any) -> None:
        """A response whose result is an `EncodedResult` is written as
        pygls writes the unstructured response (a `JsonRPCResponseMessage`:
        `{"id": ..., "jsonrpc": "2.0", "result": ...}`, the same headers),
        its result text as it is. Any other message holding one (a pygls
        that answers with another class) is sent by pygls, the text
        decoded first."""
        if self._initialize is not None and hasattr(data, "result") and not hasattr(data, "method"):
            asked, key = self._initialize
            if getattr(data, "id", None) == asked:
                self._initialize = None
                if asked in self.quiet:  # answered already
                    self.quiet.discard(asked)
                else:
                    super()._send_data(data)
                self._remember(data, key)
                return
        result = getattr(data, "result", None)
        if not isinstance(result, EncodedResult):
            super()._send_data(data)
        elif type(data) is not JsonRPCResponseMessage or self.writer is None:
            data.result = json.loads(result.text)
            super()._send_data(data)
        else:
            text = f'{{"id": {json.dumps(data.id)}, "jsonrpc": "2.0", "result": {result.text}}}'
            body = text.encode(self.CHARSET)  # the length counts bytes, whatever the text holds
            header = (
                f"Content-Length: {len(body)}\r\n"
                f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            )
            self.writer.write(header.encode(self.CHARSET) + body)

    def _remember(self, data: Any, key: str) -> None:
        """Keep the `initialize` result for this client's next start."""
        try:
            remember_reply(cache_dir(), key, self._serialize_message(data)["result"])
        except Exception:  # for the next start only: never this one's reply
            log.exception("could not keep the initialize reply")


def prefer_utf16(params: dict[str, Any]) -> None:
    """Drop the client's position-encoding preferences, so UTF-16 (the
    mandatory one, and what extraction computes) is negotiated."""
    general = (params.get("capabilities") or {}).get("general")
    if isinstance(general, dict):
        general.pop("positionEncodings", None)
