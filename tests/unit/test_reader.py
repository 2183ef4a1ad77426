"""The input stream's reader (`lsp.wire`): items in order, framing and
JSON errors said and skipped, the end of the stream said once."""

from __future__ import annotations

import json
from typing import Any

from nearsym.lsp.wire import MAX_HEADER_BYTES, Reader


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_all(chunks: list[bytes]) -> list[tuple[str, Any]]:
    """What a reader hands on for `chunks` arriving one read at a time."""
    got: list[tuple[str, Any]] = []
    pending = list(chunks)
    Reader(lambda n: pending.pop(0) if pending else b"", lambda k, v: got.append((k, v))).run()
    return got


def test_items_in_order_and_the_end_once() -> None:
    one = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    two = frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    stream = one + two
    # Cut anywhere, even inside a header: the same two messages.
    for cut in (1, 10, len(one) - 1, len(one), len(one) + 5):
        got = read_all([stream[:cut], stream[cut:]])
        assert [k for k, _ in got] == ["message", "message", "end"]
        assert [v["method"] for k, v in got if k == "message"] == ["initialize", "initialized"]


def test_bad_bodies_and_headers_are_said_and_skipped() -> None:
    good = frame({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    got = read_all(
        [
            b"Content-Length: 3\r\n\r\n{x}",  # not JSON
            b"Content-Length: 2\r\n\r\n\xff\xfe",  # not UTF-8
            b"X" * (MAX_HEADER_BYTES + 10),  # no header end in sight
            b"Content-Length: ten\r\n\r\n",  # no byte count
            good,
        ]
    )
    kinds = [k for k, _ in got]
    assert kinds.count("error") == 4 and kinds[-2:] == ["message", "end"]
    assert got[-2][1]["method"] == "initialized"


def test_a_failing_read_ends_the_stream() -> None:
    got: list[tuple[str, Any]] = []

    def broken(n: int) -> bytes:
        raise OSError("gone")

    Reader(broken, lambda k, v: got.append((k, v))).run()
    assert got == [("end", None)]
