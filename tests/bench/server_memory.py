"""Resident memory of a real `nearsym serve` on a tree, with no file open:
cold (empty cache), then restarted from the cache twice, once with the
client watching files (as VS Code and Neovim 0.11 do) and once without
(the server then runs its own watcher). Prints the time to the end of
indexing and the resident memory once it has ended (`bench.lsp_latency`).

    python tests/bench/server_memory.py ROOT CACHE_DIR
"""

from __future__ import annotations

import asyncio
import os
import sys

from nearsym.tools.bench import lsp_latency


def measure(root: str, cache: str, client_watches: bool) -> str:
    figures = asyncio.run(lsp_latency([root], [], None, cache, client_watches=client_watches))
    return (
        f"client watches={client_watches}: index done {figures.indexed:.1f} s,"
        f" resident {figures.rss / 1e6:.0f} MB"
    )


def main() -> None:
    root, cache = os.path.abspath(sys.argv[1]), sys.argv[2]
    print("cold      ", measure(root, cache, True), flush=True)
    print("restarted ", measure(root, cache, True), flush=True)
    print("restarted ", measure(root, cache, False), flush=True)


if __name__ == "__main__":
    main()
