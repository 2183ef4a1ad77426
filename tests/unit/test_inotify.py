"""Our inotify watcher (`workspace.inotify`), on real folders: what it
reports, for files and for folders made, moved and deleted, in how many
batches, and how it ends."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from nearsym.workspace import inotify
from nearsym.workspace.inotify import CHANGED, CREATED, DELETED, Batch, InotifyWatcher

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


class Watched:
    """A running watcher and what it reported so far."""

    def __init__(self, roots: list[Path]) -> None:
        self.watcher = InotifyWatcher([str(r) for r in roots])
        self.batches: list[Batch] = []
        self.ready = asyncio.Event()
        self.task: asyncio.Task[bool] | None = None

    async def on_batch(self, batch: Batch) -> None:
        self.batches.append(batch)

    def events(self) -> list[tuple[int, str]]:
        return [e for b in self.batches for e in b]

    async def until(self, check: Callable[[list[tuple[int, str]]], bool]) -> None:
        for _ in range(400):
            if check(self.events()):
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"never seen; reported {self.batches}")


@pytest.fixture
async def watched(tmp_path: Path) -> AsyncIterator[Watched]:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "old.py").write_text("x = 1\n")
    w = Watched([root])
    w.task = asyncio.create_task(w.watcher.run(w.ready.set, w.on_batch))
    await asyncio.wait_for(w.ready.wait(), 10)
    yield w
    w.watcher.close()
    assert await asyncio.wait_for(w.task, 10) is True  # closed, not failed


async def test_files_created_changed_and_deleted(watched: Watched, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    made = root / "pkg" / "made.py"
    made.write_text("def made(): pass\n")
    await watched.until(lambda e: (CREATED, str(made)) in e)
    watched.batches.clear()
    with open(root / "pkg" / "old.py", "a") as f:
        f.write("y = 2\n")
    await watched.until(lambda e: (CHANGED, str(root / "pkg" / "old.py")) in e)
    (root / "pkg" / "old.py").unlink()
    await watched.until(lambda e: (DELETED, str(root / "pkg" / "old.py")) in e)


async def test_a_new_folder_is_reported_and_watched(watched: Watched, tmp_path: Path) -> None:
    """The folder itself is reported (the server walks it: a file made in it
    before its watch was in place is found that way), then what is made in
    it later."""
    root = tmp_path / "ws"
    deep = root / "new" / "deeper"
    deep.mkdir(parents=True)
    (deep / "early.py").write_text("x = 1\n")
    await watched.until(lambda e: (CREATED, str(root / "new")) in e)
    await asyncio.sleep(0.2)  # the watches of the new folders are in place
    (deep / "late.py").write_text("x = 1\n")
    await watched.until(lambda e: (CREATED, str(deep / "late.py")) in e)


async def test_folders_moved_out_and_in(watched: Watched, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    os.rename(root / "pkg", outside)
    await watched.until(lambda e: (DELETED, str(root / "pkg")) in e)
    await asyncio.sleep(0.2)
    (outside / "after.py").write_text("x = 1\n")  # no longer ours
    os.rename(outside, root / "back")
    await watched.until(lambda e: (CREATED, str(root / "back")) in e)
    await asyncio.sleep(0.2)
    (root / "back" / "inside.py").write_text("x = 1\n")
    await watched.until(lambda e: (CREATED, str(root / "back" / "inside.py")) in e)
    assert not [p for _, p in watched.events() if p.endswith("after.py")]


async def test_a_burst_of_changes_comes_in_few_batches(watched: Watched, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for n in range(200):
        (root / "pkg" / f"f{n}.py").write_text("x = 1\n")
    await watched.until(lambda e: len({p for _, p in e}) == 200)
    assert len(watched.batches) <= 3
    assert all(kind == CREATED for kind, _ in watched.events())


async def test_links_below_a_root_are_not_followed_and_a_root_that_is_one_is(
    tmp_path: Path,
) -> None:
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (real / "link").symlink_to(elsewhere)
    root = tmp_path / "root-link"
    root.symlink_to(real)
    w = Watched([root])
    task = asyncio.create_task(w.watcher.run(w.ready.set, w.on_batch))
    await asyncio.wait_for(w.ready.wait(), 10)
    (elsewhere / "far.py").write_text("x = 1\n")
    (real / "sub" / "near.py").write_text("x = 1\n")
    await w.until(lambda e: (CREATED, str(root / "sub" / "near.py")) in e)
    assert not [p for _, p in w.events() if p.endswith("far.py")]
    w.watcher.close()
    assert await asyncio.wait_for(task, 10) is True


async def test_running_out_of_watches_fails_and_frees_the_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the helper's failure did: `run` ends False, and `ready` is said
    anyway, so the index does not wait for a watcher that is not coming."""

    def no_watches_left(self: object, folder: bytes, mask: int) -> bool:
        raise inotify.WatchLimit(28, "the system's inotify watches are used up")

    monkeypatch.setattr(inotify._Inotify, "_watch", no_watches_left)
    ready = asyncio.Event()

    async def on_batch(batch: Batch) -> None:
        raise AssertionError("no batch expected")

    watcher = InotifyWatcher([str(tmp_path)])
    assert await asyncio.wait_for(watcher.run(ready.set, on_batch), 10) is False
    assert ready.is_set()


async def test_close_before_the_watches_are_set_up_ends_it(tmp_path: Path) -> None:
    watcher = InotifyWatcher([str(tmp_path)])
    watcher.close()

    async def on_batch(batch: Batch) -> None:
        pass

    assert await asyncio.wait_for(watcher.run(lambda: None, on_batch), 10) is True


def test_the_index_gate_opens_while_the_event_loop_is_busy(tmp_path: Path) -> None:
    """The watching thread opens the cold index's gate itself: during a cold
    start the loop can be slow to run `on_ready` (0.3 s on Go's library),
    and the walk, with both cores idle, waited for it."""
    import threading

    for n in range(20):
        (tmp_path / f"d{n}" / "e").mkdir(parents=True)
    gate = threading.Event()
    told_on_loop: list[bool] = []

    async def main() -> bool:
        async def on_batch(batch: Batch) -> None:
            pass

        watcher = InotifyWatcher([str(tmp_path)])
        task = asyncio.create_task(watcher.run(lambda: told_on_loop.append(True), on_batch, gate))
        await asyncio.sleep(0)  # the watcher's thread starts
        opened = gate.wait(30)  # the loop blocked meanwhile: `on_ready` cannot run
        assert not told_on_loop
        watcher.close()
        await task
        return opened

    assert asyncio.run(main())
    assert told_on_loop == [True]
