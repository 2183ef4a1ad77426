"""Core value types shared by every layer.

Nothing here imports pygls, lsprotocol or tree-sitter, or reads a file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import IntEnum


class Kind(IntEnum):
    """What a definition is. The values are LSP's SymbolKind numbers, so the
    protocol layer converts by value; the core never imports lsprotocol."""

    FILE = 1
    MODULE = 2
    NAMESPACE = 3
    PACKAGE = 4
    CLASS = 5
    METHOD = 6
    PROPERTY = 7
    FIELD = 8
    CONSTRUCTOR = 9
    ENUM = 10
    INTERFACE = 11
    FUNCTION = 12
    VARIABLE = 13
    CONSTANT = 14
    STRING = 15
    NUMBER = 16
    BOOLEAN = 17
    ARRAY = 18
    OBJECT = 19
    KEY = 20
    NULL = 21
    ENUM_MEMBER = 22
    STRUCT = 23
    EVENT = 24
    OPERATOR = 25
    TYPE_PARAMETER = 26

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", " ")


def file_path(root: str, path: str) -> str:
    """The OS path of `path` (relative, `/`-separated) under the folder
    `root`: how a definition's file is named from its `root` and `path`."""
    return os.path.join(root, *path.split("/"))


def qualified(container: str, name: str) -> str:
    """`container.name`, or the name alone when it has no owner."""
    return f"{container}.{name}" if container else name


# `Span` and `Symbol` are values: never assign to their fields. They are not
# `frozen=True` only for speed: a frozen dataclass builds through
# `object.__setattr__` per field, four times slower (3.9 ms against 1.0 ms for
# the 2,583 definitions of `id` in the Linux kernel, which a query builds
# whole), and queries build hundreds at a time. `unsafe_hash` keeps them
# hashable as frozen ones were.
@dataclass(slots=True, unsafe_hash=True)
class Span:
    """Where a definition's name is. Lines are 0-based; columns count UTF-16
    code units, as LSP requires by default."""

    line: int
    col: int
    end_line: int
    end_col: int


@dataclass(slots=True, unsafe_hash=True)
class Symbol:
    """One definition.

    `root` is the workspace folder (absolute, OS path) the definition was found
    under and `path` the file relative to it, with `/` separators. Both strings
    are shared by every symbol of a file, so a symbol costs one object.
    """

    name: str
    kind: Kind
    container: str
    root: str
    path: str
    span: Span
    language: str
    local: bool = False
    """Defined inside a function or method (a closure, a test's helper
    class): reachable by name only from there."""
    deprecated: bool = False
    """Marked deprecated by its language (`@deprecated`, `[Obsolete]`, a
    `Deprecated:` doc paragraph, ...): editors draw it struck through."""

    @property
    def file(self) -> str:
        """The definition's file, an absolute OS path (`file_path`)."""
        return file_path(self.root, self.path)

    @property
    def qualified_name(self) -> str:
        return qualified(self.container, self.name)

    @property
    def line(self) -> int:
        return self.span.line
