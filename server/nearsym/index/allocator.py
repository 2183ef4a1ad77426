"""Settling the process after a large index is built.

A cold index allocates and frees millions of short-lived objects. Two
things keep that from costing later:

- `gc.freeze()` moves the survivors (the file table, the containers, the
  caches of the moment) out of the collector's generations, so the full
  collections that the per-query garbage triggers no longer walk them:
  measured on the Linux kernel, it takes the in-process p99 from about 100
  ms to about 60.
- The interpreter's type cache (4,096 slots, hashed by the name's
  address) holds a reference to the name of every attribute lookup it
  caches. Names made at run time (the unpickler's `_ResultItem` and
  `accumulate` for each result a pool worker sends back) stay alive
  there, one here and one there among the index's garbage, each keeping
  a 1 MiB allocator arena from being returned: `sys._clear_type_cache()`
  lets go of them. Measured on the Linux kernel's cold server, 15 s after
  its index: 91 arenas -> 72, PSS 403-406 MiB (four runs) -> 385 MiB.
- glibc keeps freed heap pages for reuse; `malloc_trim(0)` hands them back,
  so resident memory reflects the index and not its construction.
- `configure()` (at server start) makes glibc map every block over 256 KiB
  on its own, so a freed numpy temporary goes straight back to the system
  instead of leaving a hole in a heap, and caps the per-thread arenas at
  two (each thread of the server would otherwise grow its own heap).
"""

from __future__ import annotations

import ctypes
import functools
import gc
import logging
import sys

log = logging.getLogger(__name__)


_start_up_frozen = False


def resume_collector() -> None:
    """End the start-up's pause of the cyclic collector (`nearsym.__main__`).

    What the imports made (lsprotocol's classes, numpy's, the grammars' and
    the garbage they left, 125,000 objects on a server's start) is frozen
    first: the first collection after the pause would otherwise walk all
    of it, 31 ms before a server can read its first message (measured here
    between `make_server()` and the event loop). The import garbage (some
    17,000 objects) is collected by `settle_start_up`, when the client is
    quiet."""
    global _start_up_frozen
    gc.freeze()
    _start_up_frozen = True
    gc.enable()


def settle() -> None:
    """Drop the type cache's names, collect what was made since the last
    freeze, freeze the survivors, and return free heap to the system.

    The start-up's frozen objects are not walked here: this runs as an
    index ends, when the person may be typing, and walking them held the
    interpreter lock for 50 ms (Go's library, 124,000 objects), during
    which the first edit after the index waited (`settle_start_up`)."""
    sys._clear_type_cache()
    gc.collect()
    gc.freeze()
    trim()


def settle_start_up() -> bool:
    """Once, at a quiet moment: collect the start-up's garbage too (every
    frozen object is walked), freeze the survivors again and trim. Whether
    there was anything to do."""
    global _start_up_frozen
    if not _start_up_frozen:
        return False
    _start_up_frozen = False
    gc.unfreeze()
    settle()
    return True


def idle() -> None:
    """What a server does once the client is quiet: `settle_start_up`
    the first time, `trim` after."""
    if not settle_start_up():
        trim()


M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


def configure() -> None:
    """Tune glibc's allocator for a long-lived process with big arrays."""
    libc = _libc()
    if libc is None:
        return
    try:
        libc.mallopt(M_MMAP_THRESHOLD, 256 * 1024)
        libc.mallopt(M_TRIM_THRESHOLD, 1024 * 1024)
        libc.mallopt(M_ARENA_MAX, 2)
    except AttributeError:  # not glibc
        log.debug("mallopt unavailable")


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library this process runs on, through its own symbols (no
    `ctypes.util.find_library`: its imports and search cost 3 ms of a
    server's start)."""
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def trim() -> None:
    libc = _libc()
    if libc is None:
        return
    try:
        libc.malloc_trim(0)
    except AttributeError:  # not glibc
        log.debug("malloc_trim unavailable")
