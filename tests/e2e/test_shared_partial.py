"""Late shared rows as a later partial result, through the real server
over stdio against a throwaway PostgreSQL (`tests/pgcluster.py`).

A request with a `partialResultToken` gets the local answer as `$/progress`
pages at the budget; a shared pool that missed it follows as a later page,
and the response is empty (LSP's partial-result rules). The database is
made slow as in `test_shared_index.py`: a publisher's lock on the
definitions, held while the first page is checked and released after."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from .rawclient import RawClient
from .test_shared_index import USUAL, ask, publish, server, shared_messages, until

pytestmark = pytest.mark.e2e

_names = itertools.count()

BUDGET_MS = 300
"""The budget of these tests: short, so the first page comes soon."""


def projects(where: Path) -> tuple[Path, Path]:
    """(the local project open in the editor, a repository only published):
    each defines a name `helper` matches."""
    local = where / "myproject"
    local.mkdir(parents=True)
    (local / "helpers.py").write_text("def local_helper():\n    pass\n")
    shared = where / "pub" / "toolbox"
    shared.mkdir(parents=True)
    (shared / "tools.py").write_text("def shared_only_helper():\n    pass\n")
    return local, shared


@pytest.fixture
def database(postgres: Any, tmp_path: Path) -> tuple[str, Path, Path]:
    """A fresh database with `toolbox` published: (URL, local root, toolbox)."""
    url = str(postgres.create_database(f"partial{next(_names)}"))
    local, shared = projects(tmp_path)
    publish(url, shared)
    return url, local, shared


def send(client: RawClient, params: dict[str, Any]) -> tuple[int, asyncio.Future[Any]]:
    """A workspace/symbol request, not waited for: (its id, its response)."""
    msg_id = next(client.ids)
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    client.pending[msg_id] = future
    client.send({"id": msg_id, "method": "workspace/symbol", "params": params})
    return msg_id, future


def pages(client: RawClient, token: str) -> list[list[str]]:
    """The names of each `$/progress` page of `token`, in arrival order."""
    return [
        [s["name"] for s in n["params"]["value"]]
        for n in client.notifications
        if n.get("method") == "$/progress" and n["params"]["token"] == token
    ]


def all_rows(client: RawClient, token: str) -> list[dict[str, Any]]:
    return [
        s
        for n in client.notifications
        if n.get("method") == "$/progress" and n["params"]["token"] == token
        for s in n["params"]["value"]
    ]


async def first_page(client: RawClient, token: str) -> list[str]:
    deadline = time.monotonic() + USUAL
    while not pages(client, token):
        assert time.monotonic() < deadline, "no partial result"
        await asyncio.sleep(0.01)
    return pages(client, token)[0]


async def ready(client: RawClient) -> None:
    """Indexed and connected: both rows answer."""
    await until(client, "local_helper", bool)
    await until(client, "shared_only_helper", bool)


def lock(url: str) -> Any:
    """A publisher holding the definitions: every shared query waits on it
    (until `rollback()`, or 5 s, the server's lock_timeout)."""
    import psycopg

    blocker = psycopg.connect(url)
    blocker.execute("LOCK TABLE nearsym.definition IN ACCESS EXCLUSIVE MODE")
    return blocker


async def no_late_page(client: RawClient, token: str) -> None:
    """Once the shared pool is back (a later query gets it, so the held
    query's pool has arrived too), `token` still has only the first page."""
    await until(client, "shared_only_helper", bool)
    await ask(client, "helper")
    assert pages(client, token) == [["local_helper"]]


@asynccontextmanager
async def held(
    database: tuple[str, Path, Path], token: str
) -> AsyncIterator[tuple[RawClient, Any, int, asyncio.Future[Any]]]:
    """A server asked `helper` with `token` while a publisher holds the
    shared definitions, once the local rows came as the first page:
    (client, the publisher's connection, the request's id, its response)."""
    url, local, _ = database
    async with server(local, url, budget_ms=BUDGET_MS) as client:
        await ready(client)
        with lock(url) as blocker:
            msg_id, response = send(client, {"query": "helper", "partialResultToken": token})
            assert await first_page(client, token) == ["local_helper"]
            yield client, blocker, msg_id, response


async def test_late_shared_rows_follow_as_a_second_page(
    database: tuple[str, Path, Path],
) -> None:
    url, local, toolbox = database
    async with server(local, url, budget_ms=BUDGET_MS) as client:
        await ready(client)
        with lock(url) as blocker:
            started = time.monotonic()
            _, response = send(client, {"query": "helper", "partialResultToken": "late"})
            # The local answer comes at the budget, while the database still
            # holds every shared query back, and before the response.
            assert await first_page(client, "late") == ["local_helper"]
            took = time.monotonic() - started
            assert took < USUAL
            assert not response.done()
            blocker.rollback()
        answer = await asyncio.wait_for(response, 30)
        assert answer["result"] == []
        assert pages(client, "late") == [["local_helper"], ["shared_only_helper"]]
        late = all_rows(client, "late")[1]
        assert late["containerName"] == "toolbox"
        assert late["location"]["uri"] == (toolbox / "tools.py").as_uri()
    assert shared_messages(client) == []


async def test_a_fast_database_gives_one_merged_page(database: tuple[str, Path, Path]) -> None:
    url, local, _ = database
    async with server(local, url) as client:  # a generous budget: the pool joins
        await ready(client)
        whole = await ask(client, "helper")
        assert {s["name"] for s in whole} == {"local_helper", "shared_only_helper"}
        answer = await client.request(
            "workspace/symbol", {"query": "helper", "partialResultToken": "fast"}, timeout=30
        )
        assert answer["result"] == []
        assert len(pages(client, "fast")) == 1
        assert all_rows(client, "fast") == whole


async def test_without_a_token_late_rows_are_dropped_as_before(
    database: tuple[str, Path, Path],
) -> None:
    url, local, _ = database
    async with server(local, url, budget_ms=BUDGET_MS) as client:
        await ready(client)
        with lock(url) as blocker:
            assert [s["name"] for s in await ask(client, "helper")] == ["local_helper"]
            blocker.rollback()
        await until(client, "shared_only_helper", bool)
        assert not [n for n in client.notifications if n.get("method") == "$/progress"]


async def test_a_cancelled_request_sends_no_late_page(database: tuple[str, Path, Path]) -> None:
    async with held(database, "gone") as (client, blocker, msg_id, response):
        client.notify("$/cancelRequest", {"id": msg_id})
        answer = await asyncio.wait_for(response, 30)
        blocker.rollback()
        assert answer["error"]["code"] == -32800  # RequestCancelled
        await no_late_page(client, "gone")


async def test_a_newer_query_ends_the_wait_without_a_late_page(
    database: tuple[str, Path, Path],
) -> None:
    async with held(database, "old") as (client, blocker, _, older):
        newer = await ask(client, "local_help")
        # The older request ends at once, while its pool is still held back.
        assert (await asyncio.wait_for(older, 30))["result"] == []
        blocker.rollback()
        assert [s["name"] for s in newer] == ["local_helper"]
        await no_late_page(client, "old")


async def test_a_database_error_after_the_budget_gives_no_late_page(
    database: tuple[str, Path, Path],
) -> None:
    async with held(database, "broken") as (client, blocker, _, response):
        # The server's connection dies while its query waits for the lock.
        killed: list[Any] = []
        for _ in range(300):
            killed = blocker.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                " AND wait_event_type = 'Lock'"
            ).fetchall()
            if killed:
                break
            await asyncio.sleep(0.01)
        assert killed
        answer = await asyncio.wait_for(response, 30)
        blocker.rollback()
        assert answer["result"] == []
        assert pages(client, "broken") == [["local_helper"]]
        said = shared_messages(client)
        assert len(said) == 1 and "cannot be used" in said[0], said
