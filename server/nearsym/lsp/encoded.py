"""`workspace/symbol` rows as JSON text, built on the search thread.

Design note
-----------
pygls sends a handler's result by unstructuring it with cattrs and
`json.dumps`-ing the dicts, on the event loop; for `workspace/symbol` the
result was first built as lsprotocol objects (`convert.workspace_symbol`),
also on the loop. Over the bench's query mix on Go's standard library
(`nearsym bench --root /usr/share/go-1.19/src`'s 210 queries, stages timed
inside the server, medians per answer, 2 shared cores under load) that
was, for 100 rows: 1.7 ms building the objects, 0.4 ms of cattrs and
0.8 ms of `json.dumps`; for 500 rows 11.4, 1.8 and 4.1 ms, all on the
loop: most of what the server added to the search.

Here each row is formatted straight into the text pygls would have
written for it, on the search thread (`Answers.encoded`), and the protocol
writes that text as the response's result (`protocol.NearsymProtocol`):
the loop only joins the envelope to it. Measured the same way: 0.9 ms
(100 rows) and 4.8 ms (500) encoding on the search thread, then 0.07 and
0.10 ms on the loop to send.

Invariant: the text is byte for byte what
`json.dumps(converter.unstructure(convert.workspace_symbol(s, kinds)))`
gives: the same keys in the same order (`location`, `name`, `kind`,
`tags`, `containerName`), `", "` and `": "` separators, ASCII-only strings
escaped by the function `json.dumps` uses. `tests/unit/test_encoded.py`
compares the two for awkward symbols; `tests/e2e/test_wire.py` compares
an answer on the wire with the same answer as lsprotocol-built partial
results.

A file's URI is computed once and kept (`URI_CACHE` files): a query's
rows share few files, and the next query mostly names the same ones.
Partial results (`$/progress` pages) and `nearsym.explain` still go
through lsprotocol: they are not on the per-keystroke path.
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii

from nearsym.core.model import Kind, Symbol
from nearsym.lsp.values import BASE_KINDS, DEPRECATED_TAG, kind_number, path_to_uri

URI_CACHE = 4096
"""Files whose JSON-quoted URI is kept between queries: about 250 bytes an
entry (the key's strings, the quoted URI, the dict's slot), 1 MB at most,
more files than a few hundred answers name; a miss costs microseconds (a
path's quoting). The cache is emptied, not pruned, when full."""

_ROW = (
    '{"location": {"uri": %s, "range": {"start": {"line": %d, "character": %d},'
    ' "end": {"line": %d, "character": %d}}}, "name": %s, "kind": %d%s}'
)
"""One `WorkspaceSymbol` as lsprotocol's converter unstructures it; the
last `%s` holds `tags` and `containerName` when present."""
_TAGS = f', "tags": [{DEPRECATED_TAG}]'
"""A deprecated row's tags, as `convert.workspace_symbol` gives them."""


class EncodedResult:
    """A response's `result`, already JSON text, written as it is by
    `protocol.NearsymProtocol`."""

    __slots__ = ("rows", "text")

    def __init__(self, text: str, rows: int) -> None:
        self.text = text
        self.rows = rows


class RowEncoder:
    """Symbols to the JSON text of a `WorkspaceSymbol[]`.

    Invariant: used by one thread at a time (the search thread): its
    caches are not locked."""

    def __init__(self) -> None:
        self._uris: dict[tuple[str, str], str] = {}
        """JSON-quoted URIs by (root, path): a hit skips joining them."""
        self._kinds: dict[Kind, int] = {}
        self._kinds_for = BASE_KINDS

    def encode(self, symbols: list[Symbol], supported: frozenset[int]) -> EncodedResult:
        """The rows of `symbols`, kinds as the client knows them
        (`values.kind_number`)."""
        if supported != self._kinds_for:
            self._kinds, self._kinds_for = {}, supported
        uris, kinds = self._uris, self._kinds
        if len(uris) > URI_CACHE:
            uris.clear()
        rows = []
        for s in symbols:
            uri = uris.get((s.root, s.path))
            if uri is None:
                uri = uris[s.root, s.path] = encode_basestring_ascii(path_to_uri(s.file))
            kind = kinds.get(s.kind)
            if kind is None:
                kind = kinds[s.kind] = kind_number(s.kind, supported)
            tail = _TAGS if s.deprecated else ""
            if s.container:
                tail += ', "containerName": ' + encode_basestring_ascii(s.container)
            span = s.span
            rows.append(
                _ROW
                % (
                    uri,
                    span.line,
                    span.col,
                    span.end_line,
                    span.end_col,
                    encode_basestring_ascii(s.name),
                    kind,
                    tail,
                )
            )
        return EncodedResult("[" + ", ".join(rows) + "]", len(rows))
