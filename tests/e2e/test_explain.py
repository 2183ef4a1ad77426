"""`workspace/executeCommand` `nearsym.explain` against the real server over
stdio: advertised, the same order as `workspace/symbol`, every sort key
named, bad arguments refused with InvalidParams."""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nearsym.core.query import Query
from nearsym.core.sortkey import EmptyQueryKey, SortKey

from .rawclient import RawClient
from .test_lifecycle import NO_CACHE, PROGRESS, initialize, progress_kinds, wait_for

pytestmark = pytest.mark.e2e

SHOP = Path(__file__).resolve().parent.parent / "fixtures" / "golden" / "shop"
OPEN_FILES = [
    None,
    "src/shop/cart.py",
    "src/shop/http/client.py",
    "tests/test_cart.py",
    "web/src/api.ts",
    "services/inventory/inventory.go",
]
INVALID_PARAMS = -32602

T = TypeVar("T")


class Served:
    """One server over stdio on an event loop of its own thread, so that
    hypothesis (which is synchronous) can drive it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client: RawClient = self.run(self._start())

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(60)

    async def _start(self) -> RawClient:
        client = await RawClient.start()
        await initialize(client, self.root, {})
        await wait_for(lambda: "end" in progress_kinds(client))
        return client

    def request(self, method: str, params: Any) -> dict[str, Any]:
        return self.run(self.client.request(method, params, timeout=30))

    def explain(self, *arguments: Any) -> dict[str, Any]:
        return self.request(
            "workspace/executeCommand", {"command": "nearsym.explain", "arguments": list(arguments)}
        )

    def close(self) -> None:
        try:
            assert self.run(self.client.close()) == 0
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("explain") / "shop"
    shutil.copytree(SHOP, root)
    server = Served(root)
    yield server
    server.close()


def where(row: dict[str, Any]) -> tuple[str, str, str, Any]:
    location = row["location"]
    return row["name"], row.get("containerName", ""), location["uri"], location["range"]


def uri_of(root: Path, relative: str | None) -> str | None:
    return (root / relative).as_uri() if relative else None


async def test_capabilities_list_nearsym_explain(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    shutil.copytree(SHOP, root)
    client = await RawClient.start()
    try:
        reply = await client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": PROGRESS,
                "initializationOptions": NO_CACHE,
            },
            timeout=30,
        )
        commands = reply["result"]["capabilities"]["executeCommandProvider"]["commands"]
        assert "nearsym.explain" in commands
        client.notify("initialized", {})
        await wait_for(lambda: "end" in progress_kinds(client))
        answer = await client.request(
            "workspace/executeCommand",
            {"command": "nearsym.explain", "arguments": ["Cart", None, 3]},
        )
        rows = answer["result"]["results"]
        assert rows and len(rows) <= 3
        assert rows[0]["name"] == "Cart"
        assert [k["key"] for k in rows[0]["keys"]] == list(SortKey._fields)
        assert answer["result"]["openFile"] is None
    finally:
        assert await client.close() == 0


_query_text = st.one_of(
    st.sampled_from(["cart", "Cart", "add", "client", "get", "item", "ci", "inv", "req", "t"]),
    st.text(alphabet="abcdeilmnoprstu_.", min_size=1, max_size=4),
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=_query_text, opened=st.sampled_from(OPEN_FILES), limit=st.integers(1, 120))
def test_explain_orders_as_workspace_symbol(
    served: Served, query: str, opened: str | None, limit: int
) -> None:
    uri = uri_of(served.root, opened)
    params: dict[str, Any] = {"query": query}
    if uri is not None:
        params["textDocument"] = {"uri": uri}
    symbols = served.request("workspace/symbol", params)["result"]
    explained = served.explain(query, uri, limit)["result"]
    rows = explained["results"]
    assert [where(r) for r in rows] == [where(s) for s in symbols][:limit]
    assert explained["openFile"] == uri
    want = EmptyQueryKey._fields if Query.parse(query).empty else SortKey._fields
    for row in rows:
        assert tuple(k["key"] for k in row["keys"]) == want, row
    compared = [tuple(k["value"] for k in row["keys"]) for row in rows]
    assert compared == sorted(compared)  # the keys are the order's own


@pytest.mark.parametrize(
    "arguments",
    [
        None,
        [],
        [42],
        [None],
        ["cart", 7],
        ["cart", "https://example.invalid/x.py"],
        ["cart", None, 0],
        ["cart", None, "ten"],
        ["cart", None, True],
        ["cart", None, 5, "extra"],
        [{"query": "cart"}],
    ],
)
def test_bad_arguments_are_invalid_params(served: Served, arguments: Any) -> None:
    params: dict[str, Any] = {"command": "nearsym.explain"}
    if arguments is not None:
        params["arguments"] = arguments
    reply = served.request("workspace/executeCommand", params)
    assert reply["error"]["code"] == INVALID_PARAMS, reply
    assert "nearsym.explain takes" in reply["error"]["message"]
    after = served.explain("Cart")["result"]["results"]  # still serving
    assert after[0]["name"] == "Cart"
