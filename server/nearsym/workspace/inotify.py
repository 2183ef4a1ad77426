"""Our own file watcher on Linux: inotify, on a thread of the server.

Design note
-----------
watchfiles, in a helper process (`watcher`), costs a second interpreter
and its Rust watcher: 14 MB of PSS watching the Linux kernel (3.4 bytes a
definition), 10 MB on a tree of any size, and a process spawn at every
start. inotify needs neither: one descriptor and a watch per folder, which
this module adds and reads on a thread of the server. Each `scandir` step
and each `inotify_add_watch` (through ctypes) lets go of the interpreter
lock, so setting the watches up never holds it for long; watchfiles' own
setup held it for 0.4 to 1 s on the kernel, which is why it had moved out.

`InotifyWatcher` has `WatcherProcess`'s interface (`run`, `close`, `stop`,
`kill`) and reports what its helper reports, in batches of (kind, path):
1 created, 2 changed, 3 deleted.

- Every folder under the roots is watched, links not followed (a walk
  follows none by default either), folders it may not read skipped.
- A folder created or moved in gets its watches, and is reported created:
  the server walks it, so a file made in it before its watch was in place
  is found all the same. A folder deleted or moved out is reported deleted
  (the server drops what was under it), and its watches go.
- Changes are gathered into a batch until `STEP_MS` pass without one, or
  `DEBOUNCE_MS` after the first (watchfiles' defaults); a path's last
  event in a batch is the one reported (the server reads the disk anyway).
- `ready` is said once every folder present at the start is watched: a
  file created meanwhile is seen by the walk or by the watcher.
- The system's watch limit (`fs.inotify.max_user_watches`) reached ends
  the watcher with a message, as the helper's failure did (the server
  retries, then goes on without one). A queue overflow (events lost) is
  logged; like watchfiles, nothing is re-read.

Elsewhere than Linux, or where inotify cannot be had, `watcher.new_watcher`
gives the helper process.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import select
import struct
import threading
import time
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

Batch = list[tuple[int, str]]

CREATED, CHANGED, DELETED = 1, 2, 3

STEP_MS = 50
"""A batch ends once this long passes without an event (watchfiles' step)."""
DEBOUNCE_MS = 1600
"""The longest a stream of events is gathered into one batch (watchfiles'
debounce)."""
READ_BYTES = 64 * 1024

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
IN_CLOEXEC = 0o2000000

FOLDER_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
    | IN_EXCL_UNLINK
)
_EVENT = struct.Struct("iIII")
"""`struct inotify_event`: wd, mask, cookie, len; the name follows."""


class WatchLimit(OSError):
    """The system's inotify watches ran out."""


class _Inotify:
    """An inotify descriptor and its watches, folder path <-> descriptor."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if not hasattr(libc, "inotify_init1"):
            raise OSError(errno.ENOSYS, "no inotify here")
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._add.restype = ctypes.c_int
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = [ctypes.c_int, ctypes.c_int]
        self._rm.restype = ctypes.c_int
        init = libc.inotify_init1
        init.argtypes = [ctypes.c_int]
        init.restype = ctypes.c_int
        fd = init(IN_CLOEXEC)
        if fd < 0:
            number = ctypes.get_errno()
            raise OSError(number, f"inotify_init1: {os.strerror(number)}")
        self.fd = fd
        self.folders: dict[int, bytes] = {}
        self.descriptors: dict[bytes, int] = {}

    def watch_tree(self, top: bytes, stopped: Callable[[], bool], root: bool = False) -> None:
        """Watch `top` and every folder under it (links below `top` not
        followed; a `root` that is a link is; folders that cannot be read
        skipped). Raises WatchLimit."""
        stack = [top]
        while stack and not stopped():
            folder = stack.pop()
            mask = FOLDER_MASK & ~IN_DONT_FOLLOW if root and folder is top else FOLDER_MASK
            if not self._watch(folder, mask):
                continue
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                stack.append(entry.path)
                        except OSError:
                            continue
            except OSError:  # gone, or not ours to read
                continue

    def _watch(self, folder: bytes, mask: int) -> bool:
        wd = self._add(self.fd, folder, mask)
        if wd < 0:
            number = ctypes.get_errno()
            if number == errno.ENOSPC:
                raise WatchLimit(number, _limit_message())
            return False  # gone, not a folder, not ours to read
        old = self.folders.get(wd)
        if old is not None and old != folder:
            self.descriptors.pop(old, None)
        self.folders[wd] = folder
        self.descriptors[folder] = wd
        return True

    def unwatch_tree(self, top: bytes) -> None:
        """Stop watching `top` and the folders under it (moved out)."""
        prefix = top + b"/"
        for folder in [f for f in self.descriptors if f == top or f.startswith(prefix)]:
            wd = self.descriptors.pop(folder)
            self.folders.pop(wd, None)
            self._rm(self.fd, wd)

    def forget(self, wd: int) -> None:
        """The kernel dropped watch `wd` (its folder is gone)."""
        folder = self.folders.pop(wd, None)
        if folder is not None and self.descriptors.get(folder) == wd:
            del self.descriptors[folder]

    def close(self) -> None:
        os.close(self.fd)


def _limit_message() -> str:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as f:
            limit = f.read().strip()
    except OSError:
        limit = "?"
    return (
        f"the system's inotify watches are used up (fs.inotify.max_user_watches = {limit}); "
        "raise it with sysctl to have changes on disk seen"
    )


class InotifyWatcher:
    """Watches `roots` on a thread; see the module note."""

    def __init__(self, roots: list[str]) -> None:
        """Raises OSError where no inotify descriptor can be had (not Linux,
        or the user's `fs.inotify.max_user_instances` used up)."""
        self.roots = roots
        self._inotify = _Inotify()
        self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC)
        self._stopped = False
        self._watching = False
        """The watches are in place already (`watch_now`)."""

    def watch_now(self) -> None:
        """Set the watches up on this thread, now: a restart's index walks
        before the server's loop runs (`lsp.opening`); the kernel queues
        the events until `run` reads them. Raises WatchLimit."""
        for root in self.roots:
            self._inotify.watch_tree(os.fsencode(root), lambda: self._stopped, root=True)
        self._watching = True

    def discard(self) -> None:
        """Close a watcher whose `run` never started."""
        self.close()
        self._inotify.close()
        os.close(self._wake_r)

    async def run(
        self,
        on_ready: Callable[[], None],
        on_batch: Callable[[Batch], Awaitable[None]],
        ready: threading.Event | None = None,
    ) -> bool:
        """Watch until closed (True) or until watching fails (False);
        `on_ready` is called once the watches are in place, or when the
        watcher fails before that (the index must not wait for it). `ready`
        is set at that moment by the watching thread itself: the loop may
        be slow to run `on_ready` while a cold start keeps every thread
        busy (Go's library: 0.3 s after the watches were in place)."""
        import asyncio

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Batch | BaseException | None] = asyncio.Queue()

        def put(item: Batch | BaseException | None) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, item)

        told = threading.Event()

        def watched() -> None:
            told.set()
            if ready is not None:
                ready.set()
            loop.call_soon_threadsafe(on_ready)

        threading.Thread(
            target=self._watch, args=(watched, put), name="nearsym-inotify", daemon=True
        ).start()
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return True
                if isinstance(item, BaseException):
                    log.warning("the file watcher stopped: %s", item)
                    return False
                await on_batch(item)
        finally:
            self.close()
            if not told.is_set():
                if ready is not None:
                    ready.set()
                on_ready()

    def _watch(
        self, ready: Callable[[], None], put: Callable[[Batch | BaseException | None], None]
    ) -> None:
        """The thread: set the watches up, then read and batch events
        until closed; the end (None, or what failed) goes to `put`."""
        inotify = self._inotify
        try:
            if not self._watching:
                for root in self.roots:
                    inotify.watch_tree(os.fsencode(root), lambda: self._stopped, root=True)
            ready()
            self._read(inotify, put)
            put(None)
        except Exception as error:  # the watch limit, or a failure of any kind
            put(error)
        finally:
            inotify.close()
            os.close(self._wake_r)

    def _read(self, inotify: _Inotify, put: Callable[[Batch | BaseException | None], None]) -> None:
        """Gather events into batches until closed (see the module note)."""
        batch: dict[bytes, int] = {}
        first = 0.0
        while not self._stopped:
            timeout = None
            if batch:
                left = first + DEBOUNCE_MS / 1000 - time.monotonic()
                timeout = max(0.0, min(STEP_MS / 1000, left))
            readable, _, _ = select.select([inotify.fd, self._wake_r], [], [], timeout)
            if self._wake_r in readable:
                return
            if inotify.fd in readable:
                if not batch:
                    first = time.monotonic()
                self._events(inotify, os.read(inotify.fd, READ_BYTES), batch)
                if not batch or time.monotonic() - first < DEBOUNCE_MS / 1000:
                    continue
            if batch:  # quiet for a step, or gathering for too long
                put([(kind, os.fsdecode(path)) for path, kind in batch.items()])
                batch = {}

    def _events(self, inotify: _Inotify, data: bytes, batch: dict[bytes, int]) -> None:
        """Read `data`'s events into `batch` (path -> its last kind)."""
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size : at + _EVENT.size + length].rstrip(b"\0")
            at += _EVENT.size + length
            if mask & IN_Q_OVERFLOW:
                log.warning("file events were lost (the inotify queue overflowed)")
                continue
            if mask & IN_IGNORED:
                inotify.forget(wd)
                continue
            folder = inotify.folders.get(wd)
            if folder is None or not name:  # a folder's own events: its parent reports them
                continue
            path = folder + b"/" + name
            if mask & (IN_DELETE | IN_MOVED_FROM):
                if mask & IN_ISDIR and mask & IN_MOVED_FROM:
                    inotify.unwatch_tree(path)
                batch[path] = DELETED
            elif mask & (IN_CREATE | IN_MOVED_TO):
                if mask & IN_ISDIR:
                    inotify.watch_tree(path, lambda: self._stopped)
                batch.pop(path, None)  # reported created, after any earlier event of it
                batch[path] = CREATED
            elif not mask & IN_ISDIR and batch.get(path) != CREATED:
                batch[path] = CHANGED  # written, closed after writing, attributes

    def close(self) -> None:
        """Stop the thread (it ends at its next step)."""
        if not self._stopped:
            self._stopped = True
            try:
                os.write(self._wake_w, b"x")
                os.close(self._wake_w)
            except OSError:
                pass

    async def stop(self) -> None:
        self.close()

    def kill(self) -> None:
        """As `close`: a thread ends with the process anyway."""
        self.close()
