"""One file's definitions as columns: what crosses from an indexing worker
to the server, what the on-disk cache stores, and what a segment is built
from.

A `Symbol` per definition costs about a kilobyte once its strings, span and
slots are counted; a `FileDefs` keeps a file's names and containers as two
tuples of strings, the kinds as bytes and the spans as one `array('I')`, and
encodes to a `marshal` blob of about 40 bytes a definition.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

from nearsym.core.model import Kind, Span, Symbol

LOCAL_BIT = 0x80
"""Set in a kind byte when the definition is local to a function."""
DEPRECATED_BIT = 0x40
"""Set in a kind byte when the language marks the definition deprecated."""
KIND_MASK = 0x3F
"""The LSP symbol kind in a kind byte (kinds run from 1 to 26)."""


def kind_byte(kind: int, local: bool, deprecated: bool) -> int:
    return kind | (LOCAL_BIT if local else 0) | (DEPRECATED_BIT if deprecated else 0)


@dataclass(frozen=True, slots=True)
class FileDefs:
    """The definitions of one file, in file order.

    `spans` holds four numbers per definition: line, column, end line, end
    column (0-based, columns in UTF-16 code units).
    """

    language: str
    names: tuple[str, ...]
    containers: tuple[str, ...]
    kinds: bytes
    spans: array[int]
    mentions: bytes = b""
    """The keys of the names the file mentions (`extract.mentions`: sorted
    `uint32`), for counting the files that mention a name."""

    def __len__(self) -> int:
        return len(self.names)

    @staticmethod
    def from_symbols(language: str, symbols: Iterable[Symbol]) -> FileDefs:
        rows = list(symbols)
        spans = array("I")
        for s in rows:
            spans.extend((s.span.line, s.span.col, s.span.end_line, s.span.end_col))
        return FileDefs(
            rows[0].language if rows else language,
            tuple(s.name for s in rows),
            tuple(s.container for s in rows),
            bytes(kind_byte(int(s.kind), s.local, s.deprecated) for s in rows),
            spans,
        )

    def symbols(self, root: str, path: str) -> list[Symbol]:
        out: list[Symbol] = []
        sp = self.spans
        for i, name in enumerate(self.names):
            k = self.kinds[i]
            out.append(
                Symbol(
                    name,
                    Kind(k & KIND_MASK),
                    self.containers[i],
                    root,
                    path,
                    Span(sp[4 * i], sp[4 * i + 1], sp[4 * i + 2], sp[4 * i + 3]),
                    self.language,
                    bool(k & LOCAL_BIT),
                    bool(k & DEPRECATED_BIT),
                )
            )
        return out

    def encode(self) -> bytes:
        return marshal.dumps(
            (
                self.language,
                self.names,
                self.containers,
                self.kinds,
                self.spans.tobytes(),
                self.mentions,
            )
        )

    @staticmethod
    def decode(blob: bytes) -> FileDefs:
        """Raises ValueError on a blob that is not one of ours."""
        try:
            language, names, containers, kinds, spans, mentions = marshal.loads(blob)
            table = array("I")
            table.frombytes(spans)
        except (EOFError, TypeError, ValueError) as error:
            raise ValueError(f"not a definitions record: {error}") from error
        if not (
            isinstance(language, str)
            and isinstance(names, tuple)
            and isinstance(containers, tuple)
            and isinstance(kinds, bytes)
            and isinstance(mentions, bytes)
            and len(mentions) % 4 == 0
            and len(names) == len(containers) == len(kinds) == len(table) // 4
        ):
            raise ValueError("not a definitions record: columns disagree")
        return FileDefs(language, names, containers, kinds, table, mentions)
