"""Core values <-> lsprotocol types: kinds, ranges, paths and URIs.

Positions are always UTF-16 code units: the encoding every LSP client must
accept. The server drops the client's other preferences before pygls
negotiates (see `protocol.NearsymProtocol`), so what extraction computed is what
the client reads.
"""

from __future__ import annotations

import os
from urllib.parse import quote, unquote_to_bytes, urlsplit

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from nearsym.core.model import Kind, Symbol

BASE_KINDS = frozenset(range(1, 19))
"""LSP: a client that states no symbol-kind value set supports File..Array."""

_FALLBACK = {
    Kind.ENUM_MEMBER: Kind.CONSTANT,
    Kind.STRUCT: Kind.CLASS,
    Kind.OBJECT: Kind.VARIABLE,
    Kind.KEY: Kind.FIELD,
    Kind.NULL: Kind.VARIABLE,
    Kind.EVENT: Kind.FIELD,
    Kind.OPERATOR: Kind.FUNCTION,
    Kind.TYPE_PARAMETER: Kind.VARIABLE,
}


def client_symbol_kinds(capabilities: types.ClientCapabilities | None) -> frozenset[int]:
    """The symbol kinds a client declared for workspace/symbol."""
    try:
        value_set = capabilities.workspace.symbol.symbol_kind.value_set  # type: ignore[union-attr]
    except AttributeError:
        value_set = None
    if not value_set:
        return BASE_KINDS
    return frozenset(int(k) for k in value_set)


def lsp_kind(kind: Kind, supported: frozenset[int] = BASE_KINDS) -> types.SymbolKind:
    """The SymbolKind to send: the kind itself, or the nearest the client knows."""
    if int(kind) in supported:
        return types.SymbolKind(int(kind))
    fallback = _FALLBACK.get(kind, Kind.VARIABLE)
    return types.SymbolKind(int(fallback) if int(fallback) in supported else int(Kind.VARIABLE))


def symbol_range(symbol: Symbol) -> types.Range:
    span = symbol.span
    return types.Range(
        start=types.Position(line=span.line, character=span.col),
        end=types.Position(line=span.end_line, character=span.end_col),
    )


def path_to_uri(path: str) -> str:
    """The `file:` URI of an absolute path, percent-encoded from its bytes:
    a name that is not UTF-8 (held as `surrogateescape`, as `os` gives it)
    is encoded byte for byte (`b'\\xff.py'` -> `%FF.py`), never an error."""
    if os.name == "nt":  # drive letters and UNC paths: pygls knows them
        uri = from_fs_path(path)
        return uri if uri is not None else "file://" + path
    return "file://" + quote(os.fsencode(path), safe="/")


def uri_to_path(uri: str) -> str | None:
    """The absolute file path of a `file:` URI, or None for other schemes.
    Percent-escapes are decoded to bytes, then to the path `os` would give
    (`%FF` -> `'\\udcff'`), so a name that is not UTF-8 round-trips."""
    if not uri.startswith("file:"):
        return None
    if os.name == "nt":
        path = to_fs_path(uri)
        return os.path.abspath(path) if path else None
    parts = urlsplit(uri)
    raw = unquote_to_bytes(parts.path)
    if parts.netloc and parts.netloc != "localhost":
        raw = b"//" + parts.netloc.encode("utf-8", "surrogateescape") + raw
    return os.path.abspath(os.fsdecode(raw)) if raw else None


def workspace_symbol(
    symbol: Symbol, supported: frozenset[int] = BASE_KINDS
) -> types.WorkspaceSymbol:
    return types.WorkspaceSymbol(
        name=symbol.name,
        kind=lsp_kind(symbol.kind, supported),
        container_name=symbol.container or None,
        location=types.Location(uri=path_to_uri(symbol.file), range=symbol_range(symbol)),
        tags=_DEPRECATED if symbol.deprecated else None,
    )


_DEPRECATED = [types.SymbolTag.Deprecated]
"""Editors draw a symbol with this tag struck through (clients that do not
know tags ignore them, as the protocol requires)."""
