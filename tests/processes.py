"""Process checks shared by the tests that kill a server outright."""

from __future__ import annotations

import os


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def children(parent: int) -> dict[int, bytes]:
    """Live child processes of `parent`, with their command lines.

    A process that is exiting has released its memory before it turns
    zombie, and its command line reads empty in that window: it is not
    counted (a live process always has at least its argv[0])."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read()
        except OSError:
            continue
        if int(fields[1]) == parent and fields[0] not in "ZX" and command:
            found[int(entry)] = command
    return found


def descendants(root: int) -> dict[int, bytes]:
    """Every live process below `root` (children, theirs, ...), with its
    command line: the pool's workers are the forkserver's children."""
    found: dict[int, bytes] = {}
    todo = [root]
    while todo:
        for pid, command in children(todo.pop()).items():
            if pid not in found:
                found[pid] = command
                todo.append(pid)
    return found
