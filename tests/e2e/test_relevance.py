"""Relevance over stdio: initials past a full prefix tier, typos, and a
best answer that does not depend on maxResults.

The workspace copies the situation of a large repository in a few files:
hundreds of names start with `ce`, `se` and `be`, so the narrowest pool is
full of prefixes before the names whose initials the query types."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from .rawclient import RawClient

pytestmark = pytest.mark.e2e


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write(
        root / "pkg" / "errors.py",
        "class ConfigError(Exception):\n    pass\n\n\nclass SphinxError(Exception):\n    pass\n",
    )
    write(root / "pkg" / "environment.py", "class BuildEnvironment:\n    pass\n")
    write(root / "pkg" / "client.py", "class AsyncClient:\n    def send(self):\n        pass\n")
    filler = [f"def {p}{i:03d}():\n    pass\n" for p in ("ce", "se", "be") for i in range(300)]
    write(root / "pkg" / "many.py", "\n\n".join(filler))
    write(root / "pkg" / "cells.py", "class Cell:\n    pass\n\n\nSEP = '/'\n")
    return root


async def start(root: Path, home: Path, max_results: int | None = None) -> RawClient:
    env = {**os.environ, "HOME": str(home), "NEARSYM_CACHE_DIR": str(home / "cache")}
    client = await RawClient.start(env=env)
    options: dict[str, Any] = {} if max_results is None else {"maxResults": max_results}
    await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {},
            "initializationOptions": options,
        },
        timeout=60,
    )
    client.notify("initialized", {})
    return client


async def names(client: RawClient, query: str, want: str | None = None) -> list[str]:
    """The answer's names; with `want`, asked until the index holds it."""
    for _ in range(400):
        answer = await client.request("workspace/symbol", {"query": query})
        found = [s["name"] for s in answer["result"]]
        if want is None or want in found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{want!r} never answered {query!r}")


async def test_initials_are_found_past_a_full_prefix_tier(project: Path, tmp_path: Path) -> None:
    client = await start(project, tmp_path / "home", max_results=10)
    try:
        await names(client, "ce001", "ce001")  # indexed
        for query, meant in [
            ("CE", "ConfigError"),
            ("SE", "SphinxError"),
            ("BE", "BuildEnvironment"),
            ("AC", "AsyncClient"),
        ]:
            assert (await names(client, query))[0] == meant, query
    finally:
        assert await client.close() == 0


async def test_a_typo_answers_the_name_it_slipped_from(project: Path, tmp_path: Path) -> None:
    client = await start(project, tmp_path / "home")
    try:
        await names(client, "ce001", "ce001")
        assert await names(client, "AsyncCleint") == ["AsyncClient"]
        assert (await names(client, "BuildEnviroment"))[0] == "BuildEnvironment"
        assert "ConfigError" in await names(client, "CofnigError")
    finally:
        assert await client.close() == 0


async def test_the_first_answers_do_not_depend_on_max_results(
    project: Path, tmp_path: Path
) -> None:
    answers: dict[int, list[str]] = {}
    for limit in (1, 20, 100):
        client = await start(project, tmp_path / f"home{limit}", max_results=limit)
        try:
            await names(client, "ce001", "ce001")
            answers[limit] = await names(client, "ce")
        finally:
            assert await client.close() == 0
    assert answers[1] == answers[100][:1]
    assert answers[20] == answers[100][:20]
