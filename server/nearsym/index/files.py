"""Reading a workspace file: the one function every read of a workspace
path goes through (sources, ignore files, git's files, the open file's
imports).

A workspace is untrusted input. A FIFO named `pipe.py` or `.gitignore`
blocks a plain `open()` until something writes to it, and a `.gitignore`
linked to `/dev/zero` never ends. So a file is opened with `O_NONBLOCK`
(a FIFO opens at once, with no writer), looked at with `fstat` on what was
opened (no race with a rename in between), refused unless it is a regular
file, and read up to a bound.
"""

from __future__ import annotations

import os
import stat

READ_CHUNK = 1 << 20


class SkippedFile(Exception):
    """A file that exists but is not read, with the reason."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_regular(path: str, max_bytes: int, *, cut: bool = False) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at `path` and its stat as opened.

    At most `max_bytes` are read: a larger file raises SkippedFile, or with
    `cut` gives its first `max_bytes`. Anything but a regular file (FIFO,
    device, socket, folder) raises SkippedFile without a byte read; a file
    gone or unreadable raises OSError.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SkippedFile(f"{_kind(st.st_mode)}, not a regular file")
        if st.st_size > max_bytes and not cut:
            raise SkippedFile(f"{st.st_size} bytes, over the {max_bytes}-byte cap")
        chunks: list[bytes] = []
        left = max_bytes + 1  # one more: a file that grew since the fstat
        while left > 0:
            chunk = os.read(fd, min(left, READ_CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        if not cut:
            raise SkippedFile(f"over the {max_bytes}-byte cap")
        data = data[:max_bytes]
    return data, st
