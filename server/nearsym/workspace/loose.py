"""Files outside every workspace folder: where their project is, and which
neighbours may be read.

Editors often start a server with no workspace folder (Neovim and eglot on
a file outside any project, or with `root_dir` unset), or open a scratch
file beside the project. Such a file still gets answers:

- with no workspace folder at all, its project root is found as editors
  find it: the nearest folder upwards holding a project marker (`.git`,
  `pyproject.toml`, `package.json`, `go.mod`, `Cargo.toml`, ...), and that
  folder is indexed like a workspace folder;
- otherwise (no marker, or the file lies beside the workspace folders) the
  file is answered from its own text, with the other source files of its
  own folder (not below it, at most `NEIGHBOURS`) as a *loose* namespace.

Invariant: neither a root nor a loose folder is ever `/`, the home folder,
a folder above the home folder, or a top-level folder (`/tmp`, `/usr`,
`/home`, ...): a file saved straight into one of those is answered from its
own text alone.
"""

from __future__ import annotations

import os

from nearsym.workspace.config import Config
from nearsym.workspace.discovery import SourceFile, indexable

MARKERS = (
    ".git", ".hg", ".svn", "pyproject.toml", "setup.py", "setup.cfg", "package.json",
    "go.mod", "Cargo.toml", "pom.xml", "build.gradle", "build.gradle.kts", "Gemfile",
    "composer.json", "mix.exs", "stack.yaml", "dune-project", "build.zig", "Project.toml",
    "Package.swift", "deno.json", "tsconfig.json",
)  # fmt: skip
"""What marks a project's root, as editors' root markers do (Neovim's
`root_markers`, lspconfig's patterns, VS Code's folder of a `.git`)."""

NEIGHBOURS = 200
"""Source files of a loose folder read at most: enough for a folder of
scripts, bounded for a folder of downloads (each is parsed when the file
is opened, not watched afterwards)."""


def home() -> str:
    return os.path.realpath(os.path.expanduser("~"))


def too_wide(folder: str) -> bool:
    """Whether `folder` must never be indexed as a whole: the filesystem
    root, a top-level folder, the home folder or one of its ancestors."""
    folder = os.path.realpath(folder)
    if os.path.dirname(folder) == folder:  # `/`
        return True
    if os.path.dirname(os.path.dirname(folder)) == os.path.dirname(folder):  # `/tmp`
        return True
    mine = home()
    return folder == mine or mine.startswith(folder.rstrip(os.sep) + os.sep)


def project_root(path: str) -> str | None:
    """The nearest folder above `path` holding a project marker, never one
    that is `too_wide` (the search stops there)."""
    folder = os.path.dirname(os.path.abspath(path))
    while not too_wide(folder):
        if any(os.path.lexists(os.path.join(folder, m)) for m in MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


def neighbours(folder: str, config: Config, skip: str | None = None) -> list[SourceFile]:
    """The source files directly in `folder` that a walk of it would index
    (its ignore rules, links, sizes and languages), at most `NEIGHBOURS`,
    in name order; none when `folder` is `too_wide`."""
    if too_wide(folder):
        return []
    found: list[SourceFile] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if len(found) >= NEIGHBOURS:
            break
        if entry.path == skip or not entry.is_file(follow_symlinks=False):
            continue
        sf = indexable(folder, entry.path, config)
        if sf is not None:
            found.append(sf)
    return found
