"""Git repositories as ignore rules see them: where a repository starts,
and which global excludes file git's configuration names.

A folder is inside a repository when it or a folder above it holds `.git`
(a folder, or a file saying `gitdir: PATH` for worktrees and submodules),
as ripgrep decides it. The global excludes file is found by reading git's
configuration files, not by running git: the server may run where git is
not installed, and a subprocess per walk would cost more than the walk.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from nearsym.index.files import SkippedFile, read_regular

MAX_CONFIG_BYTES = 1 << 20
"""A git configuration file is read up to 1 MiB."""


@dataclass(frozen=True, slots=True)
class Repository:
    top: str
    """The working tree's top folder (where `.git` is)."""
    common_dir: str
    """Where `info/exclude` and `config` live: the `.git` folder, or for a
    linked worktree or submodule (a `.git` file), the folder it names."""


def repository_at(folder: str) -> Repository | None:
    """The repository whose top is `folder`: a `.git` folder, or a `.git`
    file saying `gitdir: PATH` (worktrees, submodules)."""
    dot = os.path.join(folder, ".git")
    try:
        st = os.stat(dot)
    except OSError:
        return None
    if os.path.isdir(dot):
        return Repository(folder, dot)
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        head = read_regular(dot, 4096, cut=True)[0].decode("utf-8", "replace")
    except (OSError, SkippedFile):
        return None
    if not head.startswith("gitdir:"):
        return None
    git_dir = os.path.join(folder, head[len("gitdir:") :].strip())
    common = git_dir
    try:
        named = read_regular(os.path.join(git_dir, "commondir"), 4096, cut=True)[0]
        common = os.path.normpath(os.path.join(git_dir, named.decode("utf-8", "replace").strip()))
    except (OSError, SkippedFile):
        pass
    return Repository(folder, common)


def find_repository(folder: str) -> Repository | None:
    """The repository `folder` is in: the nearest `.git` at or above it."""
    at = os.path.abspath(folder)
    while True:
        repo = repository_at(at)
        if repo is not None:
            return repo
        parent = os.path.dirname(at)
        if parent == at:
            return None
        at = parent


def _config_values(path: str, section: str, key: str) -> list[str]:
    """Every value of `section.key` in the git configuration file `path`
    (a small subset of git's syntax: sections, quoting, escapes,
    comments; no includes)."""
    try:
        data = read_regular(path, MAX_CONFIG_BYTES, cut=True)[0]
    except (OSError, SkippedFile):
        return []
    values: list[str] = []
    current = ""
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line.startswith("["):
            end = line.find("]")
            header = line[1:end] if end != -1 else ""
            current = header.split()[0].lower() if header.split() else ""
            if '"' in header:
                current = ""  # a subsection ([core "x"]) is not the section
            line = line[end + 1 :].strip() if end != -1 else ""
            if not line:
                continue
        if current != section or not line or line[0] in "#;":
            continue
        name, eq, rest = line.partition("=")
        if name.strip().lower() != key or not eq:
            continue
        values.append(_config_value(rest))
    return values


def _config_value(raw: str) -> str:
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == '"':
            quoted = not quoted
        elif c == "\\" and i + 1 < len(raw):
            i += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(raw[i], raw[i]))
        elif c in "#;" and not quoted:
            break
        else:
            out.append(c)
        i += 1
    return "".join(out).strip()


def excludes_file(repo: Repository | None) -> str:
    """The global excludes file: `core.excludesFile` from git's system,
    global and repository configuration (the last one set wins), else
    `$XDG_CONFIG_HOME/git/ignore`."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files: list[str] = []
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        files.append(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    global_file = os.environ.get("GIT_CONFIG_GLOBAL")
    if global_file:
        files.append(global_file)
    else:
        files += [os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    if repo is not None:
        files.append(os.path.join(repo.common_dir, "config"))
    value = ""
    for path in files:
        found = _config_values(path, "core", "excludesfile")
        if found:
            value = found[-1]
    if not value:
        return os.path.join(xdg, "git", "ignore")
    value = os.path.expanduser(value)
    if repo is not None and not os.path.isabs(value):
        value = os.path.join(repo.top, value)
    return value
