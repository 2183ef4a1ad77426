"""Cold indexing: the open file's neighbourhood first, then everything, on
every core, from the cache where it can.

Design note
-----------
`index_namespace` runs in one thread (the server's, or the CLI's main one):

1. If a file is open, the files of its folder (up to `NEAR_FILES`) are parsed
   at once, in this thread, and applied: the answers that matter most exist
   before the walk of a large tree is even done. The walk runs in a helper
   thread, so a file opened while it runs gets the same treatment. A small
   snapshot (`SNAPSHOT_FIRST_BYTES`) is loaded before that: it is quicker to
   read than the folder is to parse, and then only the folder's files the
   snapshot does not hold as they are on disk are parsed.
2. The walk's files are split: those the cache holds at the same size and
   mtime are decoded and applied; the rest are sorted by folder distance
   from the open file (again whenever it changes) and parsed by a process
   pool, `CHUNK` files a task, at most `IN_FLIGHT` tasks a worker in flight.
   Workers read, parse and extract; only the compact `FileDefs` blob
   crosses back.
3. Results are applied in batches that grow with the index (a segment per
   batch), and written to the cache by its background thread.

Nothing here knows about LSP: the caller passes `target` (where results
go: a bare index, `IndexTarget`, or the live workspace's `LiveTarget`),
`focus` (the open file now), `cancelled` and `progress`.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from nearsym.core.filedefs import FileDefs
from nearsym.core.proximity import directory_distance
from nearsym.index.cache import RACY_SECONDS, Cache
from nearsym.index.store import SymbolIndex
from nearsym.workspace.coldstats import ColdStats, LanguageStats
from nearsym.workspace.config import Config
from nearsym.workspace.discovery import SkippedFile, SourceFile, WalkReport, discover
from nearsym.workspace.pool import OK, Parsed, Result, Workers, decode_result, parse_one
from nearsym.workspace.prefetch import Task

log = logging.getLogger(__name__)

NEAR_FILES = 256
"""Files of the open file's folder parsed before anything else."""
SNAPSHOT_FIRST_BYTES = 64 << 20
"""A snapshot up to this size is loaded before the open file's folder is
parsed: Go's standard library's (13 MB, 315,748 definitions) loads in
about 0.13 s, while parsing a folder of up to `NEAR_FILES` files from
source takes up to several tenths (Go's parse rate is about 12 MB a CPU
second); the Linux kernel's (284 MB) takes 3 s, longer than its
folders' parse, so there the folder comes first."""
CHUNK = 24
"""Files per worker task."""
IN_FLIGHT = 8
"""Tasks a worker has in flight: enough queued that a worker seldom waits
while this thread applies a batch or waits for a merge on the pool (on
the kernel, idle core-seconds in the first 115 s 36 with 2, 21 with 8). A
new open file reorders only the tasks not yet submitted."""
MAX_BATCH = 250_000
"""Most definitions held as Python objects before they become a segment:
bounds the indexer's transient memory (and the heap it fragments)."""
GATE_SECONDS = 30.0
"""Longest a walk waits for file changes to be watched."""
FLUSH_SECONDS = 0.25
"""Longest wait before parsed results become searchable (in a small index;
8 times that from 50,000 definitions, and longer still from `FLUSH_RATE`)."""
FLUSH_RATE = 100_000
"""From 200,000 definitions, a batch waits one second per this many
definitions already indexed (10 s at a million), so batches grow to
`MAX_BATCH`. Every batch is a segment, and a cold index keeps at most
`store.BULK_SEGMENTS` by merging as it goes: batches every 2 s made the
kernel's index merge dozens of times during the parse, about 20 CPU
seconds more than merging the larger batches at the end (measured with
`IN_FLIGHT` 8 both ways, 227 against 208 worker CPU seconds)."""


class Target(Protocol):
    """Where a cold index puts what it finds."""

    def apply(self, batch: list[tuple[SourceFile, Result]]) -> None:
        """Store parse results (or why a file was skipped)."""

    def install(
        self, parts: dict[str, bytes], held: Mapping[str, tuple[int, int]]
    ) -> dict[str, tuple[int, int]]:
        """Load a cache snapshot (`held`: the stamps of the files parsed
        already, `SymbolIndex.install`); the stamps of the files it
        brought. Raises ValueError on a damaged snapshot."""
        return {}

    def remove(self, rels: list[str]) -> None:
        """Drop files that are gone."""

    def reserve(self, rels: list[str]) -> None:
        """Every file the walk found, before any is parsed
        (`SymbolIndex.reserve`)."""

    def passed_over(self, sf: SourceFile) -> bool:
        """Whether `sf` was skipped before, as it is now
        (`SymbolIndex.skipped`, which a snapshot brings)."""
        return False


class IndexTarget:
    """A bare `SymbolIndex` as the target (CLI, bench, tests)."""

    def __init__(self, index: SymbolIndex) -> None:
        self.index = index

    def apply(self, batch: list[tuple[SourceFile, Result]]) -> None:
        skipped: list[tuple[str, int, int]] = []
        read: list[str] = []  # not skipped (any more)
        for sf, r in batch:
            if isinstance(r, SkippedFile) and sf.size >= 0:
                skipped.append((sf.rel, sf.size, sf.mtime_ns))
            else:
                read.append(sf.rel)
            if not isinstance(r, FileDefs):
                self.index.remove_file(sf.rel)
        self.index.replace_files([(sf.rel, r) for sf, r in batch if isinstance(r, FileDefs)])
        self.index.skipped.update(skipped, read)

    def install(
        self, parts: dict[str, bytes], held: Mapping[str, tuple[int, int]]
    ) -> dict[str, tuple[int, int]]:
        return self.index.install(parts, held)

    def remove(self, rels: list[str]) -> None:
        for rel in rels:
            self.index.remove_file(rel)

    def reserve(self, rels: list[str]) -> None:
        self.index.reserve(rels)

    def passed_over(self, sf: SourceFile) -> bool:
        return self.index.skipped.holds(sf.rel, sf.size, sf.mtime_ns)


def index_namespace(
    root: str,
    config: Config,
    target: Target,
    *,
    workers: Workers | None = None,
    cache: Cache | None = None,
    focus: Callable[[], str | None] = lambda: None,
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[int, int], None] | None = None,
    files: Iterable[SourceFile] | None = None,
    walk_gate: threading.Event | None = None,
    walker: Callable[[str, Config, WalkReport], Iterable[SourceFile]] | None = None,
    searchable: Callable[[], None] = lambda: None,
    installed: Mapping[str, tuple[int, int]] | None = None,
    prefetched: Sequence[Task] = (),
) -> ColdStats:
    """Index `root` (or just `files`) into `target`; see the module note.
    With `walk_gate`, the walk waits for it (up to `GATE_SECONDS`): the
    server sets it once file changes are watched. `walker` finds the files
    instead of the workspace walk (`discover`): a dependency folder's
    (`dependencies.walk_dependency`). `searchable` is called once the
    first results are: the open file's first files parsed, or a restart's
    snapshot installed (after the open file's folder where that comes
    first). `installed`: the stamps of a snapshot installed into `target`
    already (`lsp.opening`), read instead of the cache's. `prefetched`: the
    tasks a `Prefetch` sent to `workers` before the server was up; a file
    of theirs still to parse is taken from them, if the walk finds it as
    its worker read it."""
    started = time.perf_counter()
    stats = ColdStats()
    done: set[str] = set()
    stamps = stats.stamps
    known: dict[str, tuple[int, int]] = {}

    def load_snapshot() -> None:
        if cache is None or files is not None:
            return
        if installed is not None:
            known.update(installed)
            stats.from_snapshot = len(known)
            return
        parts = cache.load_snapshot()
        if parts is not None:
            try:
                known.update(target.install(parts, stamps))
                stats.from_snapshot = len(known)
                stats.parsed_held = sum(stamps.get(rel) == stamp for rel, stamp in known.items())
            except ValueError as error:
                log.warning("cache snapshot of %s unusable (%s); loading file by file", root, error)

    def fresh(sf: SourceFile) -> bool:
        """Whether the snapshot holds `sf` as it is on disk now, or the
        index knows it as skipped as it is."""
        stamp = known.get(sf.rel)
        if stamp is None or stamp[1] == -1 or stamp != (sf.size, sf.mtime_ns):
            if sf.size < 0 or not target.passed_over(sf):
                return False
            stats.passed_over += 1
            done.add(sf.rel)
            return True
        done.add(sf.rel)
        stamps[sf.rel] = stamp
        return True

    answerable = threading.Event()
    """Set once the first results are searchable (the open file's)."""

    def now_searchable() -> None:
        if not answerable.is_set():
            answerable.set()
            searchable()

    pending_store: list[tuple[str, int, int, bytes]] = []
    batch: list[tuple[SourceFile, Result]] = []
    batch_defs = 0
    last_flush = time.perf_counter()

    def flush(force: bool = False) -> None:
        nonlocal batch, batch_defs, last_flush
        if not batch:
            return
        big = batch_defs >= min(max(2000, stats.definitions // 2), MAX_BATCH)
        wait = (
            FLUSH_SECONDS
            if stats.definitions < 50_000
            else max(8 * FLUSH_SECONDS, stats.definitions / FLUSH_RATE)
        )
        if force or big or time.perf_counter() - last_flush >= wait:
            target.apply(batch)
            stats.definitions += batch_defs
            if stats.first_batch_seconds is None:
                stats.first_batch_seconds = time.perf_counter() - started
                now_searchable()
            batch, batch_defs = [], 0
            last_flush = time.perf_counter()
            if cache is not None and pending_store:
                cache.store(pending_store)
                pending_store.clear()

    def take(sf: SourceFile, result: Result) -> None:
        nonlocal batch_defs
        done.add(sf.rel)
        batch.append((sf, result))
        language = stats.languages.get(sf.language.name)
        if language is None:
            language = stats.languages[sf.language.name] = LanguageStats()
        if isinstance(result, FileDefs):
            batch_defs += len(result)
            language.files += 1
            language.definitions += len(result)
            language.kind_bytes.update(result.kinds)
        else:
            stats.skipped += 1
            language.skipped += 1
            if isinstance(result, SkippedFile) and sf.size >= 0:
                stats.newly_skipped += 1

    def parse_here(
        chosen: Sequence[SourceFile], every: int = 0, until: Callable[[], bool] = lambda: False
    ) -> None:
        """Parse in this thread; with `every`, make results searchable after
        every that many files. Stops early, before a file, once `until()`."""
        for n, sf in enumerate(chosen, 1):
            if until():
                break
            parse_started = time.perf_counter()
            parsed = parse_one(sf.path, sf.rel, sf.language.name, config.max_file_bytes)
            seconds = time.perf_counter() - parse_started
            stats.parsed += 1
            if parsed[1] == OK:
                stats.parsed_ok += 1
                pending_store.append((parsed[0], parsed[2], parsed[3], parsed[4]))
                stamps[sf.rel] = (parsed[2], parsed[3])
            take(sf, decode_result(parsed))
            stats.languages[sf.language.name].seconds += seconds
            if every and n % every == 0:
                flush(force=True)
        flush(force=True)

    # 1. The open file's folder, at once.
    near_done: set[str] = set()

    def neighbourhood(until: Callable[[], bool] = lambda: False) -> None:
        """Parse the open file's folder here (until `until()`: the rest of
        it then goes to the pool, nearest first, with the other files)."""
        open_file = focus()
        if open_file is None:
            return
        folder = os.path.dirname(open_file)
        if folder in near_done or not (folder + os.sep).startswith(root.rstrip(os.sep) + os.sep):
            return
        near_done.add(folder)
        near: list[SourceFile] = []
        for sf in discover(root, config, under=folder):
            if sf.rel not in done and not fresh(sf):
                near.append(sf)
            if len(near) >= NEAR_FILES:
                break
        # The open file, then the smallest: most names soonest.
        near.sort(key=lambda sf: (sf.path != open_file, sf.size))
        parse_here(near, every=4, until=until)

    if files is None:
        walked: list[SourceFile] = []
        walk_done = threading.Event()

        def walk(after: threading.Event | None = None) -> None:
            try:
                if walk_gate is not None and not walk_gate.wait(GATE_SECONDS):
                    log.warning("the file watcher is not ready; walking %s anyway", root)
                if after is not None:
                    after.wait()
                if walker is not None:
                    walked.extend(walker(root, config, stats.walk))
                else:
                    walked.extend(discover(root, config, report=stats.walk))
            finally:
                walk_done.set()

        def start_walk(after: threading.Event | None = None) -> None:
            threading.Thread(target=walk, args=(after,), name="nearsym-walk", daemon=True).start()

        snapshot_bytes = cache.snapshot_bytes() if cache is not None else 0
        pool = workers if workers is not None and workers.failures < 3 else None
        if pool is not None and snapshot_bytes == 0:
            # Cold: nearly every file is parsed. The pool starts now (the
            # forkserver's start runs on the other core) and the tree is
            # walked as soon as the open file's first files are searchable
            # (a walk at once took turns with their parse), beside the
            # rest of its folder parsed here; once both are ready, what is
            # left of the folder goes to the pool with the other files,
            # nearest first (Go's library: the second core idled for the
            # 0.6 s of the folder's parse and the pool's start).
            ready = pool.warming()
            start_walk(after=answerable)
            neighbourhood(until=lambda: walk_done.is_set() and ready.is_set())
            now_searchable()  # no open file, or nothing near it to parse
        else:
            if snapshot_bytes <= SNAPSHOT_FIRST_BYTES:
                load_snapshot()
                neighbourhood()  # only what the snapshot does not hold as it is
            else:
                neighbourhood()
                load_snapshot()  # after the neighbourhood: a changed file's parse wins
            now_searchable()
            # A snapshot that could not be loaded: nearly every file is
            # parsed. With one, most files are fresh and the pool starts
            # only if enough of them changed.
            if pool is not None and not known:
                pool.warming()
            start_walk()
        while not walk_done.wait(0.05):
            if cancelled():
                return stats
            neighbourhood()
        all_files = walked
    else:
        all_files = list(files)
        now_searchable()  # what the index held before stays searchable
    stats.files = len(all_files)
    target.reserve([sf.rel for sf in all_files])
    # A file parsed near the open file and changed before the walk reached
    # it (before changes were watched) is parsed again.
    need = [
        sf
        for sf in all_files
        if (
            sf.rel not in done
            or stamps.get(sf.rel, (sf.size, sf.mtime_ns)) != (sf.size, sf.mtime_ns)
        )
        and not fresh(sf)
    ]
    walked_rels = {sf.rel for sf in all_files}
    gone = [rel for rel in known if rel not in walked_rels]
    if gone:
        target.remove(gone)
    stats.from_snapshot = len(known) - len(gone)
    cached = {}
    if cache is not None and need:
        cached = cache.load_some([sf.rel for sf in need]) if known else cache.load()
    todo: list[SourceFile] = []
    for sf in need:
        hit = cached.get(sf.rel)
        if hit is not None and hit[0] == sf.size and hit[1] == sf.mtime_ns and sf.size >= 0:
            try:
                take(sf, FileDefs.decode(hit[2]))
                stamps[sf.rel] = (hit[0], hit[1])
                stats.from_cache += 1
                continue
            except ValueError:
                log.warning("cache entry for %s unreadable; parsing it", sf.rel)
        todo.append(sf)
    flush(force=True)
    if cache is not None and files is None:
        cache.forget(p for p in cache.paths() if p not in walked_rels)
    del cached

    # 2. The rest, nearest first, on every core.
    total = len(all_files)
    if progress is not None:
        progress(len(done), total)
    early: dict[cf.Future[tuple[list[Parsed], float]], list[SourceFile]] = {}
    if prefetched and workers is not None:
        waiting = {sf.rel: sf for sf in todo}
        for future, jobs in prefetched:
            chunk = [waiting.pop(rel) for _, rel, _ in jobs if rel in waiting]
            if chunk:
                early[future] = chunk
        todo = list(waiting.values())
    if not early and (len(todo) <= CHUNK or workers is None or workers.failures >= 3):
        for at in range(0, len(todo), CHUNK):
            if cancelled():
                return stats
            parse_here(todo[at : at + CHUNK])
            if progress is not None:
                progress(len(done), total)
    else:
        if progress is not None:  # as each file comes back (the callback throttles)
            taken = take

            def take(sf: SourceFile, result: Result) -> None:
                taken(sf, result)
                progress(len(done), total)

        assert workers is not None
        _parallel(
            todo, config, workers, focus, cancelled, take, parse_here, pending_store, flush, stats,
            early,
        )  # fmt: skip
        if progress is not None:
            progress(len(done), total)
    flush(force=True)
    stats.seconds = time.perf_counter() - started
    return stats


def _parallel(
    todo: list[SourceFile],
    config: Config,
    workers: Workers,
    focus: Callable[[], str | None],
    cancelled: Callable[[], bool],
    take: Callable[[SourceFile, Result], None],
    parse_here: Callable[[Sequence[SourceFile]], None],
    pending_store: list[tuple[str, int, int, bytes]],
    flush: Callable[[bool], None],
    stats: ColdStats,
    early: dict[cf.Future[tuple[list[Parsed], float]], list[SourceFile]],
) -> None:
    """`todo` parsed on `workers`, and the `early` tasks (a `Prefetch`'s)
    taken where each file is as the walk found it (`_as_walked`), the
    others parsed again."""
    by_rel = {sf.rel: sf for sf in todo}
    by_rel.update((sf.rel, sf) for chunk in early.values() for sf in chunk)
    order = list(reversed(todo))  # consumed from its end: walk order
    ordered_for: list[str | None] = [None]
    in_flight: dict[cf.Future[tuple[list[Parsed], float]], list[SourceFile]] = dict(early)

    def reorder() -> None:
        target = focus()
        if target is None or target == ordered_for[0]:
            return
        ordered_for[0] = target
        distance: dict[str, int] = {}
        for sf in order:
            folder = os.path.dirname(sf.path)
            if folder not in distance:
                distance[folder] = directory_distance(sf.path, target)
        # Farthest first, nearest last: the list is consumed from its end.
        order.sort(key=lambda sf: distance[os.path.dirname(sf.path)], reverse=True)

    while order or in_flight:
        if cancelled():
            for f in in_flight:
                f.cancel()
            return
        reorder()
        while order and len(in_flight) < IN_FLIGHT * workers.count:
            chunk = [order.pop() for _ in range(min(CHUNK, len(order)))]
            jobs = [(sf.path, sf.rel, sf.language.name) for sf in chunk]
            in_flight[workers.submit(jobs, config.max_file_bytes)] = chunk
        finished, _ = cf.wait(
            list(in_flight), timeout=FLUSH_SECONDS, return_when=cf.FIRST_COMPLETED
        )
        for future in finished:
            chunk = in_flight.pop(future)
            try:
                results, cpu = future.result()
                workers.add_cpu(cpu)
            except Exception as error:  # a worker died (out of memory, a crash)
                if cancelled():  # or the pool was stopped: nothing more to do
                    return
                log.warning("indexing worker failed (%s); parsing its files here", error)
                workers.failures += 1
                parse_here(chunk)
                if workers.failures >= 3:  # the pool cannot run here: no more of it
                    log.warning("indexing workers keep failing; parsing in process")
                    for f in in_flight:
                        f.cancel()
                    parse_here([sf for c in in_flight.values() for sf in c] + order[::-1])
                    return
                continue
            # The workers time a chunk, not a file: its CPU seconds are
            # shared among its files by size, for the per-language figures.
            chunk_bytes = sum(max(sf.size, 1) for sf in chunk)
            for sf in chunk:
                language = stats.languages.get(sf.language.name)
                if language is None:
                    language = stats.languages[sf.language.name] = LanguageStats()
                language.seconds += cpu * max(sf.size, 1) / chunk_bytes
            for parsed in results:
                found = by_rel.get(parsed[0])
                if found is None:  # an early task's file the walk did not leave to parse
                    continue
                sf = found
                if future in early and not _as_walked(parsed, sf):
                    order.append(sf)  # changed since its early read: parsed next
                    continue
                stats.parsed += 1
                if parsed[1] == OK:
                    stats.parsed_ok += 1
                    pending_store.append((parsed[0], parsed[2], parsed[3], parsed[4]))
                    # Keyed by the walk's string (the file table's), not
                    # the worker's copy: nothing made here outlives the index.
                    stats.stamps[sf.rel] = (parsed[2], parsed[3])
                take(sf, decode_result(parsed))
        flush(False)


def _as_walked(parsed: Parsed, sf: SourceFile) -> bool:
    """Whether a file read before changes were watched is as the walk found
    it: parsed, its size and modification time the walk's, and not so
    recent that a write in the same tick could have kept them."""
    return (
        parsed[1] == OK
        and (parsed[2], parsed[3]) == (sf.size, sf.mtime_ns)
        and time.time_ns() - sf.mtime_ns >= RACY_SECONDS * 1e9
    )


def index_into(
    index: SymbolIndex,
    config: Config,
    *,
    workers: Workers | None = None,
    cache: Cache | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ColdStats:
    """A cold index of `index.root` into a bare index, merged into one
    segment at the end: the one way the CLI, the evaluation, the bench and
    the tests index a folder (the server indexes through its live
    workspace, `index_namespace` with a `LiveTarget`)."""
    index.bulk = True
    if workers is not None:
        index.merger = workers.merge
    try:
        stats = index_namespace(
            index.root, config, IndexTarget(index), workers=workers, cache=cache, progress=progress
        )
        index.compact()
    finally:
        index.merger = None
    return stats


def save_snapshot(index: SymbolIndex, stats: ColdStats, cache: Cache) -> None:
    """Queue `index`'s snapshot for the cache when it holds something new."""
    if stats.changed:
        parts = index.snapshot(cache.trusted(stats.stamps), cache.settled_before())
        if parts is not None:
            cache.store_snapshot(parts)
