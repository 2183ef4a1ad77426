"""Our watcher's helper process (where there is no inotify), started
before its roots are known (`watcher.prestart`): the first watcher takes
it, one that died is replaced, and one nobody takes ends."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from nearsym.workspace import watcher
from nearsym.workspace.watcher import Batch, WatcherProcess

from ..processes import running

pytestmark = pytest.mark.e2e


@pytest.fixture(autouse=True)
def no_spare_left(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(watcher, "INOTIFY", False)  # as on a system without it
    yield
    watcher.discard_spare()


async def _watch_until_created(root: Path) -> tuple[WatcherProcess, list[Batch]]:
    """Run a watcher on `root`, create a file once it is ready, and stop
    it once the file's event came; the watcher and its batches."""
    process = WatcherProcess([str(root)])
    ready = asyncio.Event()
    batches: list[Batch] = []
    created = root / "made.py"

    async def on_batch(batch: Batch) -> None:
        batches.append(batch)
        if any(path == str(created) for _, path in batch):
            process.close()

    task = asyncio.create_task(process.run(ready.set, on_batch))
    await asyncio.wait_for(ready.wait(), 60)
    created.write_text("def made(): pass\n")
    assert await asyncio.wait_for(task, 60) is True  # stopped, not failed
    return process, batches


def _spare() -> subprocess.Popen[bytes]:
    assert len(watcher._spare) == 1
    return watcher._spare[0]


async def test_the_prestarted_helper_is_the_one_that_watches(tmp_path: Path) -> None:
    watcher.prestart()
    spare = _spare()
    process, batches = await _watch_until_created(tmp_path)
    assert process._process is spare and watcher._spare == []
    assert (1, str(tmp_path / "made.py")) in [e for b in batches for e in b]
    assert spare.returncode == 0


async def test_a_prestarted_helper_that_died_is_replaced(tmp_path: Path) -> None:
    watcher.prestart()
    spare = _spare()
    spare.kill()
    spare.wait()
    process, batches = await _watch_until_created(tmp_path)
    assert process._process is not spare and watcher._spare == []
    assert (1, str(tmp_path / "made.py")) in [e for b in batches for e in b]


async def test_a_helper_nobody_takes_ends(tmp_path: Path) -> None:
    """A client that watches files itself never needs it: discarded, it
    exits on its stdin's end without having watched anything."""
    watcher.prestart()
    spare = _spare()
    watcher.discard_spare()
    assert watcher._spare == []
    for _ in range(400):
        if not running(spare.pid):
            break
        await asyncio.sleep(0.05)
    assert not running(spare.pid)
    assert spare.wait(10) == 0
