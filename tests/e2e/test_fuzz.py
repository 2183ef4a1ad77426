"""A fuzz of the real server over stdio: random `workspace/symbol` queries
(any code point, NUL, lone surrogates, combining and modifier characters,
regex metacharacters, strings up to a megabyte, params of the wrong type)
and random `didChange` contents (whole texts and ranges anywhere, past the
end included). Every request gets a result or a JSON-RPC error with a code
and a message, the process stays up, and a plain query is still answered
afterwards.

One server serves every example (a server per example would spend the
budget starting servers): it runs on an event loop in a thread of its own,
and hypothesis's examples, which are synchronous, hand it coroutines.
`EXAMPLES` bounds the run (about 30 s here on a loaded 2-core machine)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import SERVER
from .rawclient import RawClient
from .test_lifecycle import initialize, progress_kinds, wait_for
from .trees import write_tree

pytestmark = pytest.mark.e2e

EXAMPLES = 150
"""Examples per fuzz: enough to draw every branch of the strategies below
several times, few enough for CI (each is a handful of round trips)."""
ANSWER_SECONDS = 30
"""Longest wait for one answer: a megabyte query on a loaded machine takes
well under a second; a hang never ends."""

T = TypeVar("T")


class Served:
    """The server, driven from a loop in its own thread."""

    def __init__(self, root: Path, stderr: BinaryIO) -> None:
        self.root = root
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.stderr = stderr  # a file: a pipe nobody reads fills up
        self.client: RawClient = self.call(self._start())
        self.version = 1
        self.doc = (root / "pkg000" / "open.py").as_uri()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start(self) -> RawClient:
        process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self.stderr,
        )
        client = RawClient(process)
        await initialize(client, self.root, {})
        await wait_for(lambda: "end" in progress_kinds(client))
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": (self.root / "pkg000" / "open.py").as_uri(),
                    "languageId": "python",
                    "version": 1,
                    "text": "def opened_here():\n    pass\n",
                }
            },
        )
        return client

    def request(self, method: str, params: Any) -> dict[str, Any]:
        return self.call(self._request(method, params))

    async def _request(self, method: str, params: Any) -> dict[str, Any]:
        """The answer; fails at once if the server dies first."""
        reply = asyncio.ensure_future(self.client.request(method, params, timeout=ANSWER_SECONDS))
        died = asyncio.ensure_future(self.client.process.wait())
        await asyncio.wait({reply, died}, return_when=asyncio.FIRST_COMPLETED)
        if not reply.done():
            reply.cancel()
            raise AssertionError(f"the server died (exit code {died.result()})")
        died.cancel()
        return reply.result()

    def notify(self, method: str, params: Any) -> None:
        async def send() -> None:
            self.client.notify(method, params)

        self.call(send())

    def alive(self) -> bool:
        return self.client.process.returncode is None

    def close(self) -> int:
        try:
            return self.call(self.client.close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("fuzz")
    root = write_tree(base / "ws", 60)
    with open(base / "stderr.txt", "wb") as stderr:
        server = Served(root, stderr)
        try:
            yield server
        finally:
            code = server.close()
        errors = (base / "stderr.txt").read_text("utf-8", "replace")
        assert code == 0, errors
        assert "Traceback" not in errors, errors


def proper(reply: dict[str, Any]) -> None:
    """A result, or an error with an integer code and a string message."""
    if "error" in reply:
        error = reply["error"]
        assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str), reply
    else:
        assert "result" in reply, reply


def still_answers(server: Served) -> None:
    assert server.alive()
    reply = server.request("workspace/symbol", {"query": "gen_3_4"})
    assert reply["result"][0]["name"] == "gen_3_4", reply


# Every code point, lone surrogates included (a client may send them
# escaped), mixed with the awkward ones and with pieces of real names, so
# that most queries hold several of them.
ANY_CHAR = st.characters(codec=None, exclude_categories=())
AWKWARD = [
    *"\0\t\r\n\x7f\u200b\u200d\u2028\ufeff\ufffd\u0301\u0308\u02b0\u02c6",
    *"\U0001f3fd\U0010ffff\ud800\udfff ",
    *".*+?[](){}|^$\\/:#@%",
]
WORDS = ["gen", "_", "3", "4", "Class", "gen_3_4", "GenClass1", "value", "é", "ǅ"]
PIECE = st.one_of(
    st.sampled_from(AWKWARD),
    st.sampled_from(WORDS),
    ANY_CHAR,
    st.characters(categories=["Mn", "Mc", "Me", "Lm", "Sk", "Cf", "Co", "Cs", "Zs"]),
)
MIXED = st.lists(PIECE, max_size=16).map("".join)
SHORT = st.text(ANY_CHAR, max_size=64)
HUGE = st.builds(
    lambda unit, count: unit * count,
    st.lists(PIECE, min_size=1, max_size=4).map("".join),
    st.integers(10_000, 250_000),
)
QUERY = st.one_of(MIXED, MIXED, SHORT, HUGE)
NOT_A_QUERY = st.one_of(
    st.none(), st.integers(), st.floats(), st.lists(st.integers(), max_size=3), st.booleans()
)
POSITION = st.fixed_dictionaries(
    {"line": st.integers(0, 2**31 - 1) | st.integers(0, 40), "character": st.integers(0, 300)}
)
TEXT = st.one_of(
    st.lists(
        st.one_of(PIECE, st.just("\n"), st.just("def "), st.just(":\n    ")), max_size=400
    ).map("".join),
    st.text(ANY_CHAR, max_size=2_000),
    st.builds(
        lambda unit, count: unit * count,
        st.sampled_from(["(", "[\n", "def f():\n    ", "class C:\n ", "\0", "é\u0301"]),
        st.integers(1, 30_000),
    ),
)
CHANGE = st.one_of(
    st.fixed_dictionaries({"text": TEXT}),
    st.fixed_dictionaries(
        {"range": st.fixed_dictionaries({"start": POSITION, "end": POSITION}), "text": TEXT}
    ),
)
ACTION = st.one_of(
    st.tuples(st.just("query"), QUERY),
    st.tuples(st.just("bad query"), NOT_A_QUERY),
    st.tuples(st.just("change"), st.lists(CHANGE, min_size=1, max_size=3)),
)


@settings(
    max_examples=EXAMPLES,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(actions=st.lists(ACTION, min_size=1, max_size=5))
def test_random_queries_and_edits_are_answered(served: Served, actions: list[Any]) -> None:
    for kind, value in actions:
        if kind == "query":
            reply = served.request("workspace/symbol", {"query": value})
            proper(reply)
            if "result" in reply:
                assert isinstance(reply["result"], list), reply
        elif kind == "bad query":
            reply = served.request("workspace/symbol", {"query": value})
            proper(reply)
        else:
            served.version += 1
            served.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": served.doc, "version": served.version},
                    "contentChanges": value,
                },
            )
    assert served.alive()


def test_the_server_still_answers_after_the_fuzz(served: Served) -> None:
    """Runs after the fuzz on the same server (the module's order): a plain
    query and the open buffer, set whole again, are still answered."""
    still_answers(served)
    served.version += 1
    served.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": served.doc, "version": served.version},
            "contentChanges": [{"text": "def after_the_fuzz():\n    pass\n"}],
        },
    )
    for _ in range(100):
        reply = served.request("workspace/symbol", {"query": "after_the_fuzz"})
        if [r["name"] for r in reply["result"]][:1] == ["after_the_fuzz"]:
            break
        served.call(asyncio.sleep(0.1))
    else:
        raise AssertionError(json.dumps(reply)[:500])
