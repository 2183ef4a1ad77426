"""`workspace/executeCommand` `nearsym.explain`: why each result ranks where
it does.

The answer is the one `workspace/symbol` gives for the same query and open
file (the same `Answers.results`, pool and context signals), each row with
the sort key it was ordered by: every key, in the order the rerank compares
them, named by `core.sortkey` (smaller sorts first).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cattrs import Converter
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcInvalidParams

from nearsym.core.sortkey import ExplainedKey, key_items
from nearsym.lsp.convert import path_to_uri, uri_to_path
from nearsym.lsp.server import NearsymServer

EXPLAIN = "nearsym.explain"
"""The command's name, advertised in `executeCommandProvider`."""

USAGE = f"{EXPLAIN} takes [query, open file URI or null (optional), maxResults (optional)]"


def arguments(args: tuple[Any, ...]) -> tuple[str, str | None, int | None]:
    """(query, open file path or None, limit or None) from the command's
    arguments; anything else raises InvalidParams saying what is wrong."""
    if not 1 <= len(args) <= 3:
        raise _invalid(f"expected 1 to 3 arguments, got {len(args)}")
    query, uri, limit = (*args, None, None)[:3]
    if not isinstance(query, str):
        raise _invalid("the query (first argument) must be a string")
    path = None
    if uri is not None:
        if not isinstance(uri, str):
            raise _invalid("the open file (second argument) must be a URI string or null")
        path = uri_to_path(uri)
        if path is None:
            raise _invalid(f"the open file {uri!r} is not a file: URI")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise _invalid("maxResults (third argument) must be a positive whole number")
    return query, path, limit


async def explain(ls: NearsymServer, args: tuple[Any, ...]) -> dict[str, Any]:
    """`{"query", "openFile", "results": [{name, containerName, kind,
    location, ..., "keys": [{"key", "value"}, ...]}]}`.

    - With no open file in the arguments, the inferred focus stands for it,
      as for `workspace/symbol`; `openFile` says which was used (or null).
    - `maxResults` defaults to the setting's (100); the rows are the first
      of `workspace/symbol`'s answer at any larger limit.
    - An empty query's rows carry its own key (retrieval rank, then
      identity); a query over `MAX_QUERY_CHARS` gets no rows.
    """
    query, path, limit = arguments(args)
    open_file = path if path is not None else ls.focus.path
    keys: dict[int, ExplainedKey] = {}
    found = await ls.answers.results(query, open_file, keys, limit)
    results = []
    for symbol in found:
        row = _converter().unstructure(ls.to_lsp(symbol), types.WorkspaceSymbol)
        key = keys.get(id(symbol))
        row["keys"] = key_items(key) if key is not None else []
        results.append(row)
    return {
        "query": query,
        "openFile": path_to_uri(open_file) if open_file else None,
        "results": results,
    }


@cache
def _converter() -> Converter:
    """lsprotocol's converter, made at the first explanation: making one
    costs 20-40 ms, which a server start need not pay."""
    return get_converter()


def _invalid(problem: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=f"{problem}: {USAGE}")
