"""The shared index through the real server: `nearsym publish` of real code
(pygls and attrs, as installed beside the tests) into a throwaway
PostgreSQL, then `nearsym serve` over stdio with `sharedIndex` set.

Timing checks here are bounds on a loaded machine, not measurements: "an
answer within the usual time" is within a few seconds while the shared
index is failing, against 30 s or forever if an answer waited on it."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import itertools
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from .rawclient import RawClient

pytestmark = pytest.mark.e2e

_names = itertools.count()

GENEROUS_MS = 5000
"""The budget of tests that expect the shared rows: a loaded test machine
may take more than the default 150 ms for a pool."""

USUAL = 5.0
"""Seconds an answer may take while the shared index fails (the server's
own answer on these small trees takes well under one)."""


def installed(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def copy_package(package: str, where: Path) -> Path:
    """A private copy of an installed package's source: real code, present
    on every machine the tests run on."""
    target = where / package
    shutil.copytree(installed(package), target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def publish(url: str, root: Path, name: str | None = None) -> None:
    command = [sys.executable, "-m", "nearsym", "publish", "--root", str(root), "--to", url]
    command += ["--no-cache"] + (["--name", name] if name else [])
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def local_project(where: Path) -> Path:
    """The small project a person has open: it defines a name pygls
    defines too (`LanguageServer`)."""
    root = where / "myproject"
    (root / "app").mkdir(parents=True)
    (root / "app" / "server.py").write_text(
        "class LanguageServer:\n    pass\n\n\ndef start_my_project():\n    pass\n"
    )
    return root


@contextlib.asynccontextmanager
async def server(
    root: Path, url: str | None, budget_ms: int = GENEROUS_MS
) -> AsyncIterator[RawClient]:
    client = await RawClient.start(cwd=str(root))
    options: dict[str, Any] = {"cache": False, "sharedIndexBudgetMs": budget_ms}
    if url is not None:
        options["sharedIndex"] = url
    params = {
        "processId": None,
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        "capabilities": {},
        "initializationOptions": options,
    }
    try:
        await client.request("initialize", params, timeout=30)  # a loaded CI machine
        client.notify("initialized", {})
        yield client
    finally:
        assert await client.close() == 0


async def ask(client: RawClient, query: str, open_file: Path | None = None) -> list[dict[str, Any]]:
    params: dict[str, Any] = {"query": query}
    if open_file is not None:
        params["textDocument"] = {"uri": open_file.as_uri()}
    answer = await client.request("workspace/symbol", params, timeout=30)
    return list(answer.get("result") or [])


async def until(
    client: RawClient, query: str, found: Any, tries: int = 300
) -> list[dict[str, Any]]:
    """Ask until `found(answer)` holds (indexing, connecting); the last answer."""
    answer: list[dict[str, Any]] = []
    for _ in range(tries):
        answer = await ask(client, query)
        if found(answer):
            return answer
        await asyncio.sleep(0.1)
    raise AssertionError(f"never found for {query!r}: {answer[:5]}")


def messages(client: RawClient) -> list[str]:
    return [
        n["params"]["message"]
        for n in client.notifications
        if n.get("method") == "window/showMessage"
    ]


def shared_messages(client: RawClient) -> list[str]:
    return [m for m in messages(client) if "shared index" in m]


def uri_under(symbol: dict[str, Any], root: Path) -> bool:
    return str(symbol["location"]["uri"]).startswith(root.as_uri() + "/")


@pytest.fixture(scope="module")
def published(postgres: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    """pygls and attrs published into a fresh database: (URL, their roots)."""
    url = str(postgres.create_database(f"serve{next(_names)}"))
    where = tmp_path_factory.mktemp("published")
    pygls, attrs = copy_package("pygls", where), copy_package("attr", where)
    publish(url, pygls)
    publish(url, attrs)
    return url, pygls, attrs


async def test_published_repositories_answer_beside_the_open_project(
    published: tuple[str, Path, Path], tmp_path: Path
) -> None:
    url, pygls, attrs = published
    root = local_project(tmp_path)
    async with server(root, url) as client:
        await until(client, "start_my_project", bool)
        # Definitions of both published repositories, neither open here.
        protocol = await until(client, "JsonRPCProtocol", bool)
        assert protocol[0]["name"] == "JsonRPCProtocol"
        assert uri_under(protocol[0], pygls)  # where the publisher recorded it
        assert protocol[0]["containerName"] == "pygls"  # names the repository
        factory = await until(client, "Factory", lambda a: any(uri_under(s, attrs) for s in a))
        assert any(s["name"] == "Factory" and uri_under(s, attrs) for s in factory)
        # A name both define: the open project's own first, the published one after.
        local_file = root / "app" / "server.py"
        both = await ask(client, "LanguageServer", local_file)
        named = [s for s in both if s["name"] == "LanguageServer"]
        assert uri_under(named[0], root)
        assert any(uri_under(s, pygls) for s in named[1:])
    assert shared_messages(client) == []


async def test_an_open_checkout_answers_from_its_live_rows(
    published: tuple[str, Path, Path], tmp_path: Path
) -> None:
    url, pygls, _ = published
    checkout = tmp_path / "pygls"
    shutil.copytree(pygls, checkout)
    # A local change the shared index does not have: a class renamed.
    path = checkout / "protocol" / "json_rpc.py"
    path.write_text(path.read_text().replace("class JsonRPCProtocol", "class RenamedProtocol"))
    async with server(checkout, url) as client:
        await until(client, "RenamedProtocol", bool)
        # The published row of the renamed class is not shown: the live
        # index, not the shared one, answers for this repository.
        answer = await ask(client, "JsonRPCProtocol")
        assert not [s for s in answer if s["name"] == "JsonRPCProtocol"], answer[:3]
        # Every row of pygls comes once, from the checkout.
        rows = await ask(client, "LanguageServer")
        assert rows and all(uri_under(s, checkout) for s in rows if s["name"] == "LanguageServer")
        assert not any(uri_under(s, pygls) for s in rows)


@pytest.fixture
def own_cluster(tmp_path: Path) -> Any:
    """A cluster of this test's own, to stop and start."""
    from tests.pgcluster import Cluster, binaries

    found = binaries()
    if found is None:
        pytest.skip("PostgreSQL binaries not installed")
    cluster = Cluster(found)
    try:
        yield cluster
    finally:
        cluster.close()


def small_repository(where: Path) -> Path:
    root = where / "toolbox"
    root.mkdir(parents=True)
    (root / "tools.py").write_text("def shared_only_helper():\n    pass\n")
    return root


async def timed(client: RawClient, query: str) -> tuple[float, list[dict[str, Any]]]:
    started = time.perf_counter()
    answer = await ask(client, query)
    return time.perf_counter() - started, answer


async def test_a_database_stopped_mid_session_is_said_once_and_recovers(
    own_cluster: Any, tmp_path: Path
) -> None:
    url = own_cluster.url()
    publish(url, small_repository(tmp_path / "pub"))
    root = local_project(tmp_path)
    async with server(root, url, budget_ms=1000) as client:
        await until(client, "shared_only_helper", bool)
        await until(client, "start_my_project", bool)
        own_cluster.stop()
        for _ in range(8):
            took, answer = await timed(client, "start_my_project")
            assert took < USUAL
            assert [s["name"] for s in answer] == ["start_my_project"]
            assert await ask(client, "shared_only_helper") == []
        said = shared_messages(client)
        assert len(said) == 1, said
        own_cluster.start()
        # Probes back off from 1 s; the first one after the restart reconnects.
        await until(client, "shared_only_helper", bool, tries=600)
        assert len([m for m in shared_messages(client) if "back" in m]) == 1


async def test_a_refused_login_is_said_once_and_answers_stay_local(
    postgres: Any, tmp_path: Path
) -> None:
    root = local_project(tmp_path)
    async with server(root, postgres.url(password="not-the-password")) as client:
        await until(client, "start_my_project", bool)
        for _ in range(5):
            took, answer = await timed(client, "start_my_project")
            assert took < USUAL
            assert [s["name"] for s in answer] == ["start_my_project"]
            await asyncio.sleep(0.3)
        said = shared_messages(client)
    assert len(said) == 1, said
    assert "password authentication failed" in said[0]
    assert "not-the-password" not in said[0]


async def test_a_schema_of_another_version_is_said_once(postgres: Any, tmp_path: Path) -> None:
    import psycopg

    url = str(postgres.create_database(f"schema{next(_names)}"))
    publish(url, small_repository(tmp_path / "pub"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE nearsym.meta SET version = 999")
    root = local_project(tmp_path)
    async with server(root, url) as client:
        await until(client, "start_my_project", bool)
        for _ in range(4):
            assert await ask(client, "shared_only_helper") == []
            await asyncio.sleep(0.3)
        said = shared_messages(client)
    assert len(said) == 1, said
    assert "version 999" in said[0]


async def test_a_query_slower_than_the_budget_is_answered_locally(
    postgres: Any, tmp_path: Path
) -> None:
    import psycopg

    url = str(postgres.create_database(f"slow{next(_names)}"))
    publish(url, small_repository(tmp_path / "pub"))
    root = local_project(tmp_path)
    async with server(root, url, budget_ms=300) as client:
        await until(client, "shared_only_helper", bool)
        await until(client, "start_my_project", bool)
        # A publisher holding the table: every shared query waits on it.
        with psycopg.connect(url) as blocker:
            blocker.execute("LOCK TABLE nearsym.definition IN ACCESS EXCLUSIVE MODE")
            for _ in range(5):
                took, answer = await timed(client, "start_my_project")
                assert took < USUAL
                assert [s["name"] for s in answer] == ["start_my_project"]
            said = shared_messages(client)
            assert len(said) == 1 and "slower than 300 ms" in said[0], said
            blocker.rollback()
        await until(client, "shared_only_helper", bool)
    assert len(shared_messages(client)) == 1


async def test_a_republish_during_queries_never_mixes_versions(
    postgres: Any, tmp_path: Path
) -> None:
    url = str(postgres.create_database(f"mix{next(_names)}"))
    versions = []
    for v in (1, 2):
        root = tmp_path / f"v{v}" / "mixed"
        root.mkdir(parents=True)
        for i in range(40):
            (root / f"m{i:02}.py").write_text(f"def version_marker_{i:02}_v{v}():\n    pass\n")
        versions.append(root)
    publish(url, versions[0], "mixed")
    stop = threading.Event()
    published = [0]

    def republish() -> None:
        for n in itertools.count():
            if stop.is_set():
                break
            publish(url, versions[(n + 1) % 2], "mixed")
            published[0] += 1

    root = local_project(tmp_path)
    async with server(root, url) as client:
        await until(client, "version_marker", lambda a: len(a) == 40)
        writer = threading.Thread(target=republish)
        writer.start()
        seen: set[frozenset[str]] = set()
        try:
            deadline = time.monotonic() + 120
            while (published[0] < 2 or len(seen) < 2) and time.monotonic() < deadline:
                answer = await ask(client, "version_marker")
                suffixes = frozenset(s["name"].rsplit("_", 1)[1] for s in answer)
                assert len(answer) == 40, [s["name"] for s in answer]
                assert len(suffixes) == 1, sorted(s["name"] for s in answer)
                seen.add(suffixes)
        finally:
            stop.set()
            writer.join()
    assert published[0] >= 2
    assert seen == {frozenset({"v1"}), frozenset({"v2"})}
