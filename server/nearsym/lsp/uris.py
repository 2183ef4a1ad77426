"""File URIs to paths, and the roots `initialize` names, without pygls or
lsprotocol: `early` reads them before the server has imported either."""

from __future__ import annotations

import os
from collections.abc import Iterable
from urllib.parse import unquote_to_bytes, urlsplit


def uri_to_path(uri: str) -> str | None:
    """The absolute file path of a `file:` URI, or None for other schemes.
    Percent-escapes are decoded to bytes, then to the path `os` would give
    (`%FF` -> `'\\udcff'`), so a name that is not UTF-8 round-trips."""
    if not uri.startswith("file:"):
        return None
    if os.name == "nt":  # drive letters and UNC paths: pygls knows them
        from pygls.uris import to_fs_path

        path = to_fs_path(uri)
        return os.path.abspath(path) if path else None
    parts = urlsplit(uri)
    raw = unquote_to_bytes(parts.path)
    if parts.netloc and parts.netloc != "localhost":
        raw = b"//" + parts.netloc.encode("utf-8", "surrogateescape") + raw
    return os.path.abspath(os.fsdecode(raw)) if raw else None


def workspace_roots(
    folder_uris: Iterable[str], root_uri: str | None, root_path: str | None
) -> list[str]:
    """The workspace folders `initialize` names (else its root URI or path),
    each once, in order."""
    found: list[str] = []
    for uri in folder_uris:
        path = uri_to_path(uri)
        if path is not None:
            found.append(path)
    if not found:
        if root_uri and (path := uri_to_path(root_uri)):
            found.append(path)
        elif root_path:
            found.append(os.path.abspath(root_path))
    return list(dict.fromkeys(found))
