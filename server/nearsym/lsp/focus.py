"""The open file: which file the person is most likely looking at.

Design note
-----------
Editors do not say which file the person is looking at. The server infers it
from the latest document-scoped message, strongest first:
`nearsym/didFocus` (and sourcekit-lsp's `window/didChangeActiveDocument`) >
didOpen / didChange / didSave / any `textDocument/*` request > whole-document
requests (documentSymbol, codeLens, semanticTokens...), which VS Code also
sends for editors that are merely visible, and which therefore only count
when nothing stronger came in the last `WEAK_SIGNAL_HOLD` seconds. A
`textDocument` field in the `workspace/symbol` params overrides all of these
for that one request.

Every raw message is read here before pygls structures it (see
`protocol.NearsymProtocol`), including requests the server has no handler
for (hover, documentSymbol...), in arrival order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from nearsym.lsp.values import uri_to_path

DID_FOCUS = "nearsym/didFocus"
DID_CHANGE_ACTIVE_DOCUMENT = "window/didChangeActiveDocument"

WEAK_SIGNAL_HOLD = 2.0
"""Seconds during which a whole-document request cannot move the focus set
by a stronger signal (VS Code sends them for every visible editor)."""

STRONG, DOCUMENT, WEAK = 3, 2, 1
WHOLE_DOCUMENT_REQUESTS = frozenset(
    {
        "textDocument/documentSymbol",
        "textDocument/codeLens",
        "textDocument/semanticTokens/full",
        "textDocument/semanticTokens/full/delta",
        "textDocument/semanticTokens/range",
        "textDocument/foldingRange",
        "textDocument/documentLink",
        "textDocument/documentColor",
        "textDocument/inlayHint",
        "textDocument/diagnostic",
        "textDocument/codeAction",
    }
)


@dataclass(slots=True)
class Focus:
    """The file the person is most likely looking at."""

    path: str | None = None
    strength: int = 0
    at: float = 0.0
    request_files: dict[Any, str] = field(default_factory=dict)
    """The `textDocument` of each `workspace/symbol` request still to be
    answered, by request id."""

    def observe(self, path: str, strength: int, now: float) -> None:
        if strength == WEAK and self.strength > WEAK and now - self.at < WEAK_SIGNAL_HOLD:
            return
        self.path, self.strength, self.at = path, strength, now

    def observe_message(self, data: dict[str, Any]) -> None:
        """Read what a raw message says about the open file."""
        method = data.get("method")
        if not isinstance(method, str):
            return
        uri = _text_document_uri(data.get("params"))
        if uri is None:
            return
        path = uri_to_path(uri)
        if path is None:
            return
        now = time.monotonic()
        if method == "workspace/symbol":
            if "id" in data:
                self.request_files[data["id"]] = path
        elif method in (DID_FOCUS, DID_CHANGE_ACTIVE_DOCUMENT):
            self.observe(path, STRONG, now)
        elif method in WHOLE_DOCUMENT_REQUESTS:
            self.observe(path, WEAK, now)
        elif method.startswith("textDocument/") and method != "textDocument/didClose":
            self.observe(path, DOCUMENT, now)

    def for_request(self, msg_id: Any) -> str | None:
        """The open file for one `workspace/symbol` request: its own
        `textDocument` when it named one, else the inferred focus."""
        return self.request_files.pop(msg_id, None) or self.path


def _text_document_uri(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    doc = params.get("textDocument")
    if isinstance(doc, dict) and isinstance(doc.get("uri"), str):
        return str(doc["uri"])
    return None
