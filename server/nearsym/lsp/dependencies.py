"""The project's dependencies as namespaces (`workspace.dependencies`),
indexed lazily, after the workspace.

- Setting `dependencies` `"on"` (`workspace.dependencies` says which folders) or a list of folders: once the first cold
  index of the workspace has ended, the dependency folders are found and
  indexed in the background (with progress, on the same process pool and
  into the same on-disk cache as the workspace); every non-empty query then
  asks them too.
- Setting `"off"` (the default): a query ending in `**` asks them; the
  first such query starts their index (after the workspace's), so it is
  answered from what is indexed so far, most likely nothing of them yet.
- Never watched: a package installed or upgraded is seen at the next
  start (its cached files are checked against the disk then) or when the
  setting changes.
- An empty query never asks them: it lists the open file's surroundings.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from nearsym.core.query import Query
from nearsym.index.namespace import Namespace
from nearsym.lsp.indexing import Indexing
from nearsym.workspace.config import Config
from nearsym.workspace.dependencies import dependency_folders
from nearsym.workspace.live import LiveWorkspace

log = logging.getLogger(__name__)


class Dependencies:
    """When the dependency namespaces are indexed and asked."""

    def __init__(
        self,
        live: LiveWorkspace,
        indexing: Indexing,
        spawn: Callable[[Coroutine[Any, Any, None]], None],
    ) -> None:
        self.live = live
        self.indexing = indexing
        self.spawn = spawn
        self.requested = False
        """Whether their index has been started for the current setting."""
        self.setting: str | tuple[str, ...] = "off"

    def configure(self, config: Config) -> None:
        """New settings (`initialize`, a configuration change): a changed
        `dependencies` setting finds the folders again, and indexes them
        now unless it is off."""
        if config.dependencies != self.setting:
            self.setting = config.dependencies
            self.requested = False
            if self.setting == "off":
                with self.live.lock:
                    self.live.dependencies = []
        if self.setting != "off":
            self.request()

    def folders_changed(self) -> None:
        """Workspace folders added or removed: their environments are found
        again, if the dependencies were ever asked."""
        if self.requested:
            self.requested = False
            self.request()

    def request(self) -> None:
        """Index the dependency folders in the background, once, after the
        workspace's first cold index."""
        if not self.requested:
            self.requested = True
            self.spawn(self._index())

    def namespaces(self, query: Query) -> list[Namespace]:
        """The dependency namespaces `query` asks (see the module note);
        a `**` query with the setting off starts their index."""
        if query.empty:
            return []
        if self.setting == "off" and not query.dependencies:
            return []
        self.request()
        return list(self.live.dependencies)

    async def _index(self) -> None:
        await self.indexing.indexed.wait()
        loop = asyncio.get_running_loop()
        roots = [ns.root for ns in self.live.namespaces]
        folders = await loop.run_in_executor(None, dependency_folders, roots, self.setting)
        with self.live.lock:
            self.live.dependencies = [ns for ns in self.live.dependencies if ns.root in folders]
        fresh = self.live.add_dependencies(folders)
        log.info("dependency folders: %s", ", ".join(folders) or "none")
        if fresh:
            await self.indexing.index_namespaces(fresh, "nearsym: indexing dependencies")
