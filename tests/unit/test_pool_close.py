"""`Workers.close` asked for off the thread that used the pool: it leaves
alone a pool used since, and waits for a warm-up under way."""

from __future__ import annotations

import gc
import sys
import threading
import time

from nearsym.workspace.pool import Workers


def test_a_pool_used_since_the_close_was_asked_for_stays() -> None:
    workers = Workers(1)
    try:
        workers.submit([], 0).result()
        asked = workers.used
        workers.submit([], 0).result()  # a new index used it meanwhile
        workers.close(wait=True, unused_since=asked)
        assert workers._pool is not None
        workers.close(wait=True, unused_since=workers.used)
        assert workers._pool is None
    finally:
        workers.close(wait=True)


def test_a_close_waits_for_a_warm_up_under_way() -> None:
    """An index over before its pool was up (a small folder): the warm-up
    would start the pool again after the close, and it stayed, forkserver
    and all, until the next index ended."""
    workers = Workers(2)
    try:
        ready = workers.warming()  # under way from here, whenever its thread runs
        assert workers.used == 0  # a warm-up is no use of the pool
        workers.close(wait=True, unused_since=0)
        assert ready.is_set()
        assert workers._pool is None
    finally:
        workers.close(wait=True)


def test_the_resource_tracker_waits_for_the_pool_s_queues_to_be_collected() -> None:
    """The tracker unlinks, as it stops, every semaphore still registered
    with it. Stopped while a closed pool's queues were still alive (after a
    cold index of Go's library they outlived the first collection by a few
    milliseconds), each queue lock collected afterwards failed to unlink
    itself: "Exception ignored ... FileNotFoundError" on the server's
    stderr, five times. Here the test holds the queues a moment."""
    from multiprocessing import resource_tracker

    workers = Workers(1)
    failures: list[BaseException | None] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: failures.append(unraisable.exc_value)
    try:
        workers.submit([], 0).result()
        pool = workers._pool
        assert pool is not None
        queues = [pool._call_queue, pool._result_queue]  # type: ignore[attr-defined]
        closing = threading.Thread(target=workers.close, kwargs={"wait": True})
        closing.start()
        time.sleep(0.3)  # the manager thread has ended, the queues are held
        del pool, queues
        closing.join(10)
        assert not closing.is_alive()
        gc.collect()
        assert failures == []
        assert resource_tracker._resource_tracker._fd is None  # stopped
    finally:
        sys.unraisablehook = hook
        workers.close(wait=True)
