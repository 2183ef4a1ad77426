"""Files opened outside every workspace folder (see `workspace.loose`).

- No workspace folder at all (the client sent none): the file's project
  root, found by its markers, becomes a workspace folder, indexed in the
  background like one the client named.
- Otherwise, or with no project root: the file's own folder becomes a
  loose namespace holding the file's buffer and, unless the folder is too
  wide (`/`, home, a top-level folder), the other source files directly in
  it, read on a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine
from typing import Any

from nearsym.index.namespace import Namespace
from nearsym.lsp.indexing import Indexing
from nearsym.lsp.watching import Watching
from nearsym.workspace.live import LiveWorkspace
from nearsym.workspace.loose import neighbours, project_root, too_wide

log = logging.getLogger(__name__)


class Outside:
    def __init__(
        self,
        live: LiveWorkspace,
        indexing: Indexing,
        watching: Watching,
        spawn: Callable[[Coroutine[Any, Any, None]], None],
    ) -> None:
        self.live = live
        self.indexing = indexing
        self.watching = watching
        self.spawn = spawn
        self.client_roots = True
        """Whether the client named any workspace folder (set by `initialize`)."""

    def opened(self, path: str) -> None:
        """Before `path`'s buffer is indexed: make sure a namespace holds it."""
        if self.live.namespace_of(path) is not None:
            return
        if not self.client_roots:
            root = project_root(path)
            if root is not None:
                log.info("no workspace folder: indexing %s, the project of %s", root, path)
                ns = self.live.add_root(root)
                self.watching.restart()
                title = f"nearsym: indexing {os.path.basename(root)}"
                self.spawn(self.indexing.index_namespaces([ns], title))
                return
        folder = os.path.dirname(path)
        ns = self.live.add_loose(folder)
        if not too_wide(folder):
            self.spawn(self._read_neighbours(ns, path))

    async def _read_neighbours(self, ns: Namespace, opened: str) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._read_now, ns, opened)

    def _read_now(self, ns: Namespace, opened: str) -> None:
        for sf in neighbours(ns.root, self.live.config, skip=opened):
            self.live.apply(ns, sf, self.live.read(ns, sf))
