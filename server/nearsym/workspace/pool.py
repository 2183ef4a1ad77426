"""The process pool a cold index parses on, and what runs in its workers.

Workers are started by multiprocessing's forkserver (they inherit neither
the server's threads nor its stdio), one per core, on first use; each
reads, parses and extracts a task of files and sends back only the compact
`FileDefs` blobs, and large segment merges run there too (`merge_segments`)
so their garbage never grows the server's heap. A worker exits when the
server does (it watches the server's pidfd), and closing the pool stops the
forkserver and, once the workers are gone, the resource tracker as well.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import gc
import logging
import os
import select
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from nearsym.core.filedefs import FileDefs
from nearsym.extract.languages import language_named
from nearsym.index import build
from nearsym.index.segment import Segment
from nearsym.index.store import MergeInput
from nearsym.workspace.discovery import SkippedFile, read_source_stat

log = logging.getLogger(__name__)

OK, SKIPPED, GONE = 0, 1, 2

_T = TypeVar("_T")

Parsed = tuple[str, int, int, int, bytes]
"""(relative path, status, size, mtime_ns, FileDefs blob or the reason)."""

Result = FileDefs | Exception


def parse_one(path: str, rel: str, language: str, max_bytes: int) -> Parsed:
    return parse_many([(path, rel, language)], max_bytes)[0]


def parse_many(jobs: Sequence[tuple[str, str, str]], max_bytes: int) -> list[Parsed]:
    """(absolute path, relative path, language) each: read and extracted
    one by one, their mentions found in one pass (`mentions_of`: numpy's
    calls cost per pass, not per file)."""
    from nearsym.extract.definitions import extract_defs
    from nearsym.extract.grammar import TooBroken
    from nearsym.extract.mentions import mentions_of

    results: list[Parsed] = []
    found: list[tuple[int, FileDefs, bytes]] = []
    for path, rel, language in jobs:
        spec = language_named(language)
        if spec is None:
            results.append((rel, SKIPPED, -1, 0, b"unknown language"))
            continue
        try:
            data, st = read_source_stat(path, max_bytes)
            defs = extract_defs(data, spec, mentions=False)
        except (TooBroken, SkippedFile) as why:
            results.append((rel, SKIPPED, -1, 0, str(why).encode()))
            continue
        except OSError as error:
            results.append((rel, GONE, -1, 0, (error.strerror or str(error)).encode()))
            continue
        found.append((len(results), defs, data))
        results.append((rel, OK, st.st_size, st.st_mtime_ns, b""))
    for (at, defs, _), keys in zip(found, mentions_of([data for _, _, data in found]), strict=True):
        rel, status, size, mtime_ns, _ = results[at]
        results[at] = (rel, status, size, mtime_ns, replace(defs, mentions=keys).encode())
    return results


def parse_jobs(jobs: Sequence[tuple[str, str, str]], max_bytes: int) -> tuple[list[Parsed], float]:
    """A worker's task (`parse_many`); also the CPU seconds it took (for
    `nearsym bench`)."""
    started = time.process_time()
    results = parse_many(jobs, max_bytes)
    return results, time.process_time() - started


def merge_segments(inputs: MergeInput) -> tuple[dict[str, bytes], list[str]]:
    """A worker's task: `build.merge` of segments shipped as parts (see
    `SymbolIndex._merged`); the merged parts and its files' paths in order."""
    segments: list[Segment] = []
    paths: list[str] = []
    for parts, names in inputs:
        first = len(paths)
        paths.extend(names)
        segments.append(Segment.from_parts(parts, list(range(first, len(paths)))))
    merged = build.merge(segments, paths, aside=True)
    del segments
    return merged.to_bytes(merged.alive), [paths[f] for f in merged.file_ids.tolist()]


def decode_result(parsed: Parsed) -> Result:
    _, status, _, _, payload = parsed
    if status == OK:
        return FileDefs.decode(payload)
    reason = payload.decode("utf-8", "replace")
    return SkippedFile(reason) if status == SKIPPED else OSError(reason)


def worker_start(server: int) -> None:
    """Set up a pool worker: its stdout, inherited from the server, is the
    LSP stream, so it points at /dev/null instead; and the worker exits when
    the server does. A pool's workers otherwise outlive a server killed
    outright, waiting on their task queue forever (and the forkserver with
    them, as each holds its end of the forkserver's liveness pipe)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    try:
        handle = os.pidfd_open(server)
    except (AttributeError, OSError):  # not Linux 5.3+: poll instead
        handle = -1

    def watch() -> None:
        if handle >= 0:
            select.select([handle], [], [])  # readable once the server exits
        else:
            while _alive(server):
                time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="nearsym-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


TRACKER_WAIT = 60.0
"""Seconds a closed pool's workers get to finish their task before the
resource tracker is left running (a parse of one chunk takes well under
that; a worker stuck longer keeps its semaphores)."""


LOCKS_WAIT = 5.0
"""Seconds a closed pool's queue locks get to be collected before the
resource tracker is left running (a few milliseconds, measured)."""


WARM_WAIT = 10.0
"""Longest `close(unused_since=...)` waits for a `warm` under way (the
forkserver's start: a tenth of a second here)."""


class Workers:
    """A process pool, started on first use (`forkserver`: the workers do not
    inherit the server's threads or its stdio streams)."""

    def __init__(self, count: int | None = None) -> None:
        self.count = max(1, count if count is not None else (os.cpu_count() or 1))
        self._pool: cf.ProcessPoolExecutor | None = None
        self._retired: list[Any] = []
        """Worker processes of closed pools, which may still be finishing a
        task (see `kill`)."""
        self._stopped = False
        self._lock = threading.Lock()
        self._pools = 0
        """Pools started so far: a tracker is stopped only if no pool
        started after the one whose end it waited for."""
        self.failures = 0
        self._cpu = 0.0
        self.used = 0
        """Tasks submitted so far, `warm`'s aside (see `close`'s `unused_since`)."""
        self._warming = 0
        self._warmed = threading.Condition(self._lock)
        """Notified when a `warm` ends."""

    def add_cpu(self, seconds: float) -> None:
        self._cpu += seconds

    def cpu_seconds(self) -> float:
        """CPU seconds the workers spent on tasks so far."""
        return self._cpu

    def submit(
        self, jobs: Sequence[tuple[str, str, str]], max_bytes: int
    ) -> cf.Future[tuple[list[Parsed], float]]:
        return self._run(parse_jobs, list(jobs), max_bytes)

    def merge(self, inputs: MergeInput) -> tuple[dict[str, bytes], list[str]]:
        """`merge_segments` on a worker (a `SymbolIndex.merger`); raises
        what the worker raised, or BrokenProcessPool."""
        return self._run(merge_segments, inputs).result()

    def _run(self, task: Callable[..., _T], *args: Any, use: bool = True) -> cf.Future[_T]:
        with self._lock:
            if self._stopped:  # shut down: every task is cancelled
                future: cf.Future[_T] = cf.Future()
                future.cancel()
                return future
            if self._pool is None:
                import multiprocessing  # with the first pool, not at start (4 ms of a restart)

                method = (
                    "forkserver"
                    if "forkserver" in multiprocessing.get_all_start_methods()
                    else "spawn"
                )
                # Our exit kills the workers mid-task, which leaves the
                # pool's semaphores to the resource tracker: it frees them,
                # and need not warn about it on the server's stderr.
                os.environ.setdefault("PYTHONWARNINGS", "ignore:resource_tracker:UserWarning")
                if method == "forkserver":
                    multiprocessing.set_forkserver_preload(
                        ["nearsym.workspace.pool", "nearsym.extract.definitions"]
                    )
                self._pools += 1
                self._pool = cf.ProcessPoolExecutor(
                    self.count,
                    mp_context=multiprocessing.get_context(method),
                    initializer=worker_start,
                    initargs=(os.getpid(),),
                )
            self.used += use
            try:
                submitted = self._pool.submit(task, *args)
            except cf.process.BrokenProcessPool:
                log.warning("indexing workers died; starting new ones")
                self._pool = None
                submitted = None
        if submitted is None:
            return self._run(task, *args, use=use)
        if self._stopped:  # stopped while the workers started
            self.close()
        return submitted

    def warm(self) -> None:
        """Start the workers now (a no-op task each), so their start-up
        overlaps the walk instead of following it."""
        self.warming().wait()

    def warming(self) -> threading.Event:
        """`warm` on a thread of its own (the forkserver's start takes a
        tenth of a second, which the caller need not wait); the event is
        set once the workers are asked for. It counts as under way for
        `close` from this call until the workers have run their no-op task
        (a pool shut down while a worker still started left that worker a
        traceback on the server's stderr)."""
        with self._lock:
            self._warming += 1
        ready = threading.Event()

        def start() -> None:
            started: list[cf.Future[tuple[list[Parsed], float]]] = []
            try:
                for _ in range(self.count):
                    started.append(self._run(parse_jobs, [], 0, use=False))
                ready.set()
                cf.wait(started, timeout=WARM_WAIT)
            finally:
                ready.set()
                with self._lock:
                    self._warming -= 1
                    self._warmed.notify_all()

        threading.Thread(target=start, name="nearsym-warm", daemon=True).start()
        return ready

    def close(self, wait: bool = False, unused_since: int | None = None) -> None:
        """Shut the pool down, and with it the forkserver and the resource
        tracker that multiprocessing keeps alive for the rest of the
        process otherwise (39 and 12 MB resident on the CPython standard
        library, idle). The next task starts all three again. Without
        `wait`, workers finish their current task and exit, and the tracker
        is stopped by a thread once they have (`_end_tracker`). With
        `unused_since` (a count of `used`), nothing is closed if a task was
        submitted since then: a close asked for off the caller's thread
        leaves alone a pool that a new index has started using meanwhile,
        and waits (up to `WARM_WAIT`) for a `warm` still starting the
        workers, which would otherwise start a pool again after this close
        (an index over before its pool was up)."""
        with self._lock:
            if unused_since is not None:
                self._warmed.wait_for(lambda: self._warming == 0, timeout=WARM_WAIT)
            pool = self._pool
            if pool is None or (unused_since is not None and self.used != unused_since):
                return
            # The process objects (the executor drops them on shutdown)
            # know when their process is gone, so `kill` never signals a
            # reused pid.
            self._retired = [p for p in self._retired if p.exitcode is None]
            self._retired.extend((pool._processes or {}).values())
            manager = getattr(pool, "_executor_manager_thread", None)  # shutdown forgets it
            locks = _queue_locks(pool)  # shutdown forgets the queues too
            pool.shutdown(wait=wait, cancel_futures=True)
            self._pool = None
            _stop_forkserver()
            started = self._pools
        # The queues' semaphores go with the last references to the pool
        # and to its manager thread (which holds the queues too).
        held = [manager] if isinstance(manager, threading.Thread) else []
        del pool, manager
        if wait:
            self._end_tracker(held, started, locks)
        else:
            threading.Thread(
                target=self._end_tracker,
                args=(held, started, locks),
                name="nearsym-pool-tracker",
                daemon=True,
            ).start()

    def _end_tracker(
        self, held: list[threading.Thread], started: int, locks: list[weakref.ref[Any]]
    ) -> None:
        """Stop multiprocessing's resource tracker once the closed pool's
        semaphores have unregistered from it: after the pool's manager
        thread (`held`, emptied here) ends, and its queues' `locks` are
        collected. Stopped before, the tracker unlinks what is still
        registered, and each lock collected later printed a traceback on
        the server's stderr (`sem_unlink`: FileNotFoundError, after every
        cold index of Go's library: the queues outlived the first
        collection by a few milliseconds); stopped while a newer pool holds
        semaphores, the tracker would be started again to hear of them."""
        if held:
            manager = held.pop()
            manager.join(TRACKER_WAIT)
            if manager.is_alive():
                return  # a worker still runs: keep the tracker
            del manager
        deadline = time.monotonic() + LOCKS_WAIT
        pause = 0.01  # doubled each time: a dozen collections at most, not one per pause
        gc.collect()
        while any(lock() is not None for lock in locks):
            if time.monotonic() > deadline:
                log.debug("a closed pool's queues are still held: the resource tracker stays")
                return
            time.sleep(pause)
            pause = min(2 * pause, 0.5)
            gc.collect()
        with self._lock:
            if self._pool is None and self._pools == started:
                _stop_resource_tracker()

    def stop(self) -> None:
        """Close for good (shutdown): later tasks come back cancelled.
        Never waits: a task being submitted holds the lock while the pool
        starts its workers (seconds, with a cold forkserver)."""
        self._stopped = True
        # Closing waits for the forkserver to end (`_stop_forkserver`),
        # which ends only with its last worker: never on the caller's time.
        threading.Thread(target=self.close, name="nearsym-pool-close", daemon=True).start()

    def kill(self) -> None:
        """Kill every worker still running, now (exit: no task they run is
        needed; a worker deep in a parse would take its time to see the
        server go). Reads without the lock, which a submission may hold."""
        self._stopped = True
        pool = self._pool
        processes = list(self._retired)
        if pool is not None:
            processes.extend(list((pool._processes or {}).values()))
        for process in processes:
            try:
                if process.exitcode is None:
                    process.kill()
            except (AttributeError, ValueError, OSError):  # not started yet, or gone
                pass
        # The forkserver ends once no process holds its liveness pipe, but
        # only between two fork requests: while it imports its preloads
        # (seconds, at start) it sees nothing. It is our child and nobody
        # reaps it, so its pid cannot have been reused.
        forkserver = sys.modules.get("multiprocessing.forkserver")  # none if no pool ever ran
        server = getattr(forkserver, "_forkserver", None)
        server_pid = getattr(server, "_forkserver_pid", None)
        if isinstance(server_pid, int) and server_pid > 0:
            with contextlib.suppress(OSError):
                os.kill(server_pid, signal.SIGKILL)


def _queue_locks(pool: cf.ProcessPoolExecutor) -> list[weakref.ref[Any]]:
    """Weak references to the multiprocessing locks of `pool`'s call and
    result queues (private attributes: none where they are missing)."""
    from multiprocessing.synchronize import SemLock

    found: list[weakref.ref[Any]] = []
    for name in ("_call_queue", "_result_queue"):
        queue = getattr(pool, name, None)
        for attribute in ("_rlock", "_wlock", "_sem"):
            lock = getattr(queue, attribute, None)
            if isinstance(lock, SemLock):
                found.append(weakref.ref(lock))
    return found


def _stop_forkserver() -> None:
    """Stop multiprocessing's forkserver process. `_stop` is its private
    method, kept by CPython for its own tests (3.8 to 3.13 at least); where
    it is missing the forkserver stays, as before. It starts again on demand
    (`ensure_running`)."""
    from multiprocessing import forkserver

    _stop_helper(forkserver._forkserver)


def _stop_resource_tracker() -> None:
    """Stop multiprocessing's resource tracker (the same private `_stop`);
    it starts again when a semaphore is next made."""
    from multiprocessing import resource_tracker

    _stop_helper(resource_tracker._resource_tracker)


def _stop_helper(helper: object) -> None:
    stop = getattr(helper, "_stop", None)
    if stop is not None:
        try:
            stop()
        except (OSError, ChildProcessError) as error:
            log.debug("stopping a multiprocessing helper: %s", error)
