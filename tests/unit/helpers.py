"""Small builders shared by the unit tests."""

from __future__ import annotations

from nearsym.core.model import Kind, Span, Symbol

ROOT = "/ws"


def sym(
    name: str,
    path: str = "pkg/mod.py",
    kind: Kind = Kind.FUNCTION,
    container: str = "",
    line: int = 0,
    root: str = ROOT,
) -> Symbol:
    return Symbol(name, kind, container, root, path, Span(line, 0, line, len(name)), "python")
