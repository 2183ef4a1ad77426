"""Core values -> lsprotocol types: kinds, ranges and symbols (the plain
values beneath them, and paths and URIs, are in `values`)."""

from __future__ import annotations

from lsprotocol import types

from nearsym.core.model import Kind, Symbol
from nearsym.lsp.values import BASE_KINDS, kind_number, path_to_uri, uri_to_path

__all__ = ["BASE_KINDS", "client_symbol_kinds", "lsp_kind", "path_to_uri", "uri_to_path"]


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
    return types.SymbolKind(kind_number(kind, supported))


def symbol_range(symbol: Symbol) -> types.Range:
    span = symbol.span
    return types.Range(
        start=types.Position(line=span.line, character=span.col),
        end=types.Position(line=span.end_line, character=span.end_col),
    )


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
