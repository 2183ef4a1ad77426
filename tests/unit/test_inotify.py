"""The watcher's Linux engine (workspace/inotify.py) on a real tree: names
as bytes, folders created, moved in, moved out and deleted."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

CREATED, CHANGED, DELETED = 1, 2, 3
STEP_MS = 200
"""Wide, so events made within microseconds share a batch even on a loaded machine."""


class Watching:
    def __init__(self, root: bytes) -> None:
        from nearsym.workspace import inotify

        self.events: list[tuple[int, bytes]] = []
        self.ready = threading.Event()
        self.read_end, self.write_end = os.pipe()

        def emit(batch: inotify.Batch | None) -> None:
            if batch is None:
                self.ready.set()
            else:
                self.events.extend(batch)

        self.thread = threading.Thread(
            target=inotify.watch, args=([root], emit, self.read_end, STEP_MS, 50), daemon=True
        )
        self.thread.start()
        assert self.ready.wait(10)

    def seen(self, kind: int, path: bytes, seconds: float = 5) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if (kind, path) in self.events:
                return True
            time.sleep(0.01)
        return False

    def stop(self) -> None:
        os.close(self.write_end)  # EOF on its "stdin": the watch ends
        self.thread.join(5)
        os.close(self.read_end)


@pytest.fixture
def watching(tmp_path: Path) -> Iterator[tuple[bytes, Watching]]:
    root = os.fsencode(tmp_path / "ws")
    os.mkdir(root)
    os.mkdir(root + b"/old")
    w = Watching(root)
    try:
        yield root, w
    finally:
        w.stop()
    assert not w.thread.is_alive()


def test_names_that_are_not_utf8_are_reported_as_bytes(
    watching: tuple[bytes, Watching],
) -> None:
    root, w = watching
    os.mkdir(root + b"/dir\xffname")
    with open(root + b"/dir\xffname/in\xfe.py", "w") as f:
        f.write("x = 1\n")
    assert w.seen(CREATED, root + b"/dir\xffname")
    with open(root + b"/dir\xffname/in\xfe.py", "a") as f:  # watched by now
        f.write("y = 2\n")
    assert w.seen(CHANGED, root + b"/dir\xffname/in\xfe.py")


def test_a_folder_moved_in_is_watched_and_one_moved_out_is_forgotten(
    watching: tuple[bytes, Watching], tmp_path: Path
) -> None:
    root, w = watching
    outside = os.fsencode(tmp_path / "outside")
    os.makedirs(outside + b"/deep/er")
    os.rename(outside, root + b"/moved_in")
    assert w.seen(CREATED, root + b"/moved_in")
    (tmp_path / "ws" / "moved_in" / "deep" / "er" / "new.py").write_text("z = 1\n")
    assert w.seen(CREATED, root + b"/moved_in/deep/er/new.py")
    os.rename(root + b"/old", os.fsencode(tmp_path / "gone"))
    assert w.seen(DELETED, root + b"/old")
    (tmp_path / "gone" / "after.py").write_text("z = 1\n")
    time.sleep(0.3)
    assert not [p for _, p in w.events if p.endswith(b"after.py")]


def test_a_path_keeps_its_last_kind_in_a_batch(watching: tuple[bytes, Watching]) -> None:
    root, w = watching
    path = root + b"/brief.py"
    with open(path, "w") as f:
        f.write("x = 1\n")
    os.unlink(path)
    assert w.seen(DELETED, path)
    assert [k for k, p in w.events if p == path] == [DELETED]
