"""The publisher's COPY text (`nearsym.index.shared.definition_blocks`):
one line per definition, the fields a text COPY reads back as given."""

from __future__ import annotations

import pytest

from nearsym.core.model import Kind, Span, Symbol

pytest.importorskip("psycopg")

from nearsym.index.shared import DEFINITION_COLUMNS, definition_blocks


def symbol(name: str, container: str = "", line: int = 0) -> Symbol:
    return Symbol(name, Kind.FUNCTION, container, "/r", "a.c", Span(line, 1, line, 4), "c")


def unescape(field: str) -> str:
    return (
        field.replace("\\\\", "\0").replace("\\t", "\t").replace("\\n", "\n").replace("\\r", "\r")
    ).replace("\0", "\\")


def test_each_definition_is_one_line_of_every_column() -> None:
    files = [("a.c", [symbol("get_user", "Server")]), ("b.c", [symbol("x", line=3)])]
    lines = "".join(definition_blocks(7, files)).splitlines()
    assert len(lines) == 2
    first = lines[0].split("\t")
    assert len(first) == len(DEFINITION_COLUMNS.split(","))
    assert first[:8] == ["7", "0", "get_user", "get_user", "gu", "Server", "server", "12"]
    assert lines[1].split("\t")[1] == "1"  # the second file's number


def test_tabs_newlines_and_backslashes_are_escaped() -> None:
    odd = "a\tb\nc\\d\re"
    lines = "".join(definition_blocks(1, [("a.c", [symbol(odd, odd)])])).splitlines()
    assert len(lines) == 1
    fields = lines[0].split("\t")
    assert unescape(fields[2]) == odd
    assert unescape(fields[5]) == odd
