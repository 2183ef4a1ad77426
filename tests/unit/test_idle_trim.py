"""The server hands its free heap back once the client has been quiet
(`server.IDLE_TRIM`): once per quiet spell, on the search thread, never
while a change is still being applied, never after shutdown."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

import pytest

from nearsym.lsp import server as server_module
from nearsym.lsp.handlers import make_server
from nearsym.lsp.server import NearsymServer

QUIET = 0.05
MESSAGE = {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {}}


def run(
    monkeypatch: pytest.MonkeyPatch,
    body: Callable[[NearsymServer], Awaitable[None]],
    trims: list[str] | None = None,
) -> list[str]:
    """`body` on a server whose `idle` records the thread it ran on (in
    `trims`, when given)."""
    trims = [] if trims is None else trims
    monkeypatch.setattr(
        server_module, "idle", lambda: trims.append(threading.current_thread().name)
    )
    monkeypatch.setattr(server_module, "IDLE_TRIM", QUIET)
    server = make_server()

    async def main() -> None:
        await body(server)

    asyncio.run(main())
    server.answers.searcher.shutdown(wait=True)
    return trims


async def trimmed(trims: list[str], count: int = 1) -> None:
    """Wait until `count` trims ran (a loaded machine may take a while),
    then as long again: no further one comes."""
    deadline = asyncio.get_running_loop().time() + 10
    while len(trims) < count and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(QUIET / 5)
    await asyncio.sleep(QUIET * 4)


def test_one_trim_after_a_message_once_quiet_on_the_search_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trims: list[str] = []

    async def body(server: NearsymServer) -> None:
        server.observe(MESSAGE)
        await trimmed(trims)

    run(monkeypatch, body, trims)
    assert len(trims) == 1
    assert trims[0].startswith("nearsym-search")


def test_each_message_restarts_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    trims: list[str] = []
    timers: list[asyncio.TimerHandle] = []

    async def body(server: NearsymServer) -> None:
        for _ in range(10):
            server.observe(MESSAGE)
            assert server._trimming is not None
            timers.append(server._trimming)
        await trimmed(trims)

    run(monkeypatch, body, trims)
    assert all(t.cancelled() for t in timers[:-1])
    assert len(trims) == 1


def test_a_change_being_applied_puts_the_trim_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    during: list[int] = []

    trims: list[str] = []

    async def body(server: NearsymServer) -> None:
        change: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        server.track(change)
        server.observe(MESSAGE)
        await asyncio.sleep(QUIET * 4)
        during.append(len(trims) + len(server.jobs))
        change.set_result(None)
        await trimmed(trims)

    run(monkeypatch, body, trims)
    assert during == [0]
    assert len(trims) == 1


def test_no_trim_after_shutdown(monkeypatch: pytest.MonkeyPatch) -> None:
    async def body(server: NearsymServer) -> None:
        server.observe(MESSAGE)
        server.close()
        await asyncio.sleep(QUIET * 4)

    assert run(monkeypatch, body) == []
