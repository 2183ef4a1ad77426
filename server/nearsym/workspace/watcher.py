"""Our own file watcher: inotify on a thread where it can be had (Linux,
`workspace.inotify`), else watchfiles in a helper process (this module).

Design note
-----------
A client that does not watch files for us (Neovim 0.7 and 0.11, whose
capabilities are recorded in `tests/fixtures/client-capabilities/`, the
bench's client) gets watchfiles. Its setup walks the
whole tree and adds an inotify watch per folder while holding the
interpreter lock: on the Linux kernel that stalls every thread of the
server for 0.4 to 1 s, right when the first answer near the open file is
due. So it runs in a process of its own (`helper_main`, started by
`children.python_module_command`), which reads its roots from its stdin
and speaks a line protocol on its stdout:

- `ready` once the watches are in place (after that, no change is missed);
- then one JSON array per batch of changes: `[[kind, path], ...]` with
  kind 1 created, 2 changed, 3 deleted (paths that are not valid UTF-8
  travel as the `surrogateescape` strings `os` gives, which JSON escapes).

Its roots come as the first line of its stdin (a JSON array), so the
server can start it before it knows them (`prestart`): the helper's own
start-up (an interpreter, watchfiles) then overlaps the server's imports,
and only setting up the watches is left once the workspace folders are
known (on Go's library, `ready` 95 ms after the helper's spawn, 41 ms
after the roots reach a started one). It stops when its stdin closes, so
it never outlives the server, even one killed with SIGKILL.

The server holds back the full walk of a cold index until `ready` (the
open file's folder is parsed at once regardless), so a file created while
the watches are being set up is seen by the walk or by the watcher, never
by neither.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator

from nearsym.workspace.children import python_module_command
from nearsym.workspace.inotify import InotifyWatcher

log = logging.getLogger(__name__)

READY = b"ready"
STEP_MS = 50
"""Milliseconds the helper gathers events into one batch (a branch switch
writes thousands of files at once)."""
TIMEOUT_MS = 100
"""The helper's idle wake-up (it checks nothing else then: stdin's end
sets the stop event, which the notifier polls every `STEP_MS`)."""

Batch = list[tuple[int, str]]


def main() -> int:
    """The helper process: read the roots (stdin's first line), watch them
    until stdin closes."""
    import watchfiles

    first = sys.stdin.buffer.readline()
    if not first:
        return 0  # the server ended (or never needed us) before naming roots
    roots = [str(r) for r in json.loads(first)]

    stop = threading.Event()

    def wait_for_eof() -> None:
        try:
            while sys.stdin.buffer.read(65536):
                pass
        finally:
            stop.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    kinds = {  # watchfiles' change numbers -> the line protocol's
        int(watchfiles.Change.added): 1,
        int(watchfiles.Change.modified): 2,
        int(watchfiles.Change.deleted): 3,
    }
    out = sys.stdout.buffer
    try:
        for changes in _batches(roots, stop):
            if changes is None:
                out.write(READY + b"\n")
            elif changes:
                line = json.dumps([(kinds[c], p) for c, p in changes])
                out.write(line.encode("ascii") + b"\n")
            out.flush()
    except BrokenPipeError:  # the server is gone
        return 0
    except Exception as error:  # too many watches, a root removed under us
        print(f"nearsym watcher: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


DEBOUNCE_MS = 1600
"""The longest the helper gathers a stream of events into one batch
(watchfiles' default)."""
POLL_DELAY_MS = 300
"""Between two polls, where the notifier has to poll (watchfiles' default)."""


def _batches(roots: list[str], stop: threading.Event) -> Iterator[set[tuple[int, str]] | None]:
    """None once the watches are in place, then each batch of changes (as
    (watchfiles' change number, path)), until `stop`.

    watchfiles' own `watch()` first yields after its idle wake-up
    (`TIMEOUT_MS`), 100 ms after the watches are in place, and the server's
    walk waits for `ready`: so its Rust notifier is driven directly when it
    can be (as its `watch()` drives it, with its defaults), and `ready` is
    said as soon as the notifier is made."""
    try:
        from watchfiles._rust_notify import RustNotify
        from watchfiles.main import (
            _default_debug,
            _default_force_polling,
            _default_poll_delay_ms,
        )
    except ImportError:  # another watchfiles: its public `watch()`
        yield from _batches_of_watch(roots, stop)
        return
    with RustNotify(
        list(roots),
        _default_debug(None),
        _default_force_polling(None),
        _default_poll_delay_ms(POLL_DELAY_MS),
        True,  # recursive
        True,  # ignore_permission_denied
    ) as notify:
        yield None
        while True:
            raw = notify.watch(DEBOUNCE_MS, STEP_MS, TIMEOUT_MS, stop)
            if raw == "timeout":
                continue
            if isinstance(raw, str):  # "stop" or "signal"
                return
            yield raw


def _batches_of_watch(
    roots: list[str], stop: threading.Event
) -> Iterator[set[tuple[int, str]] | None]:
    import watchfiles

    ready = False
    for changes in watchfiles.watch(
        *roots,
        watch_filter=None,
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        rust_timeout=TIMEOUT_MS,
        yield_on_timeout=True,
        stop_event=stop,
        ignore_permission_denied=True,
        raise_interrupt=False,
    ):
        if not ready:
            yield None
            ready = True
        if changes:
            yield {(int(c), p) for c, p in changes}


_spare: list[subprocess.Popen[bytes]] = []
"""The helper `prestart` started, until a `WatcherProcess` takes it."""


def _spawn() -> subprocess.Popen[bytes]:
    # Isolated, from the filesystem root: the helper imports this package
    # from where the server found it, and nothing from the workspace.
    return subprocess.Popen(
        python_module_command(__name__),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=os.sep,
    )  # fmt: skip


INOTIFY = sys.platform.startswith("linux")
"""Whether to watch with inotify on a thread (`new_watcher`); the helper
process is for the other systems (and for a Linux without a descriptor
to spare)."""


def new_watcher(roots: list[str]) -> Watcher:
    """Our watcher of `roots`: inotify on a thread of the server where it
    can be had (no second interpreter: 14 MB of PSS less watching the Linux
    kernel), else the helper process."""
    if INOTIFY:
        try:
            return InotifyWatcher(roots)
        except OSError as error:
            log.info("no inotify (%s); watching in a helper process", error)
    return WatcherProcess(roots)


def prestart() -> None:
    """Start a helper that waits for its roots, as the server starts: the
    first `WatcherProcess` takes it. A server whose client watches files
    for it ends it (`discard_spare`); one that dies takes it along (its
    stdin closes). Not on Linux, where the watcher is a thread of ours
    (`new_watcher`)."""
    if INOTIFY:
        return
    try:
        _spare.append(_spawn())
    except OSError as error:
        log.info("could not start the file watcher early: %s", error)


def discard_spare() -> None:
    """End the prestarted helper nobody took (it exits on stdin EOF; a
    thread reaps it)."""
    while _spare:
        process = _spare.pop()
        _close_stdin(process)
        threading.Thread(target=process.wait, name="nearsym-reap", daemon=True).start()


def _close_stdin(process: subprocess.Popen[bytes]) -> None:
    if process.stdin is not None and not process.stdin.closed:
        with contextlib.suppress(OSError):
            process.stdin.close()


def _started(roots: list[str]) -> subprocess.Popen[bytes]:
    """A helper told its roots: the prestarted one while it is alive,
    else a new one. Raises OSError when a new one cannot be started or
    told (it died at once: the caller's retries count that)."""
    line = json.dumps(roots).encode("utf-8", "surrogateescape") + b"\n"
    if _spare:
        process = _spare.pop()
        try:
            _tell(process, line)
            return process
        except OSError:  # the prestarted helper died: start another
            _close_stdin(process)
            process.kill()
            process.wait()
    process = _spawn()
    _tell(process, line)
    return process


def _tell(process: subprocess.Popen[bytes], line: bytes) -> None:
    assert process.stdin is not None
    process.stdin.write(line)
    process.stdin.flush()


class WatcherProcess:
    """The server's end: start the helper, read its batches, stop it.

    Its methods import asyncio where they use it: the helper process runs
    this module too, and asyncio (with the ssl it loads) would be 11 of its
    25 MB resident, watching the Linux kernel."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = roots
        self._process: subprocess.Popen[bytes] | None = None

    async def run(
        self,
        on_ready: Callable[[], None],
        on_batch: Callable[[Batch], Awaitable[None]],
        ready: threading.Event | None = None,
    ) -> bool:
        """Watch until stopped (True) or until the helper fails (False);
        `on_ready` is called once the watches are in place, or when the
        helper fails before that (the index must not wait for it); `ready`
        is set just before (the helper's word arrives on the loop anyway)."""
        import asyncio

        def watched() -> None:
            if ready is not None:
                ready.set()
            on_ready()

        loop = asyncio.get_running_loop()
        process = self._process = _started(self.roots)
        assert process.stdout is not None
        reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        pipe, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), process.stdout
        )
        told = False
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                line = line.rstrip(b"\n")
                if line == READY:
                    if not told:
                        watched()
                        told = True
                    continue
                try:
                    batch = [(int(k), str(p)) for k, p in json.loads(line)]
                except (ValueError, TypeError) as error:
                    log.warning("unreadable line from the file watcher: %s", error)
                    continue
                await on_batch(batch)
        finally:
            pipe.close()
            if not told:
                watched()
            stopped = process.stdin is None or process.stdin.closed
            await self.stop()
        return stopped or process.returncode == 0

    async def stop(self) -> None:
        process = self._process
        if process is None:
            return
        import asyncio

        self.close()
        try:
            await asyncio.get_running_loop().run_in_executor(None, process.wait, 5)
        except subprocess.TimeoutExpired:
            process.kill()
            await asyncio.get_running_loop().run_in_executor(None, process.wait)

    def kill(self) -> None:
        """Kill the helper now (exit)."""
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    def close(self) -> None:
        """Stop without waiting (shutdown): the helper exits on stdin EOF."""
        if self._process is not None:
            _close_stdin(self._process)


Watcher = WatcherProcess | InotifyWatcher
"""Our watcher, either kind: the same `run` and `close`."""


def helper_main(argv: list[str]) -> int:
    """The helper process's entry point (see `children.python_module_command`)."""
    logging.basicConfig(level=logging.WARNING)
    return main()
