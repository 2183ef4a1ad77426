"""Workspace discovery: which files of a root are indexed.

Design note
-----------
A depth-first walk with `os.scandir` that prunes as early as it can: folders
excluded by name (version control, dependency and build output folders,
virtual environments), by ignore rules (`.gitignore`s, `.git/info/exclude`
and git's global excludes file inside a git repository, `.ignore`s
everywhere, and the `exclude` setting: see `workspace.ignore`). Symbolic
links are not followed unless `followSymlinks` is set; then only links
whose target stays inside the root are followed, and a folder already
visited (by its real path) is never entered twice, so link loops end. The
link rule is one function (`link_reason`), asked by the walk, by
`indexable` (disk events) and so by buffers.

Files are chosen by language (unknown extensions are skipped, never an
error); the size and binary checks happen when the file is read
(`read_source`, through `files.read_regular`: never a FIFO or a device),
so a file is opened once. A walk can fill a `WalkReport`: what it kept and
what each ignore rule dropped, for the person when that is nearly
everything.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass

from nearsym.extract.languages import (
    LanguageSpec,
    language_for_name,
    language_for_path,
    language_for_shebang,
)
from nearsym.index.files import SkippedFile, read_regular
from nearsym.workspace.config import Config
from nearsym.workspace.ignore import Rules, WalkReport, rules_above

__all__ = [
    "SkippedFile",
    "SourceFile",
    "WalkReport",
    "discover",
    "indexable",
    "language_of",
    "read_source",
]

log = logging.getLogger(__name__)

EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".jj",
        "node_modules", "bower_components",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
        ".tox", ".nox", ".venv", "venv", ".eggs",
        ".idea", ".vscode",
        "build", "dist", "target", "out", ".next", ".nuxt", ".cache",
    }
)  # fmt: skip
"""Folder names never walked: tools' state and build output, not source."""

MINIFIED_MIN_BYTES = 50_000
MINIFIED_LINE = 1000
"""A file over 50 kB whose lines average over 1,000 bytes is minified or
generated data (a bundle, a one-line JSON-in-JS blob): its names are not
what a person types, and parsing it is the slowest thing the walk would do.
Hand-written code averages 30 to 40 bytes a line."""

BINARY_SNIFF_BYTES = 8192
"""A NUL byte in the first 8 KiB marks a file as binary (git's own test)."""


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file chosen for indexing: absolute path, root-relative `/` path."""

    path: str
    rel: str
    language: LanguageSpec
    size: int = -1
    """Size and mtime as the walk saw them (-1 / 0 when not walked): the
    cache's key."""
    mtime_ns: int = 0


def _language_by_shebang(path: str) -> LanguageSpec | None:
    """The language a script without an extension names on its `#!` line."""
    try:
        first = read_regular(path, 256, cut=True)[0].split(b"\n", 1)[0]
    except (OSError, SkippedFile):
        return None
    return language_for_shebang(first)


def language_of(path: str, config: Config) -> LanguageSpec | None:
    """The language of a file by name (or `#!` line), if the settings index it."""
    return _indexed_language(language_for_path(path), path, os.path.basename(path), config)


def _indexed_language(
    by_name: LanguageSpec | None, path: str, name: str, config: Config
) -> LanguageSpec | None:
    """`language_of`, given the language `name` (the file's own name) gives."""
    spec = by_name
    if spec is None and "." not in name:
        spec = _language_by_shebang(path)
    if spec is not None and config.languages and spec.name not in config.languages:
        return None
    return spec


def link_reason(real_root: str, path: str, rel: str, config: Config) -> str | None:
    """Why the links on the way from the root to `path` (root-relative
    `rel`) keep it out, or None: without `followSymlinks` any link does;
    with it, one that leads out of the root (by real path) does.

    Invariant: the one link rule, for the walk, disk events and buffers."""
    real = os.path.realpath(path)
    if config.follow_symlinks:
        if real == real_root or real.startswith(real_root + os.sep):
            return None
        return "link leads out of the workspace folder"
    if real == os.path.join(real_root, *rel.split("/")):
        return None
    return "behind a symbolic link"


def _rules_down_to(
    root: str, folders: list[str], config: Config, problems: list[str]
) -> tuple[Rules, str, str] | None:
    """The ignore rules in force inside `root/folders...` (before that
    folder's own ignore files), its absolute and relative path; None when a
    walk would never enter it."""
    rules = rules_above(root, config.exclude, config.require_git, problems)
    folder, rel_folder = root, ""
    for part in folders:
        rules = rules.enter(folder, rel_folder, None, problems)
        rel_folder = f"{rel_folder}/{part}" if rel_folder else part
        folder = os.path.join(folder, part)
        if part in EXCLUDED_DIRS or rules.verdict(rel_folder, True) is not None:
            return None
        if _is_venv(folder):
            return None
    return rules, folder, rel_folder


def indexable(root: str, path: str, config: Config, must_exist: bool = True) -> SourceFile | None:
    """The SourceFile for `path` when `discover(root)` would yield it now;
    None when it is gone, excluded, ignored, behind a link, or not source.
    With `must_exist=False`, judges a file not saved yet (an open buffer) by
    its name and the rules alone.

    Invariant: agrees with `discover` file by file (the live-update model
    test checks it), so a file changed on disk is indexed exactly when a
    fresh walk would index it.
    """
    root = os.path.abspath(root)
    rel = os.path.relpath(path, root)
    if rel.startswith("..") or os.path.isabs(rel) or rel == ".":
        return None
    parts = rel.split(os.sep)
    problems: list[str] = []
    chain = _rules_down_to(root, parts[:-1], config, problems)
    if chain is None:
        return None
    rules, folder, rel_folder = chain
    rules = rules.enter(folder, rel_folder, None, problems)
    rel = "/".join(parts)
    if rules.verdict(rel, False) is not None:
        return None
    if must_exist and not os.path.isfile(path):
        return None
    if link_reason(os.path.realpath(root), path, rel, config) is not None:
        return None
    spec = language_of(path, config)
    return SourceFile(path, rel, spec) if spec is not None else None


VENV_MARKER = "pyvenv.cfg"
"""The file that makes a folder a virtual environment (not walked)."""


def _is_venv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, VENV_MARKER))


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def discover(
    root: str,
    config: Config,
    on_skip: Callable[[str, str], None] | None = None,
    under: str | None = None,
    report: WalkReport | None = None,
    known: Container[str] = (),
) -> Iterator[SourceFile]:
    """Yield every indexable source file under `root`, in walk order; with
    `under` (a folder inside root), only the files below that folder, judged
    by the same rules as a walk from the root. A file whose relative path
    is in `known` (the caller has it) is yielded without its size and time
    (-1, 0), which cost a system call each: a re-walk of the Linux kernel
    spent half its time on them.

    `on_skip(path, reason)` hears about folders and files passed over for a
    reason a person may want to know (link loops, unreadable folders);
    `report` counts what was kept and what each ignore rule dropped.
    """
    root = os.path.abspath(root)
    real_root = os.path.realpath(root)
    report = report if report is not None else WalkReport()
    problems = report.problems
    start = os.path.abspath(under) if under else root
    rel_start = os.path.relpath(start, root)
    if rel_start == ".":
        chain: tuple[Rules, str, str] | None = (
            rules_above(root, config.exclude, config.require_git, problems),
            root,
            "",
        )
    elif rel_start.startswith("..") or not os.path.isdir(start):
        return
    else:
        rel_start = rel_start.replace(os.sep, "/")
        if link_reason(real_root, start, rel_start, config) is not None:
            return
        chain = _rules_down_to(root, rel_start.split("/"), config, problems)
    if chain is None:
        return
    # Without `followSymlinks` no link is entered, so no folder can be
    # reached twice; with it, folders are told apart by device and inode
    # (which a bind mount's loop does not fool either).
    seen_dirs: set[tuple[int, int]] = set()
    if config.follow_symlinks:
        try:
            seen_dirs.update(_identity(os.stat(p)) for p in (root, start))
        except OSError:
            return
    stack: list[tuple[str, str, Rules]] = [(chain[1], chain[2], chain[0])]

    def skip(path: str, reason: str) -> None:
        log.info("skipped %s: %s", path, reason)
        if on_skip is not None:
            on_skip(path, reason)

    while stack:
        folder, rel_folder, rules = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as error:
            skip(folder, f"cannot list folder ({error.strerror})")
            continue
        names = {e.name for e in entries}
        if VENV_MARKER in names and folder != start and _is_venv(folder):
            continue  # a virtual environment's installed packages
        rules = rules.enter(folder, rel_folder, names, problems)
        subfolders: list[tuple[str, str, Rules]] = []
        for entry in entries:
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            try:
                is_link = entry.is_symlink()
                if is_link and not config.follow_symlinks:
                    continue
                # The listing's file types answer these without a system
                # call (a link's target is looked up); only files that will
                # be indexed are stat'ed, for their size and time.
                is_dir = entry.is_dir()
                if not is_dir and not entry.is_file():
                    continue  # a socket, a device, a dangling link
            except OSError:
                continue  # gone since the listing
            if is_dir:
                if entry.name in EXCLUDED_DIRS:
                    continue
                rule = rules.verdict(rel, True)
                if rule is not None:
                    report.drop(rule, True, False)
                    continue
                if is_link and (why := link_reason(real_root, entry.path, rel, config)):
                    skip(entry.path, why)
                    continue
                if config.follow_symlinks:
                    try:
                        identity = _identity(entry.stat())
                    except OSError:
                        continue
                    if identity in seen_dirs:
                        skip(entry.path, "folder already walked (link loop)")
                        continue
                    seen_dirs.add(identity)
                subfolders.append((entry.path, rel, rules))
            else:
                named = language_for_name(entry.name)
                rule = rules.verdict(rel, False)
                if rule is not None:
                    report.drop(rule, False, named is not None)
                    continue
                spec = _indexed_language(named, entry.path, entry.name, config)
                if spec is None:
                    continue
                if is_link and (why := link_reason(real_root, entry.path, rel, config)):
                    skip(entry.path, why)
                    continue
                if rel in known:
                    report.kept += 1
                    yield SourceFile(entry.path, rel, spec)
                    continue
                try:
                    st = entry.stat()
                except OSError:
                    continue
                report.kept += 1
                yield SourceFile(entry.path, rel, spec, st.st_size, st.st_mtime_ns)
        stack.extend(reversed(subfolders))


def read_source(path: str, max_bytes: int) -> bytes:
    """The bytes of a source file.

    Raises SkippedFile (too large, binary, not a regular file) or OSError
    (gone, unreadable).
    """
    return read_source_stat(path, max_bytes)[0]


def read_source_stat(path: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """`read_source`, with the file's stat as it was opened."""
    data, st = read_regular(path, max_bytes)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise SkippedFile("binary (NUL byte)")
    if len(data) > MINIFIED_MIN_BYTES and len(data) / (data.count(b"\n") + 1) > MINIFIED_LINE:
        raise SkippedFile("minified (average line over 1,000 characters)")
    return data, st


def source_file_for(root: str, path: str) -> SourceFile | None:
    """The SourceFile for an absolute `path` under `root`, or None when the
    language is unknown or the path is outside the root."""
    spec = language_for_path(path)
    if spec is None and "." not in os.path.basename(path):
        spec = _language_by_shebang(path)
    rel = os.path.relpath(path, root)
    if spec is None or rel.startswith("..") or os.path.isabs(rel):
        return None
    return SourceFile(path, rel.replace(os.sep, "/"), spec)
