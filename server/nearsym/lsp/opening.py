"""A restart's first answers, before pygls and lsprotocol are imported.

Design note
-----------
A restarted server spent most of its first half second importing: the
interpreter, numpy and nearsym's index by 0.11-0.12 s, then lsprotocol's
570 classes, pygls, cattrs and the server's set-up, 0.2 s more (Go's
library, 2026-12-07). What the first answer needs is only the index (the
cache's snapshot), the open file and the search. So a restart reads its
first messages itself, on the main thread, before those imports:

- `initialize` is answered with the reply pygls gave to the same client
  at an earlier start (`client_key`: its capabilities and options, and
  nearsym, pygls and lsprotocol as installed), kept in the cache folder
  by `remember_reply`. Without one, with settings that have a problem to
  report, a shared index, or a folder whose snapshot is missing or over
  `SNAPSHOT_FIRST_BYTES`, nothing is done here and pygls answers as ever.
- Each folder's snapshot is installed right after the reply.
- The messages that came meanwhile are read: `initialized`, documents
  opened as they are on disk, focus notifications and cancellations are
  kept for pygls; each plain `workspace/symbol` is answered from the
  snapshot, with the server's own search and rows (`Answers`), the open
  file's hints included. Anything else (an edit, a document whose text is
  not its file's, a partial-result token, `shutdown`) ends the opening,
  and so does the end of the client's first burst (`BURST_GAP`).
- With a client that does not watch files for us, and once it has sent
  `initialized`, the index is made here too (`index_early`): our inotify
  watches first (the kernel queues their events until the server's
  watcher reads them), then the walk, each file checked against the
  snapshot, the few changed ones parsed (`PARSE_LIMIT`), and the index's
  work-done progress begun and ended. A client that watches for us must
  first answer the registration pygls sends: its index starts with the
  server.
- A first start on a folder (no cache of it: its index is cold) is
  answered by pygls, but its process pool starts here (`Opened.workers`),
  its forkserver and workers importing on the other core while this
  process imports pygls: a cold index's files went to the workers 0.3 s
  sooner (Go's library, 2026-12-07).
- The server then starts on what was read (`Opened`): the kept messages
  go to pygls first, `initialize` with its reply not sent again; the
  index either is done (`Indexing.indexed_early`) or walks the tree and
  checks each file from the installed snapshot as any restart does.

Nothing here imports pygls or lsprotocol
(`test_the_opening_imports_neither_pygls_nor_lsprotocol` holds it to that).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import logging
import os
import queue
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nearsym import __version__
from nearsym.core.rank import FETCH_MAX
from nearsym.index.cache import Cache, cache_path
from nearsym.lsp.answers import Answers
from nearsym.lsp.focus import DID_CHANGE_ACTIVE_DOCUMENT, DID_FOCUS, Focus
from nearsym.lsp.values import symbol_kinds, uri_to_path
from nearsym.lsp.wire import Reader
from nearsym.workspace.config import Config, config_from_options, index_key
from nearsym.workspace.discovery import SourceFile, WalkReport, discover
from nearsym.workspace.indexer import SNAPSHOT_FIRST_BYTES, index_namespace
from nearsym.workspace.inotify import InotifyWatcher
from nearsym.workspace.live import LiveTarget, LiveWorkspace
from nearsym.workspace.pool import Workers

log = logging.getLogger(__name__)

Item = tuple[str, Any]
"""What the stdin reader hands on (`wire.Sink`): ("message", decoded),
("error", reason) or ("end", None)."""

KEPT = frozenset(
    {
        "initialized",
        "textDocument/didOpen",
        DID_FOCUS,
        DID_CHANGE_ACTIVE_DOCUMENT,
        "$/cancelRequest",
    }
)
"""Notifications read here and passed on to pygls."""
REPLY_FILE = "opening-{key}.json"
REPLIES_KEPT = 8
"""Replies kept in the cache folder, newest first: a few clients' (VS
Code's and Neovim's differ), not one for every nearsym ever installed."""
FIRST_WAIT = 0.1
"""Longest the opening waits for `initialized` after its reply: a client
sends it at once, with its open documents and maybe a query."""
BURST_GAP = 0.01
"""Seconds without a message that end the opening: a client's first
messages come in one burst; the rest are pygls's to read."""


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


def read_stdin(relay: Relay) -> None:
    """Start reading stdin into `relay`: its items wait there for the
    opening, then for `transport.serve_stdio`."""
    Reader(lambda n: os.read(0, n), relay.take).start("nearsym-stdin")


def write_stdout(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def client_key(params: dict[str, Any]) -> str:
    """What pygls's reply to `initialize` depends on: the client's
    capabilities and options, and the code that computes it."""
    parts = [
        params.get("capabilities"),
        params.get("initializationOptions"),
        __version__,
        sys.version,
        *_installed(),
    ]
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _installed() -> list[str]:
    """The size and time of the files that decide the capabilities: the
    handlers' registrations, pygls and lsprotocol as installed."""
    paths = [os.path.join(os.path.dirname(__file__), "handlers.py")]
    for name in ("pygls", "lsprotocol"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            paths.append(spec.origin)
    found = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            found.append(f"{path}:gone")
            continue
        found.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    return found


def remember_reply(folder: str, key: str, result: Any) -> None:
    """Keep pygls's `initialize` result for the next start of this client."""
    path = os.path.join(folder, REPLY_FILE.format(key=key))
    text = json.dumps(result, sort_keys=True)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except (OSError, UnicodeDecodeError):
        pass
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
        _keep_newest(folder)
    except OSError as error:
        log.info("cannot keep the initialize reply in %s: %s", folder, error)


def _keep_newest(folder: str) -> None:
    """Drop all but the `REPLIES_KEPT` newest replies (each update of
    nearsym or pygls, and each client, makes one)."""
    replies = []
    for entry in os.scandir(folder):
        if entry.name.startswith("opening-") and entry.name.endswith(".json"):
            with contextlib.suppress(OSError):
                replies.append((entry.stat().st_mtime_ns, entry.path))
    for _, path in sorted(replies, reverse=True)[REPLIES_KEPT:]:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _stored_reply(folder: str, key: str) -> Any:
    try:
        with open(os.path.join(folder, REPLY_FILE.format(key=key)), encoding="utf-8") as f:
            found = json.loads(f.read())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and "capabilities" in found else None


def _roots(params: dict[str, Any]) -> list[str]:
    """As `settings.roots`, from the raw params."""
    found: list[str] = []
    for folder in params.get("workspaceFolders") or []:
        uri = folder.get("uri") if isinstance(folder, dict) else None
        path = uri_to_path(uri) if isinstance(uri, str) else None
        if path is not None:
            found.append(path)
    if not found:
        root_uri, root_path = params.get("rootUri"), params.get("rootPath")
        if isinstance(root_uri, str) and root_uri and (path := uri_to_path(root_uri)):
            found.append(path)
        elif isinstance(root_path, str) and root_path:
            found.append(os.path.abspath(root_path))
    return list(dict.fromkeys(found))


def _well_formed(params: dict[str, Any]) -> bool:
    """The fields read here, and those pygls would refuse, as LSP types
    them: a reply sent here must never be followed by pygls's error."""
    folders = params.get("workspaceFolders")
    if folders is not None and not (
        isinstance(folders, list)
        and all(
            isinstance(f, dict) and isinstance(f.get("uri"), str) and isinstance(f.get("name"), str)
            for f in folders
        )
    ):
        return False
    kinds = {"processId": int, "rootUri": str, "rootPath": str}
    return all(params.get(k) is None or isinstance(params[k], t) for k, t in kinds.items()) and (
        isinstance(params.get("capabilities"), dict)
    )


def _config(params: dict[str, Any]) -> Config | None:
    """The settings, when `initialize` needs nothing said about them."""
    config, problems = config_from_options(params.get("initializationOptions"))
    if problems or config.max_results > FETCH_MAX or config.shared_index or not config.cache:
        return None
    return config


def _frame(message: dict[str, Any] | str) -> bytes:
    """A message (or its JSON text) with the base protocol's header."""
    body = (message if isinstance(message, str) else json.dumps(message)).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def open_early(relay: Relay, write: Callable[[bytes], None], folder: str) -> Opened:
    """Read the first messages and answer what can be answered before pygls
    is imported (see the module note). `NEARSYM_OPENING=0` turns it off.
    Whatever fails here leaves the server to start as it always did, on
    every message read (a bug here must never cost the session)."""
    if os.environ.get("NEARSYM_OPENING") == "0":
        return Opened([])
    first = relay.get(None)
    assert first is not None
    opened = Opened([first])
    try:
        _open(relay, write, folder, opened)
    except Exception:
        log.exception("the opening failed; starting as without it")
        if opened.watcher is not None:
            opened.watcher.discard()
        opened.live, opened.watcher, opened.indexed = None, None, False
        opened.installed, opened.caches, opened.walks = {}, {}, {}
    return opened


def _open(relay: Relay, write: Callable[[bytes], None], folder: str, opened: Opened) -> None:
    kind, data = opened.items[0]
    if kind != "message" or not isinstance(data, dict) or data.get("method") != "initialize":
        return
    params = data.get("params")
    if not isinstance(params, dict) or not isinstance(data.get("id"), (int, str)):
        return
    if not _well_formed(params):
        return  # pygls says what is wrong with it
    config = _config(params)
    roots = _roots(params)
    if config is None or not roots:
        return
    settings = index_key(config)
    if not all(os.path.exists(cache_path(root, folder, settings)) for root in roots):
        opened.workers = Workers()  # cold: the pool starts now, beside pygls's imports
        opened.workers.warming()
        return
    reply = _stored_reply(folder, client_key(params))
    if reply is None:
        return
    caches = {root: Cache(root, folder, settings) for root in roots}
    if not all(0 < cache.snapshot_bytes() <= SNAPSHOT_FIRST_BYTES for cache in caches.values()):
        return
    write(_frame({"id": data["id"], "jsonrpc": "2.0", "result": reply}))
    opened.initialize_id = data["id"]
    live = LiveWorkspace(config)
    installed = {}
    for root, cache in caches.items():
        ns = live.add_root(root)
        ns.index.bulk = True
        parts = cache.load_snapshot()
        if parts is None:
            return
        try:
            installed[root] = (cache, LiveTarget(live, ns, lambda: False).install(parts, {}))
        except ValueError as error:
            log.warning("cache snapshot of %s unusable (%s)", root, error)
            return
    opened.live, opened.installed = live, installed
    capabilities = params.get("capabilities")
    focus = Focus()
    quiet = _meanwhile(relay, write, opened, live, symbol_kinds(capabilities), focus)
    log.info(
        "before pygls: initialize answered, %d snapshot(s) installed, %d quer%s answered",
        len(installed),
        opened.answered,
        "y" if opened.answered == 1 else "ies",
    )
    if quiet and opened.initialized and not _client_watches(capabilities):
        index_early(relay, write, opened, live, capabilities, focus)


def _meanwhile(
    relay: Relay,
    write: Callable[[bytes], None],
    opened: Opened,
    live: LiveWorkspace,
    kinds: frozenset[int],
    focus: Focus,
) -> bool:
    """The messages that came during the install: answer the queries, keep
    the notifications, until anything else (False) or none is waiting
    (True)."""
    answers = Answers(live, _settled)
    burst = False
    while (item := relay.get(BURST_GAP if burst else FIRST_WAIT)) is not None:
        burst = True
        kind, data = item
        method = data.get("method") if kind == "message" and isinstance(data, dict) else None
        if method == "workspace/symbol" and "id" in data:
            params = data.get("params")
            query = params.get("query") if isinstance(params, dict) else None
            if isinstance(query, str) and params.get("partialResultToken") is None:
                focus.observe_message(data)
                open_file = focus.for_request(data["id"])
                text = answers.encoded_now(query, open_file, kinds).text
                write(
                    _frame(
                        f'{{"id": {json.dumps(data["id"])}, "jsonrpc": "2.0", "result": {text}}}'
                    )
                )
                opened.answered += 1
                continue
        opened.items.append(item)
        if method not in KEPT or "id" in data or not _as_on_disk(data, live):
            return False
        opened.initialized |= method == "initialized"
        focus.observe_message(data)
    return True


def _as_on_disk(data: dict[str, Any], live: LiveWorkspace) -> bool:
    """Whether a notification leaves the answers as the snapshot has them:
    a document opened is the file on disk, in a workspace folder."""
    if data.get("method") != "textDocument/didOpen":
        return True
    try:
        document = data["params"]["textDocument"]
        path = uri_to_path(document["uri"])
        text: bytes = document["text"].encode("utf-8", "surrogatepass")
    except (KeyError, TypeError, AttributeError, UnicodeError):
        return False
    if path is None or live.namespace_of(path) is None:
        return False
    try:
        with open(path, "rb") as f:
            on_disk: bytes = f.read(len(text) + 1)
    except OSError:
        return False
    return on_disk == text


async def _settled() -> None:
    """The opening's queries wait for nothing: the snapshot is installed."""


PARSE_LIMIT = 16
"""Files changed since the snapshot that the opening parses itself (on
its one thread); with more, the started server's process pool does."""
TOKEN_WAIT = 0.5
"""Longest the opening waits for the client to take its progress token."""


def _client_watches(capabilities: Any) -> bool:
    """Whether the client can watch files for us (then the walk waits for
    its answer to the registration, which pygls asks for)."""
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
) -> None:
    """A restart's index, here: our inotify watches made (the walk comes
    after them, so no change is missed: the kernel queues the events), the
    folders walked and each file checked against the snapshot, the few
    changed files parsed, and the index's progress begun and ended, as
    `Indexing` would. Only where the client does not watch for us and few
    files changed (`PARSE_LIMIT`)."""
    started = time.perf_counter()
    try:
        watcher = InotifyWatcher(list(opened.installed))
    except OSError:
        return
    try:
        watcher.watch_now()
    except OSError as error:  # the watch limit: the server's watcher says so
        log.info("no early watches: %s", error)
        watcher.discard()
        return
    opened.watcher = watcher
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
    return _frame(
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
    write(_frame({"jsonrpc": "2.0", "id": asked, "method": "window/workDoneProgress/create",
                  "params": {"token": token}}))  # fmt: skip
    deadline = time.monotonic() + TOKEN_WAIT
    while (left := deadline - time.monotonic()) > 0:
        item = relay.get(left)
        if item is None:
            break
        kind, data = item
        answer = kind == "message" and isinstance(data, dict) and "method" not in data
        if answer and data.get("id") == asked:
            return None if "error" in data else token
        opened.items.append(item)
    log.info("the client did not take the progress token in time; no progress shown")
    return None
