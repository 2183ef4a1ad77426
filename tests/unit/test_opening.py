"""The opening's own parts (`nearsym.lsp.opening`): the kept replies, the
relay's order, and what it reads of `initialize`. The whole opening runs
through the real server in `tests/e2e/test_opening.py`."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from nearsym.lsp import early, opening


def test_a_client_key_follows_what_the_reply_depends_on() -> None:
    base = {"processId": 1, "rootUri": "file:///a", "capabilities": {"window": {}}}
    same = {**base, "processId": 2, "rootUri": "file:///b", "clientInfo": {"name": "x"}}
    assert opening.client_key(base) == opening.client_key(same)
    other_caps = {**base, "capabilities": {"window": {"workDoneProgress": True}}}
    options = {**base, "initializationOptions": {"maxResults": 50}}
    keys = {opening.client_key(p) for p in (base, other_caps, options)}
    assert len(keys) == 3


def test_replies_kept_are_read_back_and_only_the_newest_stay(tmp_path: Path) -> None:
    reply: dict[str, Any] = {"capabilities": {"workspaceSymbolProvider": True}}
    for n in range(opening.REPLIES_KEPT + 3):
        opening.remember_reply(str(tmp_path), f"key{n}", {**reply, "n": n})
        os.utime(tmp_path / f"opening-key{n}.json", ns=(n * 10**9, n * 10**9))
    opening.remember_reply(str(tmp_path), "last", reply)
    kept = sorted(p.name for p in tmp_path.glob("opening-*.json"))
    assert len(kept) == opening.REPLIES_KEPT
    assert "opening-last.json" in kept and "opening-key0.json" not in kept
    assert opening._stored_reply(str(tmp_path), "last") == reply
    assert opening._stored_reply(str(tmp_path), "key0") is None
    (tmp_path / "opening-bad.json").write_text("{not json")
    assert opening._stored_reply(str(tmp_path), "bad") is None


def test_the_relay_keeps_the_readers_order_across_the_hand_over() -> None:
    relay = early.Relay()
    for n in range(3):
        relay.take("message", n)
    first = relay.get(0)
    assert first == ("message", 0)
    got: list[Any] = []
    stop = threading.Event()

    def reader() -> None:  # keeps reading while the hand-over happens
        n = 3
        while not stop.is_set() and n < 2000:
            relay.take("message", n)
            n += 1

    thread = threading.Thread(target=reader)
    thread.start()
    relay.hand_to(lambda kind, value: got.append(value), [("message", 0)])
    thread.join()
    stop.set()
    assert got == list(range(len(got))) and len(got) == 2000


def test_initialize_params_the_opening_leaves_to_pygls() -> None:
    good = {"processId": None, "rootUri": "file:///ws", "capabilities": {}}
    assert opening._well_formed(good)
    assert opening._roots(good) == ["/ws"]
    folders = {**good, "workspaceFolders": [{"uri": "file:///a", "name": "a"}]}
    assert opening._roots(folders) == ["/a"]
    for bad in (
        {**good, "workspaceFolders": "file:///a"},
        {**good, "workspaceFolders": [{"uri": "file:///a"}]},
        {**good, "processId": "12"},
        {**good, "rootUri": 3},
        {"processId": None, "rootUri": "file:///ws"},
    ):
        assert not opening._well_formed(bad), bad
    assert opening._config({"initializationOptions": {"maxResults": "many"}}) is None
    assert opening._config({"initializationOptions": {"sharedIndex": "postgresql://x"}}) is None
    assert opening._config({}) is not None
