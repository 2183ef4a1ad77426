"""What a start reads and does before pygls, below the opening
(`opening`): the stdin reader's relay, what is left to the server
(`Opened`), and a restart's index made there (`index_early`).

A restart's index is made before pygls where few files changed since the
snapshot (`PARSE_LIMIT`): the folders walked once their changes are
watched (our inotify watches, or the client's, which takes the watchers'
registration here: `registered`), each file checked against the snapshot,
the changed ones parsed, and the index's work-done progress begun and
ended, as `Indexing` would. Nothing here imports pygls or lsprotocol.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nearsym.index.cache import Cache
from nearsym.lsp.focus import Focus
from nearsym.lsp.values import WATCH_GLOBS, WATCHED_FILES
from nearsym.lsp.wire import frame
from nearsym.workspace.config import Config
from nearsym.workspace.discovery import SourceFile, WalkReport, discover
from nearsym.workspace.indexer import index_namespace
from nearsym.workspace.inotify import InotifyWatcher
from nearsym.workspace.live import LiveTarget, LiveWorkspace
from nearsym.workspace.pool import Workers
from nearsym.workspace.prefetch import Prefetch

log = logging.getLogger(__name__)

Item = tuple[str, Any]
"""What the stdin reader hands on (`wire.Sink`): ("message", decoded),
("error", reason) or ("end", None)."""


@dataclass(slots=True)
class Opened:
    """What the opening leaves to the server."""

    items: list[Item]
    """The reader's items for pygls, in order (answered queries left out)."""
    initialize_id: Any = None
    """`initialize` answered here: pygls's own reply to it is not sent."""
    live: LiveWorkspace | None = None
    """The workspace, its folders' snapshots installed."""
    installed: dict[str, tuple[Cache, dict[str, tuple[int, int]]]] = field(default_factory=dict)
    """Each folder's cache and the stamps its snapshot brought
    (`indexer.index_namespace`'s `installed`)."""
    answered: int = 0
    """Queries answered here."""
    initialized: bool = False
    """The client's `initialized` came (and is among `items`)."""
    watcher: InotifyWatcher | None = None
    """Our file watcher, its watches made here (`index_early`)."""
    indexed: bool = False
    """Every folder was walked and checked here, its progress reported."""
    walks: dict[str, WalkReport] = field(default_factory=dict)
    """What each folder's walk here found to say (`Indexing.report_walk`)."""
    caches: dict[str, Cache] = field(default_factory=dict)
    """The caches of the folders indexed here."""
    workers: Workers | None = None
    """The process pool, started here for a cold index."""
    prefetches: dict[str, Prefetch] = field(default_factory=dict)
    """The first tasks of each cold folder's index, sent to `workers` here."""
    registered: bool | None = None
    """The client's answer to the watchers' registration asked here:
    accepted, refused, or None (not asked, or no answer in time)."""


class Relay:
    """The stdin reader's sink: items wait here until `hand_to` gives them,
    and every later one, to the connection, in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: queue.SimpleQueue[Item] = queue.SimpleQueue()
        self._sink: Callable[[str, Any], None] | None = None

    def take(self, kind: str, value: Any) -> None:
        """On the reader's thread."""
        with self._lock:
            sink = self._sink
            if sink is None:
                self._waiting.put((kind, value))
                return
        sink(kind, value)

    def get(self, timeout: float | None) -> Item | None:
        """The next item (None when none came within `timeout`)."""
        try:
            return self._waiting.get(timeout=timeout)
        except queue.Empty:
            return None

    def hand_to(self, sink: Callable[[str, Any], None], first: list[Item]) -> None:
        """`first`, then what is waiting, then every later item to `sink`."""
        with self._lock:
            for kind, value in first:
                sink(kind, value)
            while (waiting := self.get(0)) is not None:
                sink(*waiting)
            self._sink = sink


PARSE_LIMIT = 16
"""Files changed since the snapshot that the opening parses itself (on
its one thread); with more, the started server's process pool does."""
TOKEN_WAIT = 0.5
"""Longest the opening waits for the client to take its progress token."""


def client_watches(capabilities: Any) -> bool:
    """Whether the client can watch files for us (then the walk waits for
    its answer to the registration: `registered`)."""
    try:
        return bool(capabilities["workspace"]["didChangeWatchedFiles"]["dynamicRegistration"])
    except (KeyError, TypeError):
        return False


def index_early(
    relay: Relay,
    write: Callable[[bytes], None],
    opened: Opened,
    live: LiveWorkspace,
    capabilities: Any,
    focus: Focus,
    watch: bool = True,
) -> None:
    """A restart's index, here: the folders walked and each file checked
    against the snapshot, the few changed files parsed, and the index's
    progress begun and ended, as `Indexing` would; only where few files
    changed (`PARSE_LIMIT`). The walk comes after the changes are watched,
    so none is missed: our inotify watches made here (`watch`: the kernel
    queues their events), or the client's, which took the registration."""
    started = time.perf_counter()
    if watch and not _watched_here(opened):
        return
    config = live.config
    walked = {}
    for root, (_, known) in opened.installed.items():
        report = WalkReport()
        files = list(discover(root, config, report=report))
        changed = sum(known.get(sf.rel) != (sf.size, sf.mtime_ns) for sf in files)
        if changed > PARSE_LIMIT:
            return
        walked[root] = (files, report)
    token = _progress_token(relay, write, opened, capabilities)
    if token is not None:
        write(_progress(token, {"title": "nearsym: indexing", "kind": "begin",
                                "message": "walking", "percentage": 0}))  # fmt: skip
    summary = "indexing stopped"
    try:
        summary = _index_walked(opened, live, walked, focus, started)
    finally:  # begun: ended, whatever ended the index (`Indexing`)
        if token is not None:
            write(_progress(token, {"kind": "end", "message": summary}))


def _watched_here(opened: Opened) -> bool:
    """Our inotify watches on every folder, made now (`opened.watcher`)."""
    try:
        watcher = InotifyWatcher(list(opened.installed))
    except OSError:
        return False
    try:
        watcher.watch_now()
    except OSError as error:  # the watch limit: the server's watcher says so
        log.info("no early watches: %s", error)
        watcher.discard()
        return False
    opened.watcher = watcher
    return True


def registered(relay: Relay, write: Callable[[bytes], None], opened: Opened) -> bool:
    """Ask the client to watch the source files for us (as
    `watching.register_watchers` would): whether it took them. Its answer,
    or None when it gave none within `TOKEN_WAIT` (the server then asks
    again), is left in `opened.registered`. Messages that come meanwhile
    are kept, in order, for pygls."""
    asked = f"nearsym-opening-{uuid.uuid4()}"
    registration = {
        "id": f"nearsym-watch-{uuid.uuid4()}",
        "method": WATCHED_FILES,
        "registerOptions": {"watchers": [{"globPattern": glob} for glob in WATCH_GLOBS]},
    }
    write(frame({"jsonrpc": "2.0", "id": asked, "method": "client/registerCapability",
                  "params": {"registrations": [registration]}}))  # fmt: skip
    answer = _answer(relay, opened, asked)
    if answer is None:
        log.info("the client did not answer the watchers' registration in time")
        return False
    opened.registered = "error" not in answer
    return opened.registered


def _answer(relay: Relay, opened: Opened, asked: str) -> dict[str, Any] | None:
    """The client's answer to our request `asked`, or None if it gave none
    within `TOKEN_WAIT`; other messages are kept, in order, for pygls."""
    deadline = time.monotonic() + TOKEN_WAIT
    while (left := deadline - time.monotonic()) > 0:
        item = relay.get(left)
        if item is None:
            break
        kind, data = item
        answer = kind == "message" and isinstance(data, dict) and "method" not in data
        if answer and data.get("id") == asked:
            found: dict[str, Any] = data
            return found
        opened.items.append(item)
    return None


def _index_walked(
    opened: Opened,
    live: LiveWorkspace,
    walked: dict[str, tuple[list[SourceFile], WalkReport]],
    focus: Focus,
    started: float,
) -> str:
    """Each folder's files checked, the changed ones parsed; the summary."""
    config = live.config
    files_seen = cached = 0
    for root, (files, report) in walked.items():
        cache, known = opened.installed.pop(root)
        opened.caches[root] = cache
        ns = live.add_root(root)
        stats = index_namespace(
            root,
            config,
            LiveTarget(live, ns, lambda: False),
            cache=cache,
            focus=lambda: focus.path,
            installed=known,
            walker=functools.partial(_walked, files, report),
        )
        live.compact(ns)
        if stats.changed:
            parts = live.snapshot(ns, cache.trusted(stats.stamps))
            if parts is not None:
                cache.store_snapshot(parts)
        files_seen += stats.files
        cached += stats.from_snapshot + stats.from_cache
        opened.walks[root] = stats.walk
    symbols = sum(len(ns.index) for ns in live.namespaces)
    summary = (
        f"indexed {files_seen} files, {symbols} definitions in "
        f"{time.perf_counter() - started:.1f}s ({cached} files from the cache)"
    )
    log.info("%s, before pygls", summary)
    opened.indexed = True
    return summary


def _walked(
    files: list[SourceFile], report: WalkReport, root: str, config: Config, into: WalkReport
) -> list[SourceFile]:
    """The walk made already, as `index_namespace`'s walker."""
    for name in WalkReport.__dataclass_fields__:
        setattr(into, name, getattr(report, name))
    return files


def _progress(token: str, value: dict[str, Any]) -> bytes:
    return frame(
        {"jsonrpc": "2.0", "method": "$/progress", "params": {"token": token, "value": value}}
    )


def _progress_token(
    relay: Relay, write: Callable[[bytes], None], opened: Opened, capabilities: Any
) -> str | None:
    """A work-done progress token the client has taken, or None (it does
    not show progress, refused it, or did not answer within `TOKEN_WAIT`).
    Messages that come meanwhile are kept, in order, for pygls."""
    try:
        if not capabilities["window"]["workDoneProgress"]:
            return None
    except (KeyError, TypeError):
        return None
    token = f"nearsym-index-{uuid.uuid4()}"
    asked = f"nearsym-opening-{uuid.uuid4()}"
    write(frame({"jsonrpc": "2.0", "id": asked, "method": "window/workDoneProgress/create",
                  "params": {"token": token}}))  # fmt: skip
    answer = _answer(relay, opened, asked)
    if answer is None:
        log.info("the client did not take the progress token in time; no progress shown")
        return None
    return None if "error" in answer else token
