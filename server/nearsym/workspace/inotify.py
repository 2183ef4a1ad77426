"""The file watcher's Linux engine: inotify, names kept as bytes.

Design note
-----------
watchfiles (the engine elsewhere) hands names to Python as `str` and
raises `Unable to decode path` on the first name that is not UTF-8, losing
its whole batch and ending the watch. On Linux, where a name is any bytes,
the helper watches with inotify itself, through libc (ctypes): every path
is bytes from the walk to the event, and leaves as the `surrogateescape`
string `os.fsdecode` gives, which the server turns back into the same
bytes.

- One watch per folder, added by a walk of each root (`os.scandir` on
  bytes); links are not followed (`IN_DONT_FOLLOW`, and a link to a folder
  is not walked): a file reached through a link is the server's to judge
  (`discovery.link_reason`), never the watcher's.
- A folder created or moved in gets its watches before its event is
  reported, so the server's walk of it (a created folder is walked) misses
  nothing made in it meanwhile; a folder moved out or deleted loses its
  watches (their paths would be stale).
- Events are gathered for `step_ms` after the first one of a batch; a path
  reported twice in a batch keeps its last kind (created then deleted is
  deleted), except that a file created then written is still created.
- A full event queue (`IN_Q_OVERFLOW`) loses events: it is said on stderr
  and the watch goes on (watchfiles does the same).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import select
import struct
import sys
import time
from collections.abc import Callable, Iterator

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
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

MASK = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
    | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK
)  # fmt: skip
CREATED, CHANGED, DELETED = 1, 2, 3
EVENT = struct.Struct("iIII")
"""struct inotify_event's fixed part: wd, mask, cookie, len (the name follows)."""

Batch = list[tuple[int, bytes]]


class InotifyError(OSError):
    pass


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


class Inotify:
    """Recursive watches over `roots`, as bytes."""

    def __init__(self, roots: list[bytes]) -> None:
        self._c = _libc()
        fd = self._c.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise InotifyError(
                ctypes.get_errno(), "inotify_init1: " + os.strerror(ctypes.get_errno())
            )
        self.fd = fd
        self.paths: dict[int, bytes] = {}
        self.wds: dict[bytes, int] = {}
        for root in roots:
            self.add_tree(root)

    def close(self) -> None:
        os.close(self.fd)

    def _add(self, path: bytes) -> bool:
        wd = self._c.inotify_add_watch(self.fd, path, MASK)
        if wd < 0:
            err = ctypes.get_errno()
            if err in (errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.ELOOP):
                return False  # gone, a link, or not ours to read
            raise InotifyError(err, f"inotify_add_watch {os.fsdecode(path)!r}: {os.strerror(err)}")
        old = self.paths.get(wd)
        if old is not None and old != path:
            self.wds.pop(old, None)
        self.paths[wd] = path
        self.wds[path] = wd
        return True

    def add_tree(self, top: bytes) -> None:
        """Watch `top` and every folder under it (links not followed)."""
        stack = [top]
        while stack:
            folder = stack.pop()
            if not self._add(folder):
                continue
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                stack.append(entry.path)
                        except OSError:
                            continue
            except OSError:
                continue

    def drop_tree(self, top: bytes) -> None:
        """Forget the watches on `top` and under it (moved out or deleted)."""
        prefix = top.rstrip(b"/") + b"/"
        for path in [p for p in self.wds if p == top or p.startswith(prefix)]:
            wd = self.wds.pop(path)
            self.paths.pop(wd, None)
            self._c.inotify_rm_watch(self.fd, wd)

    def read(self) -> Iterator[tuple[int, bytes]]:
        """The events ready now, as (kind, path); folders created or moved
        in are watched before they are yielded."""
        try:
            data = os.read(self.fd, 1 << 16)
        except BlockingIOError:
            return
        offset = 0
        while offset + EVENT.size <= len(data):
            wd, mask, _cookie, length = EVENT.unpack_from(data, offset)
            name = data[offset + EVENT.size : offset + EVENT.size + length].rstrip(b"\0")
            offset += EVENT.size + length
            if mask & IN_Q_OVERFLOW:
                print("nearsym watcher: inotify queue overflow; events lost", file=sys.stderr)
                continue
            folder = self.paths.get(wd)
            if folder is None:
                continue
            if mask & IN_IGNORED:
                self.paths.pop(wd, None)
                if self.wds.get(folder) == wd:
                    del self.wds[folder]
                continue
            if not name:
                continue  # the folder's own events: its parent reports them
            path = os.path.join(folder, name)
            if mask & (IN_CREATE | IN_MOVED_TO):
                if mask & IN_ISDIR:
                    self.add_tree(path)
                yield CREATED, path
            elif mask & (IN_DELETE | IN_MOVED_FROM):
                if mask & IN_ISDIR:
                    self.drop_tree(path)
                yield DELETED, path
            elif mask & (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB):
                yield CHANGED, path


def watch(
    roots: list[bytes],
    emit: Callable[[Batch | None], None],
    stdin: int,
    step_ms: int,
    timeout_ms: int,
) -> None:
    """Watch until `stdin` reaches EOF: `emit(None)` once the watches are in
    place, then `emit(batch)` for each batch."""
    notify = Inotify(roots)
    emit(None)
    poller = select.poll()
    poller.register(notify.fd, select.POLLIN)
    poller.register(stdin, select.POLLIN | select.POLLHUP)
    pending: dict[bytes, int] = {}
    due: float | None = None
    try:
        while True:
            now = time.monotonic()
            wait = timeout_ms if due is None else max(0, round((due - now) * 1000))
            ready = dict(poller.poll(wait))
            if stdin in ready:
                try:
                    if not os.read(stdin, 65536):
                        return
                except OSError:
                    return
            if notify.fd in ready:
                for kind, path in notify.read():
                    if kind == CHANGED and pending.get(path) == CREATED:
                        continue  # still new: written as it was made
                    pending.pop(path, None)
                    pending[path] = kind
                if pending and due is None:
                    due = time.monotonic() + step_ms / 1000
            if due is not None and time.monotonic() >= due:
                emit([(kind, path) for path, kind in pending.items()])
                pending = {}
                due = None
    finally:
        notify.close()
