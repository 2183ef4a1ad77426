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
- Once the client has sent `initialized`, the index is made here too
  (`early.index_early`): the changes are watched first, by our inotify
  watches (the kernel queues their events until the server's watcher
  reads them) or, with a client that watches files for us (VS Code), by
  the client, asked here (`early.registered`: pygls does not ask again);
  then the walk, each file checked against the snapshot, the few changed
  ones parsed (`early.PARSE_LIMIT`), and the index's work-done progress
  begun and ended. A client that refuses the watchers (or does not answer
  in time) gets its index with the server, as before.
- A first start on a folder (no cache of it: its index is cold) is
  answered by pygls, but its process pool starts here (`Opened.workers`),
  its forkserver and workers importing on the other core while this
  process imports pygls: the workers were ready about 0.2 s sooner
  (Go's library, 2026-12-07).
- The server then starts on what was read (`Opened`): the kept messages
  go to pygls first, `initialize` with its reply not sent again; the
  index either is done (`Indexing.indexed_early`) or walks the tree and
  checks each file from the installed snapshot as any restart does.

Nothing here imports pygls or lsprotocol
(`test_the_opening_imports_neither_pygls_nor_lsprotocol` holds it to that).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

from nearsym import __version__
from nearsym.core.rank import FETCH_MAX
from nearsym.index.cache import Cache, cache_path
from nearsym.lsp.answers import Answers
from nearsym.lsp.early import Opened, Relay, client_watches, index_early, registered
from nearsym.lsp.focus import DID_CHANGE_ACTIVE_DOCUMENT, DID_FOCUS, Focus
from nearsym.lsp.values import symbol_kinds, uri_to_path
from nearsym.lsp.wire import Reader, frame
from nearsym.workspace.config import Config, config_from_options, index_key
from nearsym.workspace.indexer import CHUNK, SNAPSHOT_FIRST_BYTES
from nearsym.workspace.live import LiveTarget, LiveWorkspace
from nearsym.workspace.pool import Workers
from nearsym.workspace.prefetch import Prefetch

log = logging.getLogger(__name__)

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
        opened.prefetches = {}
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
    cold = [root for root in roots if not os.path.exists(cache_path(root, folder, settings))]
    if cold:
        opened.workers = Workers()  # cold: the pool starts now, beside pygls's imports
        opened.workers.warming()
        for root in cold:  # and its first tasks are sent
            opened.prefetches[root] = Prefetch(root, config, opened.workers, CHUNK)
        return
    reply = _stored_reply(folder, client_key(params))
    if reply is None:
        return
    caches = {root: Cache(root, folder, settings) for root in roots}
    if not all(0 < cache.snapshot_bytes() <= SNAPSHOT_FIRST_BYTES for cache in caches.values()):
        return
    write(frame({"id": data["id"], "jsonrpc": "2.0", "result": reply}))
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
    if quiet and opened.initialized:
        if not client_watches(capabilities):
            index_early(relay, write, opened, live, capabilities, focus)
        elif registered(relay, write, opened):  # its events from now on
            index_early(relay, write, opened, live, capabilities, focus, watch=False)


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
                    frame(f'{{"id": {json.dumps(data["id"])}, "jsonrpc": "2.0", "result": {text}}}')
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
