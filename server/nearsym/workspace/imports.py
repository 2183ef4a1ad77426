"""What the open file uses: the workspace files its imports resolve to.

Design note
-----------
Folder distance alone measured *worse* than alphabetical order on the golden
set: the definition a person jumps to is usually in a file the open file
imports, and that file is rarely in the same folder (a test imports the
package; a package module imports its siblings' and its parent's modules).
So the open file's imports are read (tree-sitter, `extract.extract_imports`),
resolved against the files the index holds, and the ranking puts definitions
in those files (and in the files *they* re-export from, one step further, so
`from flask import Flask` reaches `flask/app.py` through `flask/__init__.py`)
ahead of others among name ties.

Resolution is by path, without running anything: a Python module
`a.b.c` is any indexed `.../a/b/c.py` or `.../a/b/c/__init__.py` (suffix
match, so `src/` layouts work); a relative import counts folders up from the
open file; a JS/TS import `./x` tries the usual extensions and `index`
files; a Go import path is any indexed folder ending with it; a Rust `use`
path is read from the crate root (`crate::`) or the file's module. Packages
outside the workspace resolve to nothing, which is right: they have no
definitions here.

Only the *file* relation is used for ranking: the imported names would
reward a name merely for being mentioned in the open file, which is how the
golden cases were made: each comes from a use of the wanted name in the
open file (`nearsym eval --swap-open` measures without it).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nearsym.extract.imports import ImportRef, extract_imports, reads_imports
from nearsym.extract.languages import language_for_path
from nearsym.index.namespace import Namespace
from nearsym.workspace.discovery import SkippedFile, read_source

FOLLOW_DEPTH = 2
"""Imports followed: the open file's, then those of the files it imports
(re-exports through `__init__.py` / `index.ts`). Deeper reaches most of a
package and stops meaning anything."""
_NO_REEXPORTS = frozenset({"go"})
"""Languages whose imported files are not read for a second step: a Go
package re-exports nothing, and its import names a whole folder, so the
second step read every file of every imported package (`net/http`'s
`server.go`: 897 files parsed, 2,417 files related, 43% of Go's library,
1.1 s before the first answer with it open; one step: 1 file, 897
related)."""
MAX_READ_BYTES = 1_000_000
IMPORTS_CACHED = 256
"""Texts whose imports are kept, by the text's digest: reading them parses
the whole file (tree-sitter holds the interpreter lock meanwhile), and a
query asks twice for the open file's (its related files, the members hint),
again each time the index changes. Go's `net/http/server.go` open on a
restart was parsed four times before the first answer, 8 ms each; now
once."""
BULK_LAYOUT_SECONDS = 2.0
"""Longest a layout is reused while a cold index adds files."""
BULK_LAYOUT_GROWTH = 2
"""A layout is not reused once the index holds more than this many times
the definitions it was made from: a restart's snapshot brings the whole
folder at once, and a layout made from the empty index just before it
resolved none of the open file's imports for two seconds."""

ON_DISK_CACHED = 1024
"""Files whose resolved imports `Relations.on_disk` keeps."""

Resolved = list[tuple[ImportRef, list[str]]]
"""Each import of a file, with the absolute paths it resolves to."""

_JS_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts")


@dataclass(slots=True)
class _Layout:
    """Indexed files of one namespace, keyed for import resolution."""

    by_module: dict[str, list[str]]
    by_folder: dict[str, list[str]]
    files: frozenset[str]


_PYTHON_SUFFIXES = (".py", ".pyi")
_ECMASCRIPT_FILES = (*_JS_SUFFIXES, ".mts", ".cts")
"""What a JS/TS import can resolve to (`_resolve_ecmascript`'s candidates)."""
_RESOLVED_FILES = (".go", *_PYTHON_SUFFIXES, *_ECMASCRIPT_FILES, ".rs")
"""What any import can resolve to: the only files a layout keeps."""


def _layout(files: Iterable[str]) -> _Layout:
    """Only files an import can resolve to are kept: Python modules and
    JS/TS files by name, Go files by folder. A C or Java workspace (the
    Linux kernel's 56,000 files) has an empty layout, not 6 MB of folder
    keys nothing reads."""
    by_module: dict[str, list[str]] = {}
    by_folder: dict[str, list[str]] = {}
    named: list[str] = []
    tails: dict[str, list[list[str]]] = {}
    """Each Go folder's lists in `by_folder`, one for each of its tails:
    made once a folder, not once a file."""
    for rel in [f for f in files if f.endswith(_RESOLVED_FILES)]:  # one test a path, in C
        if rel.endswith(".go"):
            where = rel.rpartition("/")[0]
            lists = tails.get(where)
            if lists is None:
                steps = where.split("/") if where else []
                lists = tails[where] = [
                    by_folder.setdefault("/".join(steps[i:]), []) for i in range(len(steps) + 1)
                ]
            for found in lists:
                found.append(rel)
        elif rel.endswith(_PYTHON_SUFFIXES):
            named.append(rel)
            parts = rel.split("/")
            folder = parts[:-1]
            stem = parts[-1].rsplit(".", 1)[0]
            module = folder if stem == "__init__" else [*folder, stem]
            for i in range(len(module)):
                by_module.setdefault(".".join(module[i:]), []).append(rel)
        elif rel.endswith(_ECMASCRIPT_FILES) or rel.endswith(".rs"):
            named.append(rel)
    return _Layout(by_module, by_folder, frozenset(named))


class Relations:
    """Resolves a file's imports to files of the namespaces, with caches that
    are dropped whenever an index changes."""

    def __init__(self) -> None:
        self._layouts: dict[str, tuple[int, _Layout, float, int, int]] = {}
        self._related: dict[tuple[str, float, tuple[int, ...]], frozenset[str]] = {}
        self._imports: dict[tuple[str, bytes], tuple[ImportRef, ...]] = {}
        self._on_disk: dict[str, tuple[tuple[float, tuple[int, ...]], Resolved]] = {}

    def _layout_of(self, ns: Namespace) -> _Layout:
        """The layout of `ns` as indexed now; while a cold index is still
        adding files (`bulk`), one up to `BULK_LAYOUT_SECONDS` old and made
        from at least 1 / `BULK_LAYOUT_GROWTH` of the definitions (it takes
        0.1 s on the kernel's 56,000 files, and every batch changes the
        index: rebuilt per query, it added that to each answer and took a
        core from the index). A change that leaves the same files indexed
        (an edit: the kernel's 56,000 paths took 22 ms) keeps the layout, under
        the index's new generation."""
        cached = self._layouts.get(ns.root)
        now = time.monotonic()
        index = ns.index
        if cached is None or (
            cached[0] != index.generation
            and not (
                index.bulk
                and now - cached[2] < BULK_LAYOUT_SECONDS
                and len(index) <= BULK_LAYOUT_GROWTH * cached[3]
            )
        ):
            same_files = cached is not None and cached[4] == index.files_generation
            layout = cached[1] if cached is not None and same_files else _layout(index.files)
            cached = (index.generation, layout, now, len(index), index.files_generation)
            self._layouts[ns.root] = cached
        return cached[1]

    def _layout_generation(self, ns: Namespace) -> int:
        self._layout_of(ns)
        return self._layouts[ns.root][0]

    def related_files(
        self, open_file: str | None, namespaces: Sequence[Namespace], source: bytes | None = None
    ) -> frozenset[str]:
        """Absolute paths of the files `open_file` imports (two steps deep).

        `source` is the open buffer's text when it differs from the disk.
        """
        if open_file is None:
            return frozenset()
        language = _language_of(open_file)
        if language is None or not reads_imports(language):
            # No import is read: nothing to lay out (a C file open in the
            # kernel made the layout of its 56,000 paths again after every
            # file added or removed, 40 ms, to resolve nothing).
            return frozenset()
        try:
            stamp = os.stat(open_file).st_mtime if source is None else -float(hash(source))
        except OSError:
            stamp = 0.0
        # The imports resolve against the layouts: while one is reused, so
        # is the answer.
        layouts = tuple(self._layout_generation(ns) for ns in namespaces)
        key = (open_file, stamp, layouts)
        found = self._related.get(key)
        if found is None:
            if len(self._related) > 256:
                self._related.clear()
            found = frozenset(self._walk(open_file, namespaces, source))
            self._related[key] = found
        return found

    def _walk(
        self, open_file: str, namespaces: Sequence[Namespace], source: bytes | None
    ) -> set[str]:
        seen: set[str] = {open_file}
        frontier = [open_file]
        for _ in range(FOLLOW_DEPTH):
            nxt: list[str] = []
            for path in frontier:
                if path != open_file and _language_of(path) in _NO_REEXPORTS:
                    continue
                text = source if path == open_file else None
                for target in self._targets(path, namespaces, text):
                    if target not in seen:
                        seen.add(target)
                        nxt.append(target)
            frontier = nxt
        seen.discard(open_file)
        return seen

    def _targets(
        self, path: str, namespaces: Sequence[Namespace], source: bytes | None
    ) -> list[str]:
        found = (
            self.on_disk(path, namespaces)
            if source is None
            else self.resolved(path, namespaces, source)
        )
        return [t for _, targets in found for t in targets]

    def on_disk(self, path: str, namespaces: Sequence[Namespace]) -> Resolved:
        """`resolved` of the file `path` as it is on disk, kept while its
        modification time and the files indexed stand (an edit elsewhere
        resolves nothing differently): what the members and re-exports
        hints read of the files around the open one, at every query after
        a change to the index."""
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            return []
        stamp = (mtime, tuple(ns.index.files_generation for ns in namespaces))
        cached = self._on_disk.get(path)
        if cached is None or cached[0] != stamp:
            if len(self._on_disk) >= ON_DISK_CACHED:
                self._on_disk.clear()
            cached = self._on_disk[path] = (stamp, self.resolved(path, namespaces))
        return cached[1]

    def resolved(
        self, path: str, namespaces: Sequence[Namespace], source: bytes | None = None
    ) -> Resolved:
        """Each import of the file `path` (absolute; `source` its text when
        it differs from the disk), with the absolute paths it resolves to."""
        spec = language_for_path(path)
        if spec is None:
            return []
        if source is None:
            try:
                source = read_source(path, MAX_READ_BYTES)
            except (OSError, SkippedFile):
                return []
        elif len(source) > MAX_READ_BYTES:
            # An unsaved buffer too large to read from disk: parsed here it
            # held the interpreter lock for seconds (a 10 MB buffer: 4 s).
            return []
        key = (spec.name, hashlib.blake2b(source, digest_size=16).digest())
        refs = self._imports.get(key)
        if refs is None:
            if len(self._imports) >= IMPORTS_CACHED:
                self._imports.clear()
            refs = self._imports[key] = tuple(extract_imports(source, spec))
        if not refs:
            return []
        out: Resolved = [(ref, []) for ref in refs]
        for ns in namespaces:
            layout = self._layout_of(ns)
            rel = os.path.relpath(path, ns.root).replace(os.sep, "/")
            inside = not rel.startswith("../")
            for ref, targets in out:
                for target in _resolve(ref, spec.name, rel if inside else None, layout):
                    targets.append(ns.file(target))
        return out


def _language_of(path: str) -> str | None:
    spec = language_for_path(path)
    return None if spec is None else spec.name


def _resolve(ref: ImportRef, language: str, rel: str | None, layout: _Layout) -> list[str]:
    if language == "python":
        return _resolve_python(ref, rel, layout)
    if language == "go":
        return _resolve_go(ref.module.strip("/"), layout)
    if language == "rust":
        return _resolve_rust(ref, rel, layout)
    return _resolve_ecmascript(ref, rel, layout)


def _resolve_go(path: str, layout: _Layout) -> list[str]:
    """The longest tail of the import path that is an indexed folder
    (`example.com/m/internal/store` -> `internal/store`); a one-part tail
    only when the path has one part (`fmt`), so `net/http` does not land on
    any folder called `http`."""
    parts = [p for p in path.split("/") if p]
    for i in range(len(parts)):
        tail = parts[i:]
        if len(tail) == 1 and len(parts) > 1:
            break
        found = layout.by_folder.get("/".join(tail))
        if found:
            return [f for f in found if f.endswith(".go")]
    return []


def _resolve_python(ref: ImportRef, rel: str | None, layout: _Layout) -> list[str]:
    if ref.level == 0:
        found = list(layout.by_module.get(ref.module, []))
        for name in ref.names:
            found.extend(layout.by_module.get(f"{ref.module}.{name}", []))
        return found
    if rel is None:
        return []
    folder = rel.split("/")[:-1]
    if ref.level - 1 > len(folder):
        return []
    base = folder[: len(folder) - (ref.level - 1)]
    module = [*base, *(ref.module.split(".") if ref.module else [])]
    candidates = ["/".join(module) + ".py", "/".join([*module, "__init__.py"])]
    candidates += ["/".join([*module, name]) + ".py" for name in ref.names]
    candidates += ["/".join([*module, name, "__init__.py"]) for name in ref.names]
    return [c.lstrip("/") for c in candidates if c.lstrip("/") in layout.files]


_RUST_ROOTS = ("lib.rs", "main.rs")


def _resolve_rust(ref: ImportRef, rel: str | None, layout: _Layout) -> list[str]:
    """A `use` path's module file: `crate::` from the folder holding the
    crate's `lib.rs`/`main.rs`, `self::` and a bare first part from the
    file's own module folder, each `super::` one folder up; the module
    `a::b` is `a/b.rs` or `a/b/mod.rs` there. Other crates' paths resolve
    to nothing."""
    if rel is None:
        return []
    folder, _, file = rel.rpartition("/")
    stem = file.removesuffix(".rs")
    here = folder.split("/") if folder else []
    if stem not in ("mod", "lib", "main"):
        here = [*here, stem]
    parts = [p for p in ref.module.split("::") if p]
    base = here
    if parts[:1] == ["crate"]:
        while base and not any("/".join([*base, r]) in layout.files for r in _RUST_ROOTS):
            base = base[:-1]
        parts = parts[1:]
    else:
        if parts[:1] == ["self"]:
            parts = parts[1:]
        while parts[:1] == ["super"]:
            base, parts = base[:-1], parts[1:]
    module = [*base, *parts]
    if parts:
        candidates = ["/".join(module) + ".rs", "/".join([*module, "mod.rs"])]
    else:
        candidates = ["/".join([*module, r]) for r in ("mod.rs", *_RUST_ROOTS)]
        candidates.append("/".join(module) + ".rs")
    return [c for c in candidates if c in layout.files]


def _resolve_ecmascript(ref: ImportRef, rel: str | None, layout: _Layout) -> list[str]:
    if rel is None or not ref.module.startswith("."):
        return []
    folder = os.path.dirname(rel)
    target = os.path.normpath(os.path.join(folder, ref.module)).replace(os.sep, "/")
    if target.startswith(".."):
        return []
    candidates = [target, *(target + s for s in _JS_SUFFIXES)]
    candidates += [f"{target}/index{s}" for s in _JS_SUFFIXES]
    # `./x.js` written for a `.ts` source (TypeScript's ESM convention)
    stem, ext = os.path.splitext(target)
    if ext in (".js", ".mjs", ".cjs"):
        candidates += [stem + s for s in (".ts", ".tsx", ".mts", ".cts")]
    return [c for c in candidates if c in layout.files]
