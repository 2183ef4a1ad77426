"""A restart's head start: the index's snapshot read while the server is
still importing.

Design note
-----------
A server is spawned by its editor, which writes `initialize` at once; the
server reads it only once pygls and lsprotocol are imported (a sixth of a
second here, most of it lsprotocol's 570 classes being made). The reader
of stdin starts before those imports (`wire.Reader`) and shows this module
the first message: when it is `initialize`, the snapshot of each root it
names is opened and its snapshot read at once, on threads of their own
(the reader never waits on a disk), under the same cache key the index
will ask for (`config.index_key` of its `initializationOptions`). The
read runs beside the imports: SQLite's reads and the checksums let the
interpreter lock go, the rest takes turns with them. The cold index then
takes the `Cache` whose read is under way (`take`) instead of opening its
own. On Go's library restarted (15 alternated runs each) the first answer
came 18 ms sooner (median 508 -> 490 ms); the end of the index did not
move (568 -> 567 ms).

Only a snapshot the index loads before the open file's folder is read
ahead (`indexer.SNAPSHOT_FIRST_BYTES`, Go's library's 13 MB): the Linux
kernel's 284 MB read beside the imports took the first answer from 0.52
to 0.63-0.73 s (three restarts each), for an index done 0.25 s sooner.

Nothing here answers the client or decides anything the server would not:
a key that differs (settings changed before the index starts) finds
nothing, and the index reads as it always did. What is not taken by the
end of the first index is dropped (`drop`), with the parts it holds.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future
from typing import Any

from nearsym.index.cache import Cache
from nearsym.lsp.uris import workspace_roots
from nearsym.workspace.config import config_from_options, index_key
from nearsym.workspace.indexer import SNAPSHOT_FIRST_BYTES

log = logging.getLogger(__name__)


class ReadAhead:
    """Caches opened as the server starts, their snapshots read ahead."""

    def __init__(self, directory: str | None = None) -> None:
        self.directory = directory
        """Where the caches are (None: `cache.cache_dir()`)."""
        self._lock = threading.Lock()
        self._caches: dict[tuple[str, str], Future[Cache]] = {}
        """Each cache being opened, by (root, cache key)."""

    def first_message(self, message: Any) -> None:
        """The client's first message (on the reader's thread): when it is
        `initialize`, start reading the snapshot of each root it names."""
        if not isinstance(message, dict) or message.get("method") != "initialize":
            return
        params = message.get("params")
        if not isinstance(params, dict):
            return
        folders = params.get("workspaceFolders")
        uris = [
            f["uri"]
            for f in (folders if isinstance(folders, list) else [])
            if isinstance(f, dict) and isinstance(f.get("uri"), str)
        ]
        root_uri, root_path = params.get("rootUri"), params.get("rootPath")
        roots = workspace_roots(
            uris,
            root_uri if isinstance(root_uri, str) else None,
            root_path if isinstance(root_path, str) else None,
        )
        config, _ = config_from_options(params.get("initializationOptions"))
        if not config.cache:
            return
        key = index_key(config)
        for root in roots:
            opened: Future[Cache] = Future()
            with self._lock:
                self._caches[(root, key)] = opened
            threading.Thread(
                target=self._open, args=(root, key, opened), name="nearsym-open", daemon=True
            ).start()

    def _open(self, root: str, key: str, opened: Future[Cache]) -> None:
        """Open the cache (SQLite, off the reader: it must never wait on a
        disk) and start its snapshot's read."""
        try:
            cache = Cache(root, self.directory, settings=key)
            cache.read_snapshot_ahead(SNAPSHOT_FIRST_BYTES)
        except BaseException as error:  # `take` says what it was
            opened.set_exception(error)
            return
        opened.set_result(cache)
        log.debug("reading the snapshot of %s ahead", root)

    def take(self, root: str, key: str) -> Cache | None:
        """The cache of `root` under `key` with its snapshot being read
        ahead, once; None if none was opened (or opening it failed)."""
        with self._lock:
            opened = self._caches.pop((root, key), None)
        if opened is None:
            return None
        try:
            return opened.result()
        except Exception:
            log.exception("opening the cache of %s ahead failed", root)
            return None

    def drop(self) -> None:
        """Forget what was not taken (and the snapshots it read)."""
        with self._lock:
            self._caches.clear()
