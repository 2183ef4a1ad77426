"""A namespace: one independently indexed source of definitions.

A workspace folder and the index of the files under it. The live
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
    """One independently indexed source of definitions: a workspace folder."""

    root: str
    index: SymbolIndex

    def file(self, rel: str) -> str:
        """The OS path of the file `rel` (relative, `/`-separated) of this
        folder."""
        return file_path(self.root, rel)
