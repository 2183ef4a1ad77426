"""A cold index's first tasks, sent to the process pool before the server
is up.

A first start on a folder spent its first half second importing pygls
and lsprotocol and answering `initialize`; the pool's workers, started
beside those imports (`lsp.opening`), then waited for the walk, which
waits for the file watcher (Go's library: the first file reached a worker
0.57 s after the spawn). The opening knows the folder and the settings
from `initialize` itself, so it starts a `Prefetch`: a thread that walks
the folder and sends its first `CHUNKS` tasks of files to the pool, while
the main thread imports.

Those files were read before changes were watched, so their results are
kept only where the index's own walk (made once changes are watched)
finds each file as the worker read it: the same size and modification
time, not within `cache.RACY_SECONDS` of the walk (a file written in the
same tick could keep its stamp). Any other is parsed again
(`indexer._parallel`). Nothing here is needed: a prefetch that fails, or
is not taken, costs only its tasks.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import threading

from nearsym.workspace.config import Config, index_key
from nearsym.workspace.discovery import discover
from nearsym.workspace.pool import Parsed, Workers

log = logging.getLogger(__name__)

CHUNKS = 32
"""Tasks sent before the server is up: with the tasks the index sends
later (`indexer.IN_FLIGHT` per worker), about the work two workers do in
the 0.4 s before the index's walk is done (Go's library, the JDK)."""

Jobs = list[tuple[str, str, str]]
"""(absolute path, relative path, language) of each file of a task."""
Task = tuple["cf.Future[tuple[list[Parsed], float]]", Jobs]


class Prefetch:
    """The first tasks of a cold index of `root`, sent to `workers` from a
    thread of their own (see the module note)."""

    def __init__(self, root: str, config: Config, workers: Workers, chunk: int) -> None:
        self.root = root
        self.settings = index_key(config)
        """The index's settings this walk and these tasks were made under."""
        self._config = config
        self._workers = workers
        self._chunk = chunk
        self._tasks: list[Task] = []
        self._done = threading.Event()
        threading.Thread(target=self._run, name="nearsym-prefetch", daemon=True).start()

    def _run(self) -> None:
        try:
            jobs: Jobs = []
            for sf in discover(self.root, self._config):
                jobs.append((sf.path, sf.rel, sf.language.name))
                if len(jobs) == self._chunk:
                    self._send(jobs)
                    jobs = []
                    if len(self._tasks) >= CHUNKS:
                        return
            if jobs:
                self._send(jobs)
        except Exception:  # never needed: the index walks and parses as ever
            log.exception("prefetching %s failed; indexing without it", self.root)
        finally:
            self._done.set()

    def _send(self, jobs: Jobs) -> None:
        future = self._workers.submit(jobs, self._config.max_file_bytes)
        self._tasks.append((future, jobs))

    def take(self) -> list[Task]:
        """The tasks sent, once the walk has sent its last (`CHUNKS` at
        most: a few hundred files walked)."""
        self._done.wait()
        return self._tasks
