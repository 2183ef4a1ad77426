"""`lsp.encoded`: the JSON text of a `workspace/symbol` answer is byte for
byte what pygls writes for the same rows as lsprotocol objects, the
envelope included."""

from __future__ import annotations

import json
import os

import pytest
from pygls.protocol import default_converter

from nearsym.core.model import Kind, Span, Symbol
from nearsym.lsp.convert import BASE_KINDS, workspace_symbol
from nearsym.lsp.encoded import URI_CACHE, RowEncoder
from nearsym.lsp.handlers import make_server

CONVERTER = default_converter()
ALL_KINDS = frozenset(range(1, 27))


def symbol(name: str, kind: Kind = Kind.FUNCTION, container: str = "", path: str = "a.py",
           root: str = "/ws", span: Span | None = None, deprecated: bool = False) -> Symbol:  # fmt: skip
    span = span or Span(0, 0, 0, len(name))
    return Symbol(name, kind, container, root, path, span, "python", deprecated=deprecated)


AWKWARD = [
    symbol("plain"),
    symbol("method", Kind.METHOD, "pkg.Owner", span=Span(12, 4, 12, 10)),
    symbol("old", deprecated=True),
    symbol("oldMember", Kind.FIELD, "Owner", deprecated=True),
    symbol('say"hi"\\', container='a"b\\c'),  # quotes and backslashes
    symbol("café", Kind.CLASS, "Crème", path="naïve/é.py"),  # escaped \u00e9
    symbol("𝒳value", Kind.CONSTANT, path="x/𝒳.js"),  # a surrogate pair
    symbol("ctl\n\t\x00", path="d/ctl.py"),  # control characters
    symbol("undecodable", path=os.fsdecode(b"bytes\xff/raw.py")),  # %FF in the URI
    symbol("spaced", path="with space/100% sure.js", root="/my ws"),
    symbol("Shape", Kind.STRUCT, "shapes"),  # falls back to Class for base kinds
    symbol("Red", Kind.ENUM_MEMBER, "Color"),
    symbol("T", Kind.TYPE_PARAMETER, "List", deprecated=True),
    symbol("far", span=Span(70_000, 65_535, 70_001, 3)),
]


def lsprotocol_text(symbols: list[Symbol], supported: frozenset[int]) -> str:
    rows = [workspace_symbol(s, supported) for s in symbols]
    return json.dumps(CONVERTER.unstructure(rows))


@pytest.mark.parametrize("supported", [ALL_KINDS, BASE_KINDS, frozenset({12, 13})])
def test_rows_are_lsprotocols_text(supported: frozenset[int]) -> None:
    encoder = RowEncoder()
    assert encoder.encode(AWKWARD, supported).text == lsprotocol_text(AWKWARD, supported)
    again = encoder.encode(AWKWARD[::-1], supported)  # URIs and kinds from the caches
    assert again.text == lsprotocol_text(AWKWARD[::-1], supported)
    assert again.rows == len(AWKWARD)


def test_the_kinds_follow_the_client_s_set() -> None:
    encoder = RowEncoder()
    shape = [symbol("Shape", Kind.STRUCT)]
    assert json.loads(encoder.encode(shape, ALL_KINDS).text)[0]["kind"] == Kind.STRUCT
    assert json.loads(encoder.encode(shape, BASE_KINDS).text)[0]["kind"] == Kind.CLASS


def test_an_empty_answer_and_a_full_cache() -> None:
    encoder = RowEncoder()
    assert encoder.encode([], ALL_KINDS).text == "[]"
    many = [symbol("f", path=f"d/{n}.py") for n in range(URI_CACHE + 2)]
    assert encoder.encode(many, ALL_KINDS).text == lsprotocol_text(many, ALL_KINDS)
    last = [symbol("g", path="d/last.py")]
    assert encoder.encode(last, ALL_KINDS).text == lsprotocol_text(last, ALL_KINDS)


class Capture:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("msg_id", [7, 'req-é"1'])
def test_the_response_is_the_bytes_pygls_writes(msg_id: int | str) -> None:
    """The envelope (`id`, `jsonrpc`, `result`, in pygls' order) and the
    headers: the encoded answer against the lsprotocol one, both sent by
    the server's own protocol."""
    protocol = make_server().protocol
    capture = Capture()
    protocol.set_writer(capture)
    protocol._send_response(msg_id, result=[workspace_symbol(s, ALL_KINDS) for s in AWKWARD])
    protocol._send_response(msg_id, result=RowEncoder().encode(AWKWARD, ALL_KINDS))
    protocol._send_response(msg_id, result=RowEncoder().encode([], ALL_KINDS))
    protocol._send_response(msg_id, result=[])
    assert len(capture.sent) == 4
    assert capture.sent[1] == capture.sent[0]
    assert capture.sent[2] == capture.sent[3]
