"""Watching files: the client's watcher when it offers one, else ours.

Our own watcher is inotify on a thread, or a helper process where there is
no inotify (see `nearsym.workspace.watcher`), restarted when it fails, a
few times. A cold index walks the tree only once
changes are watched (`watch_ready`), so no file created meanwhile is missed.
Events, from either watcher, are applied in batches that yield to queries.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from nearsym.lsp.values import WATCH_GLOBS
from nearsym.workspace.inotify import InotifyWatcher
from nearsym.workspace.live import Change, LiveWorkspace
from nearsym.workspace.watcher import Watcher, discard_spare, new_watcher

log = logging.getLogger(__name__)

INDEX_BATCH = 64
"""File events per trip to the disk thread: large enough to amortise the
hop, small enough that the changes a query waits for are few."""
WATCHER_RETRIES = 3
"""Restarts of our own watcher before the server goes on without one."""


class Watching:
    """Who watches the workspace's files, and the events they report."""

    def __init__(
        self,
        live: LiveWorkspace,
        spawn: Callable[[Coroutine[Any, Any, None]], None],
        track: Callable[[asyncio.Future[Any]], None],
    ) -> None:
        self.live = live
        self.spawn = spawn
        self.track = track
        """Registers a change a query should wait for (briefly)."""
        self.disk = ThreadPoolExecutor(1, thread_name_prefix="nearsym-disk")
        """File events are applied here, in order: a `.gitignore` saved
        re-walks its folder, which takes seconds on a large tree."""
        self.client_watches = False
        """The client reports changes (`workspace/didChangeWatchedFiles`)."""
        self.registered: bool | None = None
        """The client's answer to the registration the start sent before
        the server (`opening`): accepted, refused, or None (not sent, or
        not answered in time: `register_watchers` asks again)."""
        self._watcher: Watcher | None = None
        self._closed: Watcher | None = None
        """The last watcher closed, which may still be exiting."""
        self.adopted: InotifyWatcher | None = None
        """A watcher whose watches the start made before the server
        (`opening`): the first `watch` of the same folders takes it."""
        self.ready = threading.Event()
        """Set once file changes are being watched (by the client or by our
        watcher, or when ours could not start): a cold index walks the tree
        only then, so no file created meanwhile is missed."""

    async def apply_disk_changes(self, changes: list[tuple[Change, str]]) -> None:
        """Apply file events off the loop, in order, in batches."""
        loop = asyncio.get_running_loop()
        for start in range(0, len(changes), INDEX_BATCH):
            batch = changes[start : start + INDEX_BATCH]
            applied = loop.run_in_executor(self.disk, self.live.disk_changed, batch)
            self.track(applied)
            await asyncio.shield(applied)

    async def watch(self) -> None:
        """Our own watcher, for clients that do not watch; restarted when it
        fails, a few times. A new one replaces the old only once its watches
        are in place, so folders watched before a folder change miss nothing
        meanwhile."""
        failures = 0
        while failures < WATCHER_RETRIES:
            old = self._watcher
            if not self.live.namespaces:
                discard_spare()
                self._watcher = None
                if old is not None:
                    old.close()
                break
            roots = [ns.root for ns in self.live.namespaces]
            adopted, self.adopted = self.adopted, None
            watcher: Watcher
            try:
                if adopted is not None and adopted.roots == roots:
                    watcher = adopted
                else:
                    if adopted is not None:
                        adopted.discard()
                    watcher = new_watcher(roots)
            except OSError:  # neither inotify nor the helper's pipes
                log.exception("could not start the file watcher")
                break
            self._watcher = watcher

            def ready(old: Watcher | None = old) -> None:
                if old is not None:
                    old.close()
                self.ready.set()

            async def on_batch(batch: list[tuple[int, str]]) -> None:
                await self.apply_disk_changes([(Change(kind), path) for kind, path in batch])

            try:
                stopped = await watcher.run(ready, on_batch, self.ready)
            except (OSError, RuntimeError):
                log.exception("could not start the file watcher")
                ready()
                stopped = False
            if self._watcher is not watcher or stopped:
                return  # replaced (folders changed) or shut down
            failures += 1
            log.warning("the file watcher stopped; restarting it (%d)", failures)
        self.ready.set()

    def restart(self) -> None:
        """(Re)start our own watcher on the current folders; with a client
        that watches, the index walks at once."""
        if self.client_watches:
            discard_spare()
            self.ready.set()
            return
        self.ready.clear()
        self.spawn(self.watch())

    def close(self) -> None:
        """Stop our watcher (shutdown): the helper exits on stdin EOF."""
        discard_spare()
        self._closed = self._watcher or self._closed
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def kill(self) -> None:
        """Kill our watcher now (exit: it may be deep in setting up its
        watches, which it does not interrupt to read stdin)."""
        self.close()
        if self._closed is not None:
            self._closed.kill()


async def register_watchers(server: LanguageServer) -> bool:
    """Ask the client to watch source files for us, when it can."""
    workspace = server.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return False
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in WATCH_GLOBS]
    )
    try:
        await server.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=f"nearsym-watch-{uuid.uuid4()}",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=options,
                    )
                ]
            )
        )
    except Exception:
        log.warning("the client would not watch files; using our own watcher")
        return False
    return True
