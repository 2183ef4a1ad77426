"""`allocator.settle` and `idle`: what they let go of after a large index, and when."""

from __future__ import annotations

import gc
import os
import tracemalloc
import weakref

import pytest

from nearsym.index import allocator


def test_settle_drops_the_names_the_type_cache_holds() -> None:
    # An attribute looked up by a name made at run time (the unpickler's
    # `_ResultItem` for every result a pool worker sends back) leaves that
    # string in the interpreter's type cache, each at a slot of its own
    # address: thousands of them, made here and there during an index,
    # each keeping an allocator arena from being returned.
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        names = [f"nearsym_absent_{i}" for i in range(20_000)]
        for name in names:
            getattr(os, name, None)
        del names, name
        held = tracemalloc.get_traced_memory()[0] - start
        allocator.settle()
        settled = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert held > 10_000, "no name outlived its list: the test would show nothing"
    assert held - settled > 10_000, (held, settled)


def test_the_start_up_s_garbage_waits_for_a_quiet_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    """`settle`, as an index ends, walks only what was made since the last
    freeze: the start-up's frozen objects (and its garbage among them)
    stay frozen until `idle`, once the client is quiet, collects them, the
    first time only."""
    monkeypatch.setattr(allocator, "_start_up_frozen", False)
    gc.freeze()  # as `resume_collector`: the start-up's objects, garbage and all
    try:
        loop: list[object] = []
        loop.append(loop)  # a cycle only the collector frees
        probe = weakref.ref(_Cycle(loop))
        del loop
        gc.freeze()
        monkeypatch.setattr(allocator, "_start_up_frozen", True)
        assert probe() is not None
        allocator.settle()
        assert probe() is not None  # frozen: not walked as the index ends
        assert gc.get_freeze_count() > 0
        trims: list[int] = []
        monkeypatch.setattr(allocator, "trim", lambda: trims.append(1))
        allocator.idle()
        assert probe() is None  # the first quiet moment collects it
        assert allocator.settle_start_up() is False  # once only
        allocator.idle()  # then a quiet moment only trims
        assert len(trims) == 2
    finally:
        gc.unfreeze()


class _Cycle:
    def __init__(self, holder: list[object]) -> None:
        self.holder = holder
        holder.append(self)
