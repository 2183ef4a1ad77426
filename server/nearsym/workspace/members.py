"""The classes whose members the open file uses: those it defines, those it
imports, and their base classes.

Design note
-----------
`Flask.route` is defined on `Scaffold`, two bases up from the `Flask` a
test imports; `subscribe` typed in a file that imports `Observable` most
likely means `Observable.subscribe`. So the ranking puts the members of
these classes right after the name evidence (`RankPolicy.members`):

- the classes the open file defines (the index's class-like definitions
  of the file: classes, interfaces, structs, enums);
- the classes it imports by name (`from a import B`, `import { B } from
  './b'`), found among the top-level definitions of the files the import
  resolves to (`imports.Relations.resolved`), or one re-export further
  (`flask/__init__.py` -> `flask/app.py`);
- their bases, transitively up to `BASE_DEPTH` steps: each base name a
  class's declaration gives (`extract.bases`, read through `index.where.BASES`, the
  one per-file cache of them) is resolved in its file
  (a class of that file, then an import naming it, as above), else to the
  only class of that name in the workspace; a name that is ambiguous and
  not imported resolves to nothing.

Go methods and C++ out-of-line definitions live in other files of their
type's folder, so for those languages a class stands for its folder too.
Resolution reads files (their imports and bases, cached by modification
time) and asks the index for exact names; the answer is cached per open
file until it or an index changes.

The open file's text says two more things, read by one regular expression
each rather than a parse (the text may be unsaved, and the parse of a
large file costs more than the whole rerank): the variables it reaches
members through (`response.aread()`: `aread` through `response`, which
names the class `Response`: `RankPolicy.receivers`), and the names it
mentions at all (`RankPolicy.open_mentions`). Neither infers a type; a
variable named unlike its class (`ctx` for a `Context`) says nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from nearsym.core.model import Kind, Symbol
from nearsym.core.query import Query
from nearsym.core.rank import RankPolicy, WorkspaceHints
from nearsym.index.files import SkippedFile, read_regular
from nearsym.index.namespace import Namespace
from nearsym.index.where import BASES
from nearsym.workspace.imports import Relations
from nearsym.workspace.reexports import Reexports

CLASS_LIKE = frozenset({Kind.CLASS, Kind.INTERFACE, Kind.STRUCT, Kind.ENUM})
BASE_DEPTH = 4
"""Steps up the base classes (`Flask` -> `App` -> `Scaffold` is two);
deeper chains reach `object`-like roots every class shares."""
UNIQUE_POOL = 0
"""Candidates read beside the exact names when looking a base name up by
itself: none. A pool holds every exact name whatever its width, and only
those are kept; a width of 64 filled the rest from the prefix and
substring tiers to throw them away (2.2 ms a name on Go's library against
0.17, the same classes found for 1,508 class names of Go's, the JDK's and
Twisted's)."""
_FOLDER_LANGUAGES = frozenset({"go", "c", "cpp"})
"""Languages whose methods may be defined in other files of the folder."""
MAX_CACHED = 256


@dataclass(frozen=True, slots=True)
class _Class:
    file: str
    """Absolute path of the file defining the class."""
    symbol: Symbol


def _owner(path: str, namespaces: Sequence[Namespace]) -> tuple[Namespace, str] | None:
    for ns in namespaces:
        rel = os.path.relpath(path, ns.root).replace(os.sep, "/")
        if not rel.startswith("../") and rel in ns.index:
            return ns, rel
    return None


class Members:
    """The open file's classes and their bases, cached (see the module note)."""

    def __init__(self, relations: Relations) -> None:
        self.relations = relations
        self._answers: dict[tuple[object, ...], frozenset[tuple[str, str]]] = {}
        self._named: dict[tuple[object, ...], list[_Class]] = {}
        self._read: dict[str, tuple[Symbol, ...]] = {}
        """The definitions of each file read during one `_compute`: a file
        an import names is searched once for every name imported from it,
        and once more for every base looked up there (Twisted's
        `internet/tcp.py`: 165 reads of its imports' files a computation,
        each building every row of the file)."""

    def of(
        self, open_file: str | None, namespaces: Sequence[Namespace], source: bytes | None = None
    ) -> frozenset[tuple[str, str]]:
        """(file or folder, qualified class name) for each class whose
        members the open file uses (`rank.WorkspaceHints.members`)."""
        if open_file is None:
            return frozenset()
        try:
            stamp = os.stat(open_file).st_mtime if source is None else -float(hash(source))
        except OSError:
            stamp = 0.0
        key = (open_file, stamp, tuple((ns.root, ns.index.generation) for ns in namespaces))
        found = self._answers.get(key)
        if found is None:
            if len(self._answers) > MAX_CACHED:
                self._answers.clear()
            found = self._answers[key] = self._compute(open_file, namespaces, source)
        return found

    def _compute(
        self, open_file: str, namespaces: Sequence[Namespace], source: bytes | None
    ) -> frozenset[tuple[str, str]]:
        try:
            return self._classes_used(open_file, namespaces, source)
        finally:
            self._read.clear()

    def _classes_used(
        self, open_file: str, namespaces: Sequence[Namespace], source: bytes | None
    ) -> frozenset[tuple[str, str]]:
        start: list[_Class] = [
            _Class(open_file, s)
            for s in self._symbols(open_file, namespaces)
            if s.kind in CLASS_LIKE
        ]
        for ref, targets in self.relations.resolved(open_file, namespaces, source):
            for name in ref.names:
                if name != "*":
                    start.extend(self._find(name, targets, namespaces, hops=1))
        seen: dict[tuple[str, str], _Class] = {}
        frontier = start
        for _ in range(BASE_DEPTH + 1):
            nxt: list[_Class] = []
            for c in frontier:
                k = (c.file, c.symbol.qualified_name)
                if k in seen:
                    continue
                seen[k] = c
                for base in self._bases_of(c):
                    nxt.extend(self._resolve_base(base, c.file, namespaces))
            frontier = nxt
        out: set[tuple[str, str]] = set()
        for (file, name), c in seen.items():
            out.add((file, name))
            if c.symbol.language in _FOLDER_LANGUAGES:
                out.add((os.path.dirname(file), name))
        return frozenset(out)

    def _symbols(self, path: str, namespaces: Sequence[Namespace]) -> tuple[Symbol, ...]:
        """The classes `path` defines (every reader here wants classes only)."""
        found = self._read.get(path)
        if found is None:
            owner = _owner(path, namespaces)
            found = self._read[path] = (
                owner[0].index.symbols_of(owner[1], CLASS_LIKE) if owner else ()
            )
        return found

    def _find(
        self, name: str, targets: Sequence[str], namespaces: Sequence[Namespace], hops: int
    ) -> list[_Class]:
        """Top-level classes named `name` in `targets`, or (`hops` times)
        in what those files import under that name (re-exports)."""
        found = [
            _Class(t, s)
            for t in targets
            for s in self._symbols(t, namespaces)
            if s.name == name and not s.container and s.kind in CLASS_LIKE
        ]
        if found or hops <= 0:
            return found
        for t in targets:
            for ref, further in self.relations.on_disk(t, namespaces):
                if name in ref.names or "*" in ref.names:
                    found.extend(self._find(name, further, namespaces, hops - 1))
        return found

    def _resolve_base(self, name: str, file: str, namespaces: Sequence[Namespace]) -> list[_Class]:
        here = [
            _Class(file, s)
            for s in self._symbols(file, namespaces)
            if s.name == name and s.kind in CLASS_LIKE
        ]
        if here:
            return here
        for ref, targets in self.relations.on_disk(file, namespaces):
            if name in ref.names:
                found = self._find(name, targets, namespaces, hops=1)
                if found:
                    return found
        return self._unique(name, namespaces)

    def _unique(self, name: str, namespaces: Sequence[Namespace]) -> list[_Class]:
        key = (name, tuple((ns.root, ns.index.generation) for ns in namespaces))
        found = self._named.get(key)
        if found is None:
            if len(self._named) > 4 * MAX_CACHED:
                self._named.clear()
            found = self._named[key] = self._lookup(name, namespaces)
        return found

    def _lookup(self, name: str, namespaces: Sequence[Namespace]) -> list[_Class]:
        query = Query.parse(name)
        found = [
            _Class(ns.file(s.path), s)
            for ns in namespaces
            for s in ns.index.candidates(query, UNIQUE_POOL)
            if s.name == name and s.kind in CLASS_LIKE
        ]
        return found if len(found) == 1 else []

    def _bases_of(self, c: _Class) -> tuple[str, ...]:
        return BASES.bases(c.symbol)


_RECEIVER = re.compile(
    rb"(?<![A-Za-z0-9_$])"
    rb"([A-Za-z_$#][A-Za-z0-9_$]*)[ \t]*(?:\?\.|\.|->|::)[ \t]*(?=([A-Za-z_$][A-Za-z0-9_$]*))"
)
"""`receiver.member` (and `?.`, `->`, `::`): the identifier a member is
reached through, and the member's name. A receiver starts where an
identifier does: tried inside every identifier, the search was quadratic
in its length (Go's `net/http/server.go`, 114 KB: 9.6 against 4.1 ms)."""
_NOT_RECEIVERS = frozenset({"self", "cls", "this", "super", "base", "me", "it"})
"""Receivers that say nothing about a type by their name (the open file's
own classes are `Members`' business)."""


def receiver_key(identifier: str) -> str:
    """An identifier as a receiver is compared with a class name: leading
    `_ $ #` dropped, lower case, no `_` (`_query_cache`, `#queryCache` and
    `QueryCache` are all `querycache`)."""
    return identifier.lstrip("_$#").replace("_", "").lower()


def receivers_in(source: bytes) -> frozenset[tuple[str, str]]:
    """(member name, `receiver_key` of its receiver) for each `x.member`
    the text writes: `self.headers.update(...)` gives ("update",
    "headers"); `self`, `this` and the like are left out."""
    out: set[tuple[str, str]] = set()
    for m in _RECEIVER.finditer(source):
        receiver = m.group(1).decode("utf-8", "replace")
        if receiver in _NOT_RECEIVERS:
            continue
        key = receiver_key(receiver)
        if key:
            out.add((m.group(2).decode("utf-8", "replace"), key))
    return frozenset(out)


_IDENTIFIER = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*")


def identifiers_in(source: bytes) -> frozenset[str]:
    """The distinct identifiers of a text (as `extract.mentions` reads
    them for the whole workspace)."""
    return frozenset(m.decode("utf-8", "replace") for m in set(_IDENTIFIER.findall(source)))


class OpenText:
    """What the open file's text says (its unsaved text when given):
    `receivers_in` and `identifiers_in` of it, cached by modification time
    (or by the unsaved text), one version per file: keyed by version, a
    buffer typed into kept its last 256 texts alive (a 1 MB buffer, 256 MB;
    TypeScript's package's soak ended 10 MB larger for it)."""

    MAX_BYTES = 2_000_000
    """A larger open file is not read (generated code)."""

    def __init__(self) -> None:
        self._answers: dict[str, tuple[float, _Read]] = {}

    def _read(self, open_file: str | None, source: bytes | None) -> _Read:
        if open_file is None:
            return _NOTHING
        try:
            stamp = os.stat(open_file).st_mtime if source is None else -float(hash(source))
        except OSError:
            return _NOTHING
        held = self._answers.get(open_file)
        if held is not None and held[0] == stamp:
            return held[1]
        if held is None and len(self._answers) >= MAX_CACHED:
            self._answers.clear()
        text = source
        if text is None:
            try:  # regular files only: a FIFO named as the open file would block
                text = read_regular(open_file, self.MAX_BYTES)[0]
            except (OSError, SkippedFile):
                text = b""
        if len(text) > self.MAX_BYTES:
            text = b""
        found = _Read(text)
        self._answers[open_file] = (stamp, found)
        return found

    def receivers(
        self, open_file: str | None, source: bytes | None = None
    ) -> frozenset[tuple[str, str]]:
        return self._read(open_file, source).receivers()

    def identifiers(self, open_file: str | None, source: bytes | None = None) -> frozenset[str]:
        return self._read(open_file, source).identifiers()


class _Read:
    """One version of an open file's text, each reading of it made once."""

    def __init__(self, text: bytes) -> None:
        self.text = text
        self._receivers: frozenset[tuple[str, str]] | None = None
        self._identifiers: frozenset[str] | None = None

    def receivers(self) -> frozenset[tuple[str, str]]:
        if self._receivers is None:
            self._receivers = receivers_in(self.text)
        return self._receivers

    def identifiers(self) -> frozenset[str]:
        if self._identifiers is None:
            self._identifiers = identifiers_in(self.text)
        return self._identifiers


_NOTHING = _Read(b"")


class WorkspaceContext:
    """The hints the ranking reads from the workspace (`rank.WorkspaceHints`),
    each read only when the policy uses it."""

    def __init__(self, relations: Relations | None = None) -> None:
        self.relations = relations or Relations()
        self.members = Members(self.relations)
        self.reexports = Reexports(self.relations)
        self.open_text = OpenText()

    def hints(
        self,
        open_file: str | None,
        namespaces: Sequence[Namespace],
        policy: RankPolicy,
        source: bytes | None = None,
    ) -> WorkspaceHints:
        return WorkspaceHints(
            self.members.of(open_file, namespaces, source) if policy.members else frozenset(),
            self.reexports.of(namespaces) if policy.exported else frozenset(),
            self.open_text.receivers(open_file, source) if policy.receivers else frozenset(),
            self.open_text.identifiers(open_file, source) if policy.open_mentions else frozenset(),
        )
