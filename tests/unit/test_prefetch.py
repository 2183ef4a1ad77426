"""A cold index's first tasks, sent before the server is up
(`workspace.prefetch`): taken by the index where its own walk finds each
file as the worker read it, parsed again where not."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from nearsym.core.model import Symbol
from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config
from nearsym.workspace.indexer import IndexTarget, index_into, index_namespace
from nearsym.workspace.pool import Workers
from nearsym.workspace.prefetch import Prefetch

POLYGLOT = Path(__file__).parent.parent / "fixtures" / "polyglot"
LONG_AGO = 1_000_000_000_000_000_000  # 2001, in nanoseconds: no racy stamp


def _table(index: SymbolIndex) -> list[tuple[str, str, int, str]]:
    return sorted((s.path, s.name, s.span.line, s.container) for s in index.all_symbols())


def _symbols(index: SymbolIndex, name: str) -> list[Symbol]:
    return [s for s in index.candidates(name, 10) if s.name == name]


def _workspace(tmp_path: Path) -> str:
    root = tmp_path / "ws"
    shutil.copytree(POLYGLOT, root)
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(LONG_AGO, LONG_AGO))
    return str(root)


def test_prefetched_files_are_taken_unless_changed_since(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    workers = Workers(2)
    try:
        tasks = Prefetch(root, Config(), workers, chunk=2).take()
        jobs = [job for _, chunk in tasks for job in chunk]
        assert len(tasks) == 3 and len(jobs) == 6  # the whole folder, two files a task
        for future, _ in tasks:
            future.result()  # every early read is done
        # A file changes after its early read: the walk finds another stamp.
        changed = Path(next(path for path, _, language in jobs if language == "python"))
        changed.write_text(changed.read_text() + "\n\ndef brand_new_function():\n    pass\n")
        os.utime(changed, ns=(LONG_AGO + 1, LONG_AGO + 1))
        index = SymbolIndex(root)
        index.bulk = True
        sent = workers.used
        stats = index_namespace(
            root, Config(), IndexTarget(index), workers=workers, prefetched=tasks
        )
        index.compact()
        assert workers.used - sent == 1  # the changed file alone, parsed again
        assert stats.parsed == 6
    finally:
        workers.close(wait=True)
    assert [s.path for s in _symbols(index, "brand_new_function")] == [
        os.path.relpath(changed, root).replace(os.sep, "/")
    ]
    whole = SymbolIndex(root)
    index_into(whole, Config())
    assert _table(index) == _table(whole)


def test_a_file_read_early_and_gone_before_the_walk_is_not_indexed(tmp_path: Path) -> None:
    """Never a symbol from a file that is gone."""
    root = _workspace(tmp_path)
    workers = Workers(1)
    try:
        tasks = Prefetch(root, Config(), workers, chunk=3).take()
        for future, _ in tasks:
            future.result()
        gone = Path(tasks[0][1][0][0])
        gone.unlink()
        index = SymbolIndex(root)
        index_namespace(root, Config(), IndexTarget(index), workers=workers, prefetched=tasks)
    finally:
        workers.close(wait=True)
    rel = os.path.relpath(gone, root).replace(os.sep, "/")
    assert rel not in {s.path for s in index.all_symbols()}
    whole = SymbolIndex(root)
    index_into(whole, Config())
    assert _table(index) == _table(whole)


def test_a_recent_file_read_early_is_parsed_again(tmp_path: Path) -> None:
    """Written within the same tick as the early read, a file could keep
    its stamp through a second write: only an older one is taken."""
    root = _workspace(tmp_path)
    fresh = next(p for p in sorted(Path(root).rglob("*")) if p.is_file())
    os.utime(fresh)  # now
    workers = Workers(1)
    try:
        tasks = Prefetch(root, Config(), workers, chunk=6).take()
        sent = workers.used
        index = SymbolIndex(root)
        index_namespace(root, Config(), IndexTarget(index), workers=workers, prefetched=tasks)
        assert workers.used - sent == 1
    finally:
        workers.close(wait=True)
