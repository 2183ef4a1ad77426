"""The names packages re-export: what a package's index file imports.

Design note
-----------
A package's public names are the ones its index file (Python's
`__init__.py`, a TS/JS folder's `index.ts`/`index.js`, a Rust module's
`mod.rs` or crate's `lib.rs`) imports from its modules: `from .app import
Flask`, `export { map } from './operators/map'`, `export * from './types'`,
`pub use self::store::Store;`. Among name ties the ranking puts those
definitions first (`RankPolicy.exported`): the `Flask` of `flask/app.py`
is the one people mean, not a test's helper of that name.

Each index file's imports are resolved to files (`imports.Relations`); an
import whose target is itself an index file is followed through it (up to
`FOLLOW_DEPTH` index files: `twisted/__init__.py` re-exporting what a
subpackage's `__init__.py` re-exports). A Python import with no names
(`import a.b`) exports nothing; a JS/TS one with none (`export * from`)
exports every top-level name of its target (`*`), and so does a Rust
`pub use a::*`.

Read per namespace, cached until the index changes; the index files
are listed again only when a file enters or leaves the index (the Linux
kernel has none among its 56,000 paths, which were read after every edit:
16 ms), and each one's imports are kept by `Relations.on_disk`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from nearsym.index.namespace import Namespace
from nearsym.workspace.imports import Relations

INDEX_FILES = frozenset(
    {"__init__.py", "__init__.pyi"}
    | {f"index.{ext}" for ext in ("ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts")}
    | {"mod.rs", "lib.rs"}
)
FOLLOW_DEPTH = 3
"""Index files followed from one import (package, subpackage, its own)."""


class Reexports:
    """The re-exported (file, name) pairs of some namespaces."""

    def __init__(self, relations: Relations) -> None:
        self.relations = relations
        self._listed: dict[str, tuple[int, list[str]]] = {}
        """Each namespace's index files (absolute paths), by its root, with
        the `files_generation` they were listed at."""
        self._answer: tuple[tuple[object, ...], frozenset[tuple[str, str]]] | None = None

    def of(self, namespaces: Sequence[Namespace]) -> frozenset[tuple[str, str]]:
        """(absolute path, name) for each top-level name a package's index
        file re-exports from the file defining it; (path, `*`) for all of
        a file's (`rank.WorkspaceHints.exported`)."""
        key = tuple((ns.root, ns.index.generation) for ns in namespaces)
        if self._answer is not None and self._answer[0] == key:
            return self._answer[1]
        found = frozenset(self._compute(namespaces))
        self._answer = (key, found)
        return found

    def _index_files(self, ns: Namespace) -> list[str]:
        listed = self._listed.get(ns.root)
        if listed is None or listed[0] != ns.index.files_generation:
            found = [ns.file(r) for r in ns.index.files if r.rsplit("/", 1)[-1] in INDEX_FILES]
            listed = self._listed[ns.root] = (ns.index.files_generation, found)
        return listed[1]

    def _compute(self, namespaces: Sequence[Namespace]) -> set[tuple[str, str]]:
        out: set[tuple[str, str]] = set()
        for path in [p for ns in namespaces for p in self._index_files(ns)]:
            self._export(path, None, namespaces, FOLLOW_DEPTH, out, set())
        return out

    def _export(
        self,
        path: str,
        wanted: str | None,
        namespaces: Sequence[Namespace],
        depth: int,
        out: set[tuple[str, str]],
        seen: set[tuple[str, str | None]],
    ) -> None:
        """What index file `path` exports (only `wanted`, unless None),
        added to `out` as defined where it is defined."""
        if (path, wanted) in seen or depth <= 0:
            return
        seen.add((path, wanted))
        python = path.endswith((".py", ".pyi"))
        for ref, targets in self.relations.on_disk(path, namespaces):
            names = ref.names if ref.names or python else ("*",)
            for name in names:
                if wanted is not None and name not in (wanted, "*"):
                    continue
                exported = wanted if name == "*" and wanted is not None else name
                for target in targets:
                    if os.path.basename(target) in INDEX_FILES:
                        further = None if exported == "*" else exported
                        self._export(target, further, namespaces, depth - 1, out, seen)
                    else:
                        out.add((target, exported))
