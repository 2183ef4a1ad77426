"""`allocator.settle`: what it lets go of after a large index."""

from __future__ import annotations

import os
import tracemalloc

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
