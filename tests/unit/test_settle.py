"""A query waits for the changes before it (`NearsymServer.settle`) until
each is `SETTLE_WAIT` old, a buffer just opened `OPEN_WAIT`: a long change
(a re-walk) is not waited for again by every query that follows it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import pytest

from nearsym.lsp import server as server_module
from nearsym.lsp.handlers import make_server
from nearsym.lsp.server import OPEN_WAIT, SETTLE_WAIT, NearsymServer

Waited = list[tuple[frozenset[asyncio.Future[Any]], float]]


def run(
    monkeypatch: pytest.MonkeyPatch, body: Callable[[NearsymServer, Waited], Awaitable[None]]
) -> None:
    """`body` on a server whose waits in `settle` are recorded (the futures
    waited for, and for how long at most)."""
    waited: Waited = []
    real = asyncio.wait

    async def recording(futures: Iterable[asyncio.Future[Any]], timeout: float) -> Any:
        futures = list(futures)
        waited.append((frozenset(futures), timeout))
        return await real(futures, timeout=timeout)

    server = make_server()
    monkeypatch.setattr(server_module.asyncio, "wait", recording)

    async def main() -> None:
        await body(server, waited)

    asyncio.run(main())
    server.answers.searcher.shutdown(wait=True)


def started(server: NearsymServer, opening: bool = False, ago: float = 0.0) -> asyncio.Future[Any]:
    """A change being applied (never ending by itself), begun `ago` seconds ago."""
    change: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    server.track(change, opening=opening)
    server._since[change] -= ago
    return change


def test_a_change_older_than_the_wait_is_not_waited_for_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def body(server: NearsymServer, waited: Waited) -> None:
        rewalk = started(server, ago=SETTLE_WAIT * 3)
        await server.settle()
        assert waited == []
        rewalk.set_result(None)

    run(monkeypatch, body)


def test_a_new_change_is_waited_for_up_to_the_wait_and_an_old_one_beside_it_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def body(server: NearsymServer, waited: Waited) -> None:
        rewalk = started(server, ago=SETTLE_WAIT * 3)
        edit = started(server)
        asyncio.get_running_loop().call_later(SETTLE_WAIT / 10, edit.set_result, None)
        await server.settle()
        assert edit.done() and not rewalk.done()
        assert [futures for futures, _ in waited] == [frozenset({edit})]
        assert 0 < waited[0][1] <= SETTLE_WAIT
        rewalk.set_result(None)

    run(monkeypatch, body)


def test_a_change_that_does_not_end_is_waited_for_once_until_it_is_old(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def body(server: NearsymServer, waited: Waited) -> None:
        rewalk = started(server)
        await server.settle()  # the first query waits for it
        assert [futures for futures, _ in waited] == [frozenset({rewalk})]
        await server.settle()  # the next ones do not
        assert len(waited) == 1
        rewalk.set_result(None)

    run(monkeypatch, body)


def test_a_buffer_just_opened_is_waited_for_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    async def body(server: NearsymServer, waited: Waited) -> None:
        opened = started(server, opening=True, ago=SETTLE_WAIT * 2)
        asyncio.get_running_loop().call_later(SETTLE_WAIT / 10, opened.set_result, None)
        await server.settle()
        assert opened.done()
        assert [futures for futures, _ in waited] == [frozenset({opened})]
        assert SETTLE_WAIT < waited[0][1] <= OPEN_WAIT - SETTLE_WAIT * 2

    run(monkeypatch, body)
