"""Workspace discovery: which files of a root are indexed.

Design note
-----------
A depth-first walk with `os.scandir` that prunes as early as it can: folders
excluded by name (version control, dependency and build output folders,
virtual environments), by `.gitignore` (every `.gitignore` on the way down,
plus `.git/info/exclude`, read with pathspec's git-compatible matcher), and by
the `exclude` setting. Symbolic links are not followed unless
`followSymlinks` is set; then only links whose target stays inside the root
are followed, and a folder already visited (by its real path) is never
entered twice, so link loops end.

Files are chosen by language (unknown extensions are skipped, never an
error); the size and binary checks happen when the file is read
(`read_source`), so a file is opened once.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pathspec

from nearsym.extract.languages import LanguageSpec, language_for_path, language_for_shebang
from nearsym.workspace.config import Config

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


class _Ignore:
    """The ignore rules in force in one folder: (base folder, spec) pairs,
    outermost first. Later (deeper) rules override earlier ones, as in git."""

    def __init__(self, rules: tuple[tuple[str, pathspec.GitIgnoreSpec], ...]) -> None:
        self.rules = rules

    def ignored(self, rel: str, is_dir: bool) -> bool:
        verdict = False
        for base, spec in self.rules:
            if base and not rel.startswith(base + "/"):
                continue
            sub = rel[len(base) + 1 :] if base else rel
            result = spec.check_file(sub + "/" if is_dir else sub)
            if result.include is not None:
                verdict = result.include
        return verdict

    def extended(self, base: str, spec: pathspec.GitIgnoreSpec | None) -> _Ignore:
        return self if spec is None else _Ignore((*self.rules, (base, spec)))


def _read_ignore_file(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def _language_by_shebang(path: str) -> LanguageSpec | None:
    """The language a script without an extension names on its `#!` line."""
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return None
    return language_for_shebang(first)


def _language_of(path: str, config: Config) -> LanguageSpec | None:
    """The language of a file by name (or `#!` line), if the settings index it."""
    spec = language_for_path(path)
    if spec is None and "." not in os.path.basename(path):
        spec = _language_by_shebang(path)
    if spec is not None and config.languages and spec.name not in config.languages:
        return None
    return spec


def _root_rules(root: str, config: Config) -> _Ignore:
    """`.git/info/exclude` and the `exclude` setting: the rules above every
    `.gitignore` of the root."""
    ignore = _Ignore(()).extended(
        "", _read_ignore_file(os.path.join(root, ".git", "info", "exclude"))
    )
    if config.exclude:
        ignore = ignore.extended("", pathspec.GitIgnoreSpec.from_lines(config.exclude))
    return ignore


def _rules_down_to(
    root: str, folders: list[str], config: Config
) -> tuple[_Ignore, str, str] | None:
    """The ignore rules in force inside `root/folders...` (before that
    folder's own `.gitignore`), its absolute and relative path; None when a
    walk would never enter it."""
    rules = _root_rules(root, config)
    folder, rel_folder = root, ""
    for part in folders:
        rules = rules.extended(rel_folder, _read_ignore_file(os.path.join(folder, ".gitignore")))
        rel_folder = f"{rel_folder}/{part}" if rel_folder else part
        folder = os.path.join(folder, part)
        if part in EXCLUDED_DIRS or rules.ignored(rel_folder, True):
            return None
        if os.path.islink(folder) and not config.follow_symlinks:
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
    if rel.startswith("..") or os.path.isabs(rel):
        return None
    parts = rel.split(os.sep)
    chain = _rules_down_to(root, parts[:-1], config)
    if chain is None:
        return None
    rules, folder, rel_folder = chain
    rules = rules.extended(rel_folder, _read_ignore_file(os.path.join(folder, ".gitignore")))
    rel = "/".join(parts)
    if rules.ignored(rel, False):
        return None
    if must_exist and not os.path.isfile(path):
        return None
    if os.path.islink(path):
        real = os.path.realpath(path)
        if not config.follow_symlinks or not real.startswith(os.path.realpath(root) + os.sep):
            return None
    spec = _language_of(path, config)
    return SourceFile(path, rel, spec) if spec is not None else None


def _is_venv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def discover(
    root: str,
    config: Config,
    on_skip: Callable[[str, str], None] | None = None,
    under: str | None = None,
) -> Iterator[SourceFile]:
    """Yield every indexable source file under `root`, in walk order; with
    `under` (a folder inside root), only the files below that folder, judged
    by the same rules as a walk from the root.

    `on_skip(path, reason)` hears about folders and files passed over for a
    reason a person may want to know (link loops, unreadable folders).
    """
    root = os.path.abspath(root)
    real_root = os.path.realpath(root)
    start = os.path.abspath(under) if under else root
    rel_start = os.path.relpath(start, root)
    if rel_start == ".":
        chain: tuple[_Ignore, str, str] | None = (_root_rules(root, config), root, "")
    elif rel_start.startswith("..") or not os.path.isdir(start):
        return
    else:
        chain = _rules_down_to(root, rel_start.split(os.sep), config)
    if chain is None:
        return
    seen_dirs: set[str] = {real_root, os.path.realpath(start)}
    stack: list[tuple[str, str, _Ignore]] = [(chain[1], chain[2], chain[0])]

    def skip(path: str, reason: str) -> None:
        log.info("skipped %s: %s", path, reason)
        if on_skip is not None:
            on_skip(path, reason)

    while stack:
        folder, rel_folder, rules = stack.pop()
        rules = rules.extended(rel_folder, _read_ignore_file(os.path.join(folder, ".gitignore")))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as error:
            skip(folder, f"cannot list folder ({error.strerror})")
            continue
        subfolders: list[tuple[str, str, _Ignore]] = []
        for entry in entries:
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            try:
                is_link = entry.is_symlink()
                if is_link and not config.follow_symlinks:
                    continue
                st = entry.stat(follow_symlinks=True)
            except OSError:
                continue  # dangling link, or gone since the listing
            is_dir = stat.S_ISDIR(st.st_mode)
            if is_dir:
                if entry.name in EXCLUDED_DIRS or rules.ignored(rel, True):
                    continue
                real = os.path.realpath(entry.path)
                if is_link and not (real == real_root or real.startswith(real_root + os.sep)):
                    skip(entry.path, "link leads out of the workspace folder")
                    continue
                if real in seen_dirs:
                    skip(entry.path, "folder already walked (link loop)")
                    continue
                if _is_venv(entry.path):
                    continue
                seen_dirs.add(real)
                subfolders.append((entry.path, rel, rules))
            elif stat.S_ISREG(st.st_mode):
                spec = _language_of(entry.path, config)
                if spec is None or rules.ignored(rel, False):
                    continue
                if is_link:
                    real = os.path.realpath(entry.path)
                    if not real.startswith(real_root + os.sep):
                        skip(entry.path, "link leads out of the workspace folder")
                        continue
                yield SourceFile(entry.path, rel, spec, st.st_size, st.st_mtime_ns)
        stack.extend(reversed(subfolders))


class SkippedFile(Exception):
    """A file that exists but is not indexed, with the reason."""


def read_source(path: str, max_bytes: int) -> bytes:
    """The bytes of a source file.

    Raises SkippedFile (too large, binary) or OSError (gone, unreadable).
    """
    return read_source_stat(path, max_bytes)[0]


def read_source_stat(path: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """`read_source`, with the file's stat as it was opened."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        size = st.st_size
        if size > max_bytes:
            raise SkippedFile(f"{size} bytes, over the {max_bytes}-byte cap")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise SkippedFile(f"over the {max_bytes}-byte cap")
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
