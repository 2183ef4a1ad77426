"""LSP values without lsprotocol: symbol kinds as numbers, paths and URIs.

A restart's first answers are written before pygls and lsprotocol are
imported (`opening`): what they need of the protocol's values is here, as
plain numbers and strings; `convert` builds lsprotocol's types on them.

Positions are always UTF-16 code units: the encoding every LSP client must
accept. The server drops the client's other preferences before pygls
negotiates (see `protocol.NearsymProtocol`), so what extraction computed is
what the client reads.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote, unquote_to_bytes, urlsplit

from nearsym.core.model import Kind
from nearsym.extract.languages import LANGUAGES

BASE_KINDS = frozenset(range(1, 19))
"""LSP: a client that states no symbol-kind value set supports File..Array."""
DEPRECATED_TAG = 1
"""`SymbolTag.Deprecated`: editors draw a symbol with it struck through."""

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


def kind_number(kind: Kind, supported: frozenset[int] = BASE_KINDS) -> int:
    """The SymbolKind to send: the kind itself, or the nearest the client knows."""
    if int(kind) in supported:
        return int(kind)
    fallback = _FALLBACK.get(kind, Kind.VARIABLE)
    return int(fallback) if int(fallback) in supported else int(Kind.VARIABLE)


def symbol_kinds(capabilities: Any) -> frozenset[int]:
    """The symbol kinds a client declared for workspace/symbol, read from
    the raw `capabilities` of its `initialize`."""
    try:
        value_set = capabilities["workspace"]["symbol"]["symbolKind"]["valueSet"]
        found = frozenset(int(k) for k in value_set)
    except (KeyError, TypeError, ValueError):
        return BASE_KINDS
    return found or BASE_KINDS


def path_to_uri(path: str) -> str:
    """The `file:` URI of an absolute path, percent-encoded from its bytes:
    a name that is not UTF-8 (held as `surrogateescape`, as `os` gives it)
    is encoded byte for byte (`b'\\xff.py'` -> `%FF.py`), never an error."""
    if os.name == "nt":  # drive letters and UNC paths: pygls knows them
        from pygls.uris import from_fs_path

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
        from pygls.uris import to_fs_path

        path = to_fs_path(uri)
        return os.path.abspath(path) if path else None
    parts = urlsplit(uri)
    raw = unquote_to_bytes(parts.path)
    if parts.netloc and parts.netloc != "localhost":
        raw = b"//" + parts.netloc.encode("utf-8", "surrogateescape") + raw
    return os.path.abspath(os.fsdecode(raw)) if raw else None


def watch_globs() -> tuple[str, ...]:
    """The globs of the source files a client watches for us: every
    extension and file name of the language registry. (A script chosen by
    its `#!` line alone has no glob: our own watcher and a re-walk see it.)"""
    extensions = sorted({e.removeprefix(".") for s in LANGUAGES for e in s.extensions})
    names = sorted({n for s in LANGUAGES for n in s.file_names})
    return (
        "**/*.{" + ",".join(extensions) + "}",
        *(["**/{" + ",".join(names) + "}"] if names else []),
    )


SOURCE_GLOBS = watch_globs()
WATCH_GLOBS = (*SOURCE_GLOBS, "**/.gitignore", "**/.ignore")
"""What the server asks a client that can to watch for it: the sources
and the ignore files."""
WATCHED_FILES = "workspace/didChangeWatchedFiles"
