"""The input stream read from the server's first moments (`lsp.wire`), and
the snapshot read ahead of the index from the client's `initialize`
(`lsp.early`)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from nearsym.index.cache import Cache
from nearsym.lsp.early import ReadAhead
from nearsym.lsp.wire import Reader
from nearsym.workspace.config import Config, config_from_options, index_key


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Pipe:
    """A stream whose bytes arrive when the test says."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()

    def read(self, n: int) -> bytes:
        return os.read(self.read_fd, n)

    def write(self, data: bytes) -> None:
        os.write(self.write_fd, data)

    def close(self) -> None:
        os.close(self.write_fd)


def test_what_is_read_before_a_connection_waits_for_it_in_order() -> None:
    pipe = Pipe()
    seen_first: list[Any] = []
    got: list[tuple[str, Any]] = []
    done = threading.Event()

    def sink(kind: str, value: Any) -> None:
        got.append((kind, value))
        if kind == "end":
            done.set()

    reader = Reader(pipe.read, seen_first.append)
    reader.start("test-reader")
    pipe.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
    pipe.write(b"Content-Length: 3\r\n\r\n{x}")  # not JSON
    pipe.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    for _ in range(200):  # until the reader has taken all three
        if len(reader._waiting) == 3:
            break
        threading.Event().wait(0.01)
    reader.attach(sink)
    pipe.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    pipe.close()
    assert done.wait(5)
    assert [kind for kind, _ in got] == ["message", "error", "message", "message", "end"]
    assert [value["method"] for kind, value in got if kind == "message"] == [
        "initialize",
        "initialized",
        "shutdown",
    ]
    assert seen_first == [got[0][1]]  # the first message only, before it was handed on


def test_a_first_message_hook_that_fails_costs_no_message() -> None:
    pipe = Pipe()
    got: list[tuple[str, Any]] = []
    done = threading.Event()

    def broken(message: Any) -> None:
        raise RuntimeError("a bug")

    def sink(kind: str, value: Any) -> None:
        got.append((kind, value))
        if kind == "end":
            done.set()

    reader = Reader(pipe.read, broken)
    reader.attach(sink)
    reader.start("test-reader")
    pipe.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
    pipe.close()
    assert done.wait(5)
    assert [kind for kind, _ in got] == ["message", "end"]


def snapshot_cache(tmp_path: Path, config: Config) -> tuple[Path, Path, dict[str, bytes]]:
    """A root and a cache folder holding a snapshot of it under `config`'s key."""
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    cache_dir = tmp_path / "cache"
    parts = {"names": b"n" * 1000, "paths": b"p" * 10}
    cache = Cache(str(root), str(cache_dir), index_key(config))
    cache.store_snapshot(parts)
    cache.close()
    return root, cache_dir, parts


def initialize(root: Path, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
            "capabilities": {},
            **params,
        },
    }


def test_the_snapshot_of_each_root_initialize_names_is_read_ahead(tmp_path: Path) -> None:
    options = {"maxFileBytes": 5000}
    config, _ = config_from_options(options)
    root, cache_dir, parts = snapshot_cache(tmp_path, config)
    ahead = ReadAhead(str(cache_dir))
    ahead.first_message(initialize(root, initializationOptions=options))
    assert ahead.take(str(root), index_key(Config())) is None  # another key: not this one
    cache = ahead.take(str(root), index_key(config))
    assert cache is not None and cache.path.startswith(str(cache_dir))
    assert ahead.take(str(root), index_key(config)) is None  # once
    assert cache.load_snapshot() == parts
    assert cache.load_snapshot() == parts  # the next load reads again


def test_a_snapshot_larger_than_the_limit_is_read_when_asked_for(tmp_path: Path) -> None:
    root, cache_dir, parts = snapshot_cache(tmp_path, Config())
    cache = Cache(str(root), str(cache_dir), index_key(Config()))
    cache.read_snapshot_ahead(max_bytes=100)
    assert cache.load_snapshot() == parts


@pytest.mark.parametrize(
    "message",
    [
        None,
        [],
        {"method": "initialized", "params": {}},
        {"method": "initialize", "params": "x"},
        {"method": "initialize", "params": {"workspaceFolders": 7, "rootUri": 3}},
        {"method": "initialize", "params": {"workspaceFolders": [{"uri": 1}, "x", None]}},
        {"method": "initialize", "params": {"rootUri": "https://example.invalid/ws"}},
    ],
)
def test_any_other_first_message_reads_nothing(tmp_path: Path, message: Any) -> None:
    ahead = ReadAhead(str(tmp_path / "cache"))
    ahead.first_message(message)
    assert ahead._caches == {}
    assert not (tmp_path / "cache").exists()


def test_the_root_uri_stands_for_missing_folders_and_the_cache_setting_is_obeyed(
    tmp_path: Path,
) -> None:
    root, cache_dir, parts = snapshot_cache(tmp_path, Config())
    ahead = ReadAhead(str(cache_dir))
    ahead.first_message(initialize(root, workspaceFolders=None, rootUri=root.as_uri()))
    cache = ahead.take(str(root), index_key(Config()))
    assert cache is not None and cache.load_snapshot() == parts
    off = ReadAhead(str(cache_dir))
    off.first_message(initialize(root, initializationOptions={"cache": False}))
    assert off._caches == {}


def test_what_was_not_taken_is_dropped(tmp_path: Path) -> None:
    root, cache_dir, _ = snapshot_cache(tmp_path, Config())
    ahead = ReadAhead(str(cache_dir))
    ahead.first_message(initialize(root))
    ahead.drop()
    assert ahead.take(str(root), index_key(Config())) is None


def test_a_cache_that_fails_to_open_is_left_to_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nearsym.lsp.early as early

    def broken(*args: Any, **kwargs: Any) -> Cache:
        raise RuntimeError("a bug")

    monkeypatch.setattr(early, "Cache", broken)
    root, cache_dir, _ = snapshot_cache(tmp_path, Config())
    ahead = ReadAhead(str(cache_dir))
    ahead.first_message(initialize(root))
    assert ahead.take(str(root), index_key(Config())) is None


def test_a_snapshot_stored_after_the_read_ahead_is_the_one_loaded(tmp_path: Path) -> None:
    """A cold index never loads the (missing) snapshot read ahead; the one
    it stores is what a later index loads, not the empty read."""
    root = tmp_path / "ws"
    root.mkdir()
    cache = Cache(str(root), str(tmp_path / "cache"), index_key(Config()))
    cache.read_snapshot_ahead(max_bytes=1 << 20)
    cache.store_snapshot({"names": b"new"})
    cache.flush()
    assert cache.load_snapshot() == {"names": b"new"}
    cache.close()
