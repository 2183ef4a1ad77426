"""The event loop never waits on long work: a query is answered while a
`.gitignore` re-walk of 3,000 files runs, while a 10 MB buffer is parsed,
and a 50 MB query string is answered at all.

Timings are printed, not asserted (the machine is shared): each test
asserts instead that the answer came *before* the long work ended, which
with the work on the event loop (or under the lock throughout) it cannot."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from .rawclient import RawClient
from .test_lifecycle import initialize, progress_kinds, wait_for
from .trees import write_tree

pytestmark = pytest.mark.e2e

WATCHING = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}


async def timed(client: RawClient, query: str, timeout: float = 60) -> tuple[float, list[Any]]:
    started = time.perf_counter()
    reply = await client.request("workspace/symbol", {"query": query}, timeout=timeout)
    return time.perf_counter() - started, reply["result"]


async def test_a_query_answers_while_a_gitignore_rewalk_runs(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "kept.py").write_text("def kept_here():\n    pass\n")
    write_tree(root / "ignored", 3000, prefix="unignored")
    (root / ".git").mkdir()  # .gitignore applies in a repository
    (root / ".gitignore").write_text("ignored/\n")
    client = await RawClient.start(stderr=True)
    try:
        await initialize(client, root, WATCHING, {"cache": False})
        await wait_for(lambda: "end" in progress_kinds(client))
        assert (await timed(client, "UnignoredClass"))[1] == []
        (root / ".gitignore").write_text("")
        client.notify(
            "workspace/didChangeWatchedFiles",
            {"changes": [{"uri": (root / ".gitignore").as_uri(), "type": 2}]},
        )
        # The walk goes in folder order: the last folders' names are asked
        # first, so that an answer that came before the re-walk ended shows.
        # One at a time: queries asked together are not answered in the
        # order they came (each first waits for the changes before it to
        # land, `Answers.settle`, and those waiting wake in any order), so
        # 12 asked at once had the first folder's answered first, found.
        sample = [f"UnignoredClass{f}" for f in range(2750, -1, -250)]
        answered: list[tuple[float, bool]] = []
        for name in sample:
            took, result = await timed(client, name)
            answered.append((took, bool(result)))
            if not result:
                break
        print("during the re-walk, ms and found:", [(round(t * 1000), f) for t, f in answered])
        assert not answered[-1][1]  # answered before the re-walk was done
        deadline = time.monotonic() + 300
        while not all([(await timed(client, name))[1] for name in sample]):
            assert time.monotonic() < deadline, "the re-walk never ended"
            await asyncio.sleep(0.2)
        assert (await timed(client, "kept_here"))[1]
    finally:
        assert await client.close() == 0
    assert "Traceback" not in await client.errors()


def ten_megabytes() -> str:
    """A 10 MB Python buffer whose one definition, at its end, appears
    only once the whole buffer is parsed: 7.5 MB of comments (parsed in
    0.2 s) and 2.7 MB of calls (about 1.7 s of CPU here, on a quiet machine:
    comments alone were parsed before a loaded machine answered a query)."""
    comments = ("# " + "x" * 97 + "\n") * 75_000
    calls = "call(1, 2, 3, 4, 5, 6, 7, 8, 9, alpha, beta)\n" * 60_000
    return comments + calls + "def huge_buffer_marker():\n    pass\n"


async def test_a_query_answers_while_a_10mb_buffer_is_parsed(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", 20)
    client = await RawClient.start(stderr=True)
    try:
        await initialize(client, root, {}, {"cache": False, "maxFileBytes": 20_000_000})
        await wait_for(lambda: "end" in progress_kinds(client))
        uri = (root / "big.py").as_uri()
        text = ten_megabytes()
        assert len(text) > 10_000_000
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        # The first query waits behind the 10 MB message itself (the pipe,
        # the JSON); the second is asked while the buffer is being parsed.
        seconds, first = await timed(client, "huge_buffer_marker")
        print(f"first query after the 10 MB didOpen: {seconds * 1000:.0f} ms")
        seconds, first = await timed(client, "huge_buffer_marker")
        print(f"answered in {seconds * 1000:.0f} ms while the 10 MB buffer was parsed")
        assert first == []  # answered before the parse was done
        assert (await timed(client, "gen_3_1"))[1]  # the rest answers too
        started = time.perf_counter()
        while not (await timed(client, "huge_buffer_marker"))[1]:
            await asyncio.sleep(0.1)
        print(f"the buffer's definition answerable {time.perf_counter() - started:.1f} s later")
        # An edit that makes it 10 MB again: the same, through didChange.
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": text.replace("huge_buffer_marker", "edited_marker")}],
            },
        )
        await timed(client, "edited_marker")
        seconds, first = await timed(client, "edited_marker")
        print(f"answered in {seconds * 1000:.0f} ms while the changed buffer was parsed")
        assert first == []
        while not (await timed(client, "edited_marker"))[1]:
            await asyncio.sleep(0.1)
        assert (await timed(client, "huge_buffer_marker"))[1] == []
    finally:
        assert await client.close() == 0
    assert "Traceback" not in await client.errors()


async def test_a_50mb_query_is_answered(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "ws", 20)
    client = await RawClient.start(stderr=True)
    try:
        await initialize(client, root, {}, {"cache": False})
        await wait_for(lambda: "end" in progress_kinds(client))
        seconds, found = await timed(client, "gen_" + "a" * 50_000_000)
        print(f"a 50 MB query answered in {seconds:.2f} s")
        assert found == []
        seconds, found = await timed(client, "gen_2_3")
        print(f"the next query in {seconds * 1000:.0f} ms")
        assert found[0]["name"] == "gen_2_3"
    finally:
        assert await client.close() == 0
    assert "Traceback" not in await client.errors()
