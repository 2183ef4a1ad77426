"""Keeping the index in step with a workspace that never stands still.

Design note
-----------
`LiveWorkspace` owns the namespaces (one per workspace folder) and every
change that reaches them: buffers opened, edited and closed in the editor,
files created, changed, deleted and renamed on disk (from the client's
watched-files notifications or our own watcher), folders added and removed.
The server only translates protocol messages into these calls, so the whole
of the synchronisation logic is testable without a client (see the
model-based test in `tests/unit/test_live.py`).

Invariant: after every call, the index holds exactly what a fresh walk of
the current disk would hold, with open buffers in place of their files. A
file deleted on disk is never answered; an unsaved buffer always is.

Rules, strongest first:
- an open buffer's text stands for its file, whatever happens on disk;
  but a buffer opened with its file's text on disk (the usual open) stands
  aside until it is edited (`open_buffer`): the file's symbols are then the
  buffer's, so nothing is parsed, and the disk's changes keep applying;
- closing a buffer goes back to the disk (the file's symbols, or nothing
  if it was never saved);
- a disk event re-reads the file and asks the same question a walk asks
  (`workspace.indexable`), so ignored, excluded and non-source files stay
  out; a deleted folder takes every file under it;
- a `.gitignore`, `.ignore`, `.git/info/exclude` or `.git` change re-walks
  its namespace, as it can change which files belong at all.

Not here: debouncing (the server does that, as it owns the clock) and
tree-sitter's incremental reparse (a whole-file reparse of one buffer is
fast enough at editing sizes: see the README's figures).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, TypeVar

from nearsym.core.filedefs import FileDefs
from nearsym.extract.definitions import extract_defs, extract_symbols
from nearsym.extract.grammar import TooBroken
from nearsym.index.cache import Cache
from nearsym.index.namespace import Namespace
from nearsym.index.skipped import SkippedFiles
from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config
from nearsym.workspace.discovery import (
    SkippedFile,
    SourceFile,
    discover,
    indexable,
    read_source,
    source_file_for,
)

log = logging.getLogger(__name__)

APPLY_BATCH = 64
"""Files a re-walk parses between two turns of the lock: a query waits at
most for one such batch to be applied (their parse runs outside it)."""

Extract = Callable[[bytes, Any, str, str], Any]
"""Source bytes, language, root, relative path -> symbols or `FileDefs`."""


REWALK_YIELD = 16
"""Files a re-walk takes between two hand-overs of the interpreter lock."""


def _is_rule_file(path: str) -> bool:
    """`.gitignore` or `.ignore` anywhere, `.git/info/exclude`, or a `.git`
    itself (a repository made or removed): they decide membership."""
    return os.path.basename(path) in (".gitignore", ".ignore", ".git") or path.endswith(
        os.path.join(".git", "info", "exclude")
    )


_F = TypeVar("_F", bound=Callable[..., Any])


def _locked(method: _F) -> _F:
    """Run a mutator under the workspace's lock: searches run on a worker
    thread and must never see an index half-way through a change."""

    @functools.wraps(method)
    def wrapper(self: LiveWorkspace, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _namespace_in(namespaces: list[Namespace], root: str) -> Namespace:
    """The namespace of `root` in `namespaces`, added (empty) when missing."""
    root = os.path.abspath(root)
    for ns in namespaces:
        if ns.root == root:
            return ns
    ns = Namespace(root, SymbolIndex(root))
    namespaces.append(ns)
    return ns


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Change(Enum):
    CREATED = 1
    CHANGED = 2
    DELETED = 3


class LiveWorkspace:
    """The namespaces of a workspace and everything that changes them."""

    def __init__(self, config: Config | None = None) -> None:
        self.config = config or Config()
        self.namespaces: list[Namespace] = []
        """The workspace folders: walked, watched, cached."""
        self.loose: list[Namespace] = []
        """Folders of files opened outside every workspace folder: one level
        each (their own files), never walked below it nor watched
        (`workspace.loose`)."""
        self.dependencies: list[Namespace] = []
        """Folders of the project's dependencies (`workspace.dependencies`):
        walked once, cached, never watched; asked only when the setting or
        the query says so."""
        self.buffers: dict[str, bytes] = {}
        self.lock = threading.RLock()
        """Held by every change and by every search (see `_locked`)."""
        self.extract: Extract = extract_symbols
        """How a buffer is parsed (the server sends large ones to a helper
        process: tree-sitter holds the interpreter lock while it parses)."""
        self._extracted: dict[tuple[str, str], tuple[bytes, Any]] = {}
        """The last parse of each open buffer, by path and namespace root."""

    # -- roots ---------------------------------------------------------------
    @_locked
    def add_root(self, root: str) -> Namespace:
        """A new, empty namespace for `root` (the caller indexes it)."""
        ns = _namespace_in(self.namespaces, root)
        # a loose folder inside the new root is now part of it
        self.loose = [n for n in self.loose if not _inside(n.root, ns.root)]
        return ns

    @_locked
    def remove_root(self, root: str) -> None:
        root = os.path.abspath(root)
        self.namespaces = [ns for ns in self.namespaces if ns.root != root]

    @_locked
    def add_loose(self, folder: str) -> Namespace:
        """A namespace for the files directly in `folder` (outside every
        workspace folder); the caller reads them (`loose.neighbours`)."""
        return _namespace_in(self.loose, folder)

    @_locked
    def add_dependencies(self, folders: Sequence[str]) -> list[Namespace]:
        """Namespaces for the dependency folders `folders` not held yet (the
        caller indexes the ones returned); a folder of a workspace folder's
        is not added twice."""
        known = {ns.root for ns in (*self.namespaces, *self.dependencies)}
        fresh = []
        for folder in folders:
            folder = os.path.abspath(folder)
            if folder not in known:
                known.add(folder)
                ns = Namespace(folder, SymbolIndex(folder), dependency=True)
                self.dependencies.append(ns)
                fresh.append(ns)
        return fresh

    def searched(self) -> list[Namespace]:
        """Every namespace a query reads: the workspace folders, then the
        loose folders."""
        return [*self.namespaces, *self.loose]

    def discover(self, ns: Namespace) -> list[SourceFile]:
        return list(discover(ns.root, self.config))

    @_locked
    def index_all(self, ns: Namespace) -> None:
        """Walk and index `ns` now (tests, the CLI); buffers win."""
        for sf in self.discover(ns):
            self.apply(ns, sf, self.read(ns, sf))
        self._apply_buffers(ns)

    def read(self, ns: Namespace, sf: SourceFile) -> list[object] | Exception:
        """Parse one file from disk: its symbols, or why it was skipped."""
        try:
            data = read_source(sf.path, self.config.max_file_bytes)
            return list(extract_symbols(data, sf.language, ns.root, sf.rel))
        except (SkippedFile, TooBroken, OSError) as why:
            return why

    @_locked
    def apply(self, ns: Namespace, sf: SourceFile, result: list[object] | Exception) -> None:
        """Store a parse result, unless a buffer stands for the file."""
        if (ns not in self.namespaces and ns not in self.loose) or sf.path in self.buffers:
            return
        ns.index.skipped.update(dropped=[sf.rel])  # changed: its stamp is not known here
        if isinstance(result, Exception):
            log.info("skipped %s: %s", sf.path, result)
            ns.index.remove_file(sf.rel)
        else:
            ns.index.replace_file(sf.rel, result)  # type: ignore[arg-type]

    @_locked
    def apply_many(self, ns: Namespace, results: Sequence[tuple[SourceFile, object]]) -> None:
        """Store a batch of results (`FileDefs`, or why a file was skipped)
        as one segment; files open in buffers keep the buffer's symbols."""
        if ns not in self.namespaces and ns not in self.loose and ns not in self.dependencies:
            return
        fresh: list[tuple[str, FileDefs]] = []
        skipped: list[tuple[str, int, int]] = []
        not_skipped: list[str] = []
        for sf, result in results:
            if sf.path in self.buffers:
                continue
            if isinstance(result, FileDefs):
                fresh.append((sf.rel, result))
                not_skipped.append(sf.rel)
            else:
                log.info("skipped %s: %s", sf.path, result)
                ns.index.remove_file(sf.rel)
                if isinstance(result, (SkippedFile, TooBroken)) and sf.size >= 0:
                    skipped.append((sf.rel, sf.size, sf.mtime_ns))
                else:  # gone or unreadable: read again next time
                    not_skipped.append(sf.rel)
        ns.index.replace_files(fresh)
        ns.index.skipped.update(skipped, not_skipped)

    def snapshot(self, ns: Namespace, stamps: dict[str, tuple[int, int]]) -> dict[str, Any] | None:
        """`ns`'s index for the cache; files open in buffers are left out
        (their symbols are the buffer's, not the file's)."""
        with self.lock:
            root = ns.root.rstrip(os.sep) + os.sep
            open_rels = {
                p[len(root) :].replace(os.sep, "/") for p in self.buffers if p.startswith(root)
            }
            kept = {r: s for r, s in stamps.items() if r not in open_rels}
            return ns.index.snapshot(kept, Cache.settled_before())

    def compact(self, ns: Namespace) -> None:
        """Merge `ns`'s segments after a cold index, outside the lock."""
        ns.index.compact(self.lock)

    def _apply_buffers(self, ns: Namespace) -> None:
        for path, text in self.buffers.items():
            if self.namespace_of(path) is ns:
                self._index_buffer(path, text)

    def namespace_of(self, path: str) -> Namespace | None:
        """The innermost workspace folder holding `path`, else the loose
        folder it lies directly in."""
        best: Namespace | None = None
        for ns in self.namespaces:
            if _inside(path, ns.root) and (best is None or len(ns.root) > len(best.root)):
                best = ns
        if best is None:
            best = next((ns for ns in self.loose if os.path.dirname(path) == ns.root), None)
        return best

    def _owners(self, path: str) -> list[Namespace]:
        """Every namespace `path` lies in (nested folders each index it);
        outside them all, the loose folder it lies directly in."""
        owners = [ns for ns in self.namespaces if _inside(path, ns.root)]
        if not owners:
            owners = [ns for ns in self.loose if os.path.dirname(path) == ns.root]
        return owners

    # -- buffers -------------------------------------------------------------
    def open_buffer(
        self, path: str, text: bytes, current: Callable[[], bool] = lambda: True
    ) -> None:
        """A buffer the editor just opened. When `text` is its file's on disk
        and the index holds that file from the disk (`_indexed_as_on_disk`),
        the index's symbols of the file are the buffer's: it is not parsed
        and does not stand for the file until it is edited (a 100 KB Go file
        was parsed in a helper process on every open). Otherwise it is
        indexed as `change_buffer` does. `current()` says, under the lock,
        whether no edit or close of the buffer came since (they are the
        newer word then)."""
        same = self._indexed_as_on_disk(path, text)
        stale = False
        with self.lock:
            if not current():
                return
            if not same:
                self.buffers[path] = text
            else:
                stale = self.buffers.pop(path, None) is not None  # opened twice
                self._forget_extracted(path)
        if not same:
            self.index_buffer(path, text)
        elif stale:
            self._from_disk(path)

    def _indexed_as_on_disk(self, path: str, text: bytes) -> bool:
        """Whether `text` is what a walk reads from `path`, and each
        workspace folder holding it has the file indexed (from the disk: a
        buffer closed goes back to the disk) or is being indexed cold (the
        open file's folder first, `indexer.index_namespace`; a restart's
        snapshot holds it). Any other file (not reached by a finished
        index yet, or in a loose folder, whose walk may not reach it) is
        parsed as a buffer, so that its symbols answer at once."""
        owners = self._owners(path)
        if not owners:
            return False
        with self.lock:
            for ns in owners:
                if ns not in self.namespaces:
                    return False
                sf = source_file_for(ns.root, path)
                if sf is None or (sf.rel not in ns.index and not ns.index.bulk):
                    return False
        try:
            return read_source(path, self.config.max_file_bytes) == text
        except (OSError, SkippedFile):
            return False

    def change_buffer(self, path: str, text: bytes) -> None:
        self.set_buffer(path, text)
        self.index_buffer(path, text)

    @_locked
    def set_buffer(self, path: str, text: bytes) -> None:
        """The buffer's text now (quick: see `index_buffer`)."""
        self.buffers[path] = text

    def index_buffer(self, path: str, text: bytes) -> None:
        """Index a buffer's `text`: parsed outside the lock (a large buffer
        takes seconds), installed under it unless a newer text (or a close)
        came meanwhile, so whichever parse ends last, the newest text wins."""
        parsed = self._parse_buffer(path, text)
        with self.lock:
            if self.buffers.get(path) is text:
                self._install_buffer(parsed)

    @_locked
    def drop_buffer(self, path: str) -> None:
        """The buffer is closed (quick: see `reread`)."""
        self.buffers.pop(path, None)
        self._forget_extracted(path)

    def reread(self, path: str) -> None:
        """Back to the disk for a closed buffer's file (gone if never saved)."""
        if path not in self.buffers:
            self._from_disk(path)

    @_locked
    def close_buffer(self, path: str) -> None:
        self.buffers.pop(path, None)
        self._forget_extracted(path)
        self._from_disk(path)

    def _forget_extracted(self, path: str) -> None:
        for key in [k for k in list(self._extracted) if k[0] == path]:
            del self._extracted[key]

    def _index_buffer(self, path: str, text: bytes) -> None:
        self._install_buffer(self._parse_buffer(path, text))

    def _parse_buffer(self, path: str, text: bytes) -> list[tuple[Namespace, str, Any]]:
        """Each namespace holding `path`, its relative path, and the
        buffer's symbols there (None: the buffer does not belong)."""
        parsed: list[tuple[Namespace, str, Any]] = []
        for ns in self._owners(path):
            sf = source_file_for(ns.root, path)
            if sf is None:
                continue
            if not self._buffer_belongs(ns, sf):
                parsed.append((ns, sf.rel, None))
            elif len(text) > self.config.max_file_bytes:  # as a file that size would be
                log.info("buffer %s is over maxFileBytes; not indexed", path)
                parsed.append((ns, sf.rel, None))
            else:
                parsed.append((ns, sf.rel, self._extract_buffer(ns, sf, text)))
        return parsed

    def _extract_buffer(self, ns: Namespace, sf: SourceFile, text: bytes) -> Any:
        """The buffer's symbols in `ns` (None: too broken to index). The
        last text's are kept: a snapshot installed or a walk ended puts the
        buffers back without parsing them again (under the lock: a 100 KB
        Go file, in a helper process)."""
        known = self._extracted.get((sf.path, ns.root))
        if known is not None and known[0] is text:
            return known[1]
        try:
            symbols = self.extract(text, sf.language, ns.root, sf.rel)
        except TooBroken as why:
            log.info("buffer %s not indexed: %s", sf.path, why)
            symbols = None
        self._extracted[(sf.path, ns.root)] = (text, symbols)
        return symbols

    def _install_buffer(self, parsed: list[tuple[Namespace, str, Any]]) -> None:
        for ns, rel, symbols in parsed:
            if symbols is None:
                ns.index.remove_file(rel)
            else:
                ns.index.replace_file(rel, symbols)

    def _buffer_belongs(self, ns: Namespace, sf: SourceFile) -> bool:
        """An open buffer is indexed when its file would be, or when it is a
        new file not saved yet (then only the ignore rules decide)."""
        return indexable(ns.root, sf.path, self.config, must_exist=False) is not None

    # -- disk ----------------------------------------------------------------
    def disk_changed(self, changes: Iterable[tuple[Change, str]]) -> None:
        """Apply a batch of file-system events (absolute paths). Walks,
        reads and parses run outside the lock, each result is applied under
        it: a query waits at most for one file's (or one batch's) update.
        Call from one thread at a time (the server's disk thread)."""
        rewalk: set[str] = set()
        for change, path in changes:
            if _is_rule_file(path):
                rewalk.update(ns.root for ns in self._owners(path))
                continue
            if change is Change.DELETED:
                with self.lock:
                    self._deleted(path)
                if os.path.isdir(path):  # deleted and made again before we looked
                    self._from_disk(path)
            else:
                self._from_disk(path)
        for root in rewalk:
            ns = next((n for n in self.namespaces if n.root == root), None)
            if ns is not None:
                self.rewalk(ns)

    def rewalk(self, ns: Namespace) -> None:
        """Re-walk a namespace (its ignore rules changed): drop what no
        longer belongs, index what now does. A file indexed before and still
        belonging is kept as it is: its own changes come as its own events;
        it is not stat'ed, and a file skipped before is not read again while
        its stamp holds (`SymbolIndex.skipped`). The walk and the parses run
        outside the lock.

        The walk is pure Python once the stats are gone, and it would keep
        the interpreter lock from a query for 5 ms at a time (the switch
        interval) after each of the query's NumPy calls: it hands the lock
        over every `REWALK_YIELD` files (on the Linux kernel, with a
        `.gitignore` saved every few queries, the queries' p90 went from 95
        to 33 ms)."""
        with self.lock:
            indexed = set(ns.index.files)
            generation = ns.index.files_generation
        unseen = set(indexed)
        fresh: list[SourceFile] = []
        still: list[tuple[str, int, int]] = []
        for n, sf in enumerate(discover(ns.root, self.config, known=indexed)):
            if n % REWALK_YIELD == 0:
                time.sleep(0)
            if sf.rel in indexed:
                unseen.discard(sf.rel)
            elif ns.index.skipped.holds(sf.rel, sf.size, sf.mtime_ns):
                still.append((sf.rel, sf.size, sf.mtime_ns))
            else:
                fresh.append(sf)
        with self.lock:
            changed = ns.index.files_generation != generation
            added = [rel for rel in ns.index.files if rel not in indexed] if changed else []
            for rel in unseen:
                ns.index.remove_file(rel)  # buffers come back below if they belong
            ns.index.skipped = SkippedFiles.of(still)  # what the walk no longer finds is forgotten
        # Files indexed during the walk (a cold index still running) were
        # judged by the rules before: judged again.
        for rel in added:
            path = ns.file(rel)
            if path not in self.buffers and indexable(ns.root, path, self.config) is None:
                with self.lock:
                    if path not in self.buffers:
                        ns.index.remove_file(rel)
        self._read_and_apply(ns, fresh)
        self.reindex_buffers(ns)

    def reindex_buffers(self, ns: Namespace) -> None:
        """Index `ns`'s open buffers again (after a walk), each parsed
        outside the lock."""
        for path, text in list(self.buffers.items()):
            if self.namespace_of(path) is ns:
                parsed = self._parse_buffer(path, text)
                with self.lock:
                    if self.buffers.get(path) is text:
                        self._install_buffer(parsed)

    def _read_and_apply(self, ns: Namespace, files: Sequence[SourceFile]) -> None:
        """Parse `files` outside the lock, applying them `APPLY_BATCH` at a
        time, each batch as one segment (file by file, the merges of 64
        small segments held the lock 80-100 ms a batch while a re-walk
        added 3,000 files, and a query waited that long for it)."""
        for start in range(0, len(files), APPLY_BATCH):
            chunk = files[start : start + APPLY_BATCH]
            self.apply_many(ns, [(sf, self.read_defs(sf)) for sf in chunk])

    def read_defs(self, sf: SourceFile) -> FileDefs | Exception:
        """`read`, as the columns a batch is built from."""
        try:
            data = read_source(sf.path, self.config.max_file_bytes)
        except (SkippedFile, OSError) as why:
            return why
        try:
            return extract_defs(data, sf.language)
        except TooBroken as why:  # skipped, as a cold index's worker skips it
            return why

    def _deleted(self, path: str) -> None:
        """A file or a whole folder is gone: drop what was under it. A file
        the index holds is dropped alone; anything else (a folder) is
        looked for among every indexed path (the kernel's 56,000: 30-50 ms
        with the lock held, which a deleted source file no longer costs)."""
        for ns in self._owners(path):
            rel = os.path.relpath(path, ns.root).replace(os.sep, "/")
            prefix = "" if rel == "." else rel + "/"
            held = rel != "." and rel in ns.index
            ns.index.skipped.update(dropped=[rel])  # a folder's are forgotten at the next re-walk
            for known in [rel] if held else ns.index.files:
                if known == rel or known.startswith(prefix):
                    absolute = ns.file(known)
                    if absolute not in self.buffers:
                        ns.index.remove_file(known)
        # A deleted folder may have taken a .gitignore with it: the buffers
        # left under it are judged again.
        under = path.rstrip(os.sep) + os.sep
        for buffer, text in list(self.buffers.items()):
            if buffer.startswith(under):
                self._index_buffer(buffer, text)

    def _from_disk(self, path: str) -> None:
        """Index `path` (a file, or a folder's files) as a walk would now;
        reads outside the lock, applies under it."""
        if os.path.isdir(path) and not os.path.islink(path):
            for ns in self._owners(path):  # a folder made (or moved in): walk it alone
                self._read_and_apply(ns, list(discover(ns.root, self.config, under=path)))
            return
        if path in self.buffers:
            return
        for ns in self._owners(path):
            found = indexable(ns.root, path, self.config)
            if found is None:
                rel = os.path.relpath(path, ns.root).replace(os.sep, "/")
                with self.lock:
                    if path not in self.buffers:
                        ns.index.remove_file(rel)
            else:
                self.apply(ns, found, self.read(ns, found))


class LiveTarget:
    """A namespace of the live workspace as a cold index's target: results
    are applied under the lock, buffers keep winning, and nothing lands once
    `cancelled()` says a newer walk took over."""

    def __init__(self, live: LiveWorkspace, ns: Namespace, cancelled: Callable[[], bool]) -> None:
        self.live, self.ns, self.cancelled = live, ns, cancelled

    def apply(self, batch: list[tuple[SourceFile, FileDefs | Exception]]) -> None:
        if not self.cancelled():
            self.live.apply_many(self.ns, batch)

    def install(
        self, parts: dict[str, bytes], held: Mapping[str, tuple[int, int]]
    ) -> dict[str, tuple[int, int]]:
        with self.live.lock:
            if self.cancelled() or (self.ns.index.segments and not self.ns.index.bulk):
                return {}  # a re-walk of a settled index: no snapshot over it
            stamps = self.ns.index.install(parts, held)
            self.live._apply_buffers(self.ns)
            return stamps

    def reserve(self, rels: list[str]) -> None:
        with self.live.lock:
            if not self.cancelled():
                self.ns.index.reserve(rels)

    def passed_over(self, sf: SourceFile) -> bool:
        with self.live.lock:
            return self.ns.index.skipped.holds(sf.rel, sf.size, sf.mtime_ns)

    def remove(self, rels: list[str]) -> None:
        with self.live.lock:
            if self.cancelled():
                return
            for rel in rels:
                if self.ns.file(rel) not in self.live.buffers:
                    self.ns.index.remove_file(rel)
