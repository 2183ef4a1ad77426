"""A namespace: one independently indexed source of definitions.

A workspace folder and the index of the files under it, or a folder of
the project's dependencies (a virtualenv's site-packages, `node_modules`),
whose definitions rank after the workspace's (`RankContext.dependencies`). The live
workspace keeps one per folder the client opened; the query path
(`search`) answers over a list of them, the CLI and the evaluation over
the folders they were given.
"""

from __future__ import annotations

from dataclasses import dataclass

from nearsym.core.model import file_path
from nearsym.index.store import SymbolIndex


@dataclass(slots=True)
class Namespace:
    """One independently indexed source of definitions: a workspace folder
    or a dependency folder."""

    root: str
    index: SymbolIndex
    dependency: bool = False
    """A folder of the project's dependencies, not of the workspace."""

    def file(self, rel: str) -> str:
        """The OS path of the file `rel` (relative, `/`-separated) of this
        folder."""
        return file_path(self.root, rel)
