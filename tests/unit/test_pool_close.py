"""`Workers.close` asked for off the thread that used the pool: it leaves
alone a pool used since, and waits for a warm-up under way."""

from __future__ import annotations

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
