"""The project's dependencies as extra folders to index (`dependencies`
setting, or a query's trailing `**`).

Which folders: with the setting `"on"`, each workspace folder's
environment, found by convention rather than by asking a tool:

- a virtualenv directly in the folder (`.venv`, `venv`, or any folder
  holding `pyvenv.cfg`): its `lib/python3.*/site-packages` (or Windows'
  `Lib/site-packages`);
- the folder's `node_modules`;
- the Go module cache's folder of each module its `go.mod` requires
  (`$GOMODCACHE`, else `$GOPATH/pkg/mod`, else `~/go/pkg/mod`; a path's
  capitals written `!` and the lower-case letter, as the cache does);
- Cargo's registry sources of each registry package its `Cargo.lock`
  names (`$CARGO_HOME/registry/src/*/NAME-VERSION`, else `~/.cargo`).

With a list of paths, exactly those folders (relative ones read from the
workspace folder). Not handled yet: the virtualenv of the editor's Python
outside the workspace (name it in the list), `replace` directives of a
`go.mod`, a workspace's nested `go.mod` and `Cargo.lock` files.

How they are walked (`walk_dependency`): the workspace walk skips these
very folders (`discovery.EXCLUDED_DIRS`, and every virtualenv) and applies
the workspace's ignore rules, which usually name them too; a dependency
folder is installed code, so its walk applies no ignore rule and keeps
only sources: no `__pycache__`, no packaging metadata (`*.dist-info`,
`*.egg-info`), no nested `node_modules` (an older copy of a package
already at the top), and in `node_modules` only `.ts`, `.d.ts` and `.js`
files (a package's `.json`, `.md` and maps are not definitions). Links
are not followed (pnpm's real files are under `node_modules/.pnpm`,
walked like any folder).
"""

from __future__ import annotations

import glob
import os
import re
import stat
from collections.abc import Iterator

from nearsym.index.files import SkippedFile, read_regular
from nearsym.workspace.config import Config
from nearsym.workspace.discovery import SourceFile, WalkReport, language_of

VENV_NAMES = (".venv", "venv")
"""The virtualenv folders looked for first; any other folder directly in
the workspace holding `pyvenv.cfg` counts too."""

SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", ".bin", ".cache", ".git", "testdata"})
"""Folders never walked inside a dependency folder (see the module note)."""

MANIFEST_BYTES = 16 << 20
"""The most of a `go.mod` or `Cargo.lock` read (through the one reader of
workspace files: a FIFO or a link to a device in their place is not read)."""

NODE_SUFFIXES = (".ts", ".js", ".mts", ".cts", ".mjs", ".cjs")
"""What is read of `node_modules`: TypeScript (declarations included) and
JavaScript sources."""


def site_packages(venv: str) -> list[str]:
    """The `site-packages` folders of the virtualenv at `venv`."""
    found = sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages")))
    windows = os.path.join(venv, "Lib", "site-packages")
    if os.path.isdir(windows) and windows not in found:
        found.append(windows)
    return [f for f in found if os.path.isdir(f)]


def environment_folders(root: str) -> list[str]:
    """The dependency folders of the workspace folder `root` (the setting
    `"on"`): its virtualenvs' site-packages, then its `node_modules`."""
    venvs: list[str] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        entries = []
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        if entry.name in VENV_NAMES or os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
            venvs.append(entry.path)
    found = [sp for venv in venvs for sp in site_packages(venv)]
    modules = os.path.join(root, "node_modules")
    if os.path.isdir(modules):
        found.append(modules)
    found.extend(go_modules(root))
    found.extend(cargo_crates(root))
    return found


_REQUIRE = re.compile(r"^\s*(?:require\s+)?([^\s()/]+(?:/[^\s()]+)*)\s+(v[^\s]+)")


def go_requires(text: str) -> list[tuple[str, str]]:
    """(module path, version) of every module a `go.mod` requires, in
    order: `require path version` lines and `require ( ... )` blocks."""
    found: list[tuple[str, str]] = []
    block = False
    for line in text.splitlines():
        line = line.split("//", 1)[0].strip()
        if block:
            if line.startswith(")"):
                block = False
            elif m := _REQUIRE.match(line):
                found.append((m.group(1), m.group(2)))
        elif line.startswith("require"):
            rest = line[len("require") :].strip()
            if rest.startswith("("):
                block = True
            elif m := _REQUIRE.match(rest):
                found.append((m.group(1), m.group(2)))
    return found


def go_module_cache() -> str:
    """Where the Go toolchain keeps downloaded modules."""
    cache = os.environ.get("GOMODCACHE")
    if cache:
        return cache
    gopath = os.environ.get("GOPATH", "").split(os.pathsep)[0]
    return os.path.join(gopath or os.path.expanduser("~/go"), "pkg", "mod")


def _escaped(path: str) -> str:
    """A module path as the module cache spells it: `!` before each
    capital, lower-cased (`github.com/BurntSushi` -> `github.com/!burnt!sushi`)."""
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), path)


def go_modules(root: str) -> list[str]:
    """The module cache's folders of the modules `root/go.mod` requires
    (the ones downloaded)."""
    try:
        text = read_regular(os.path.join(root, "go.mod"), MANIFEST_BYTES)[0].decode(
            "utf-8", "replace"
        )
    except (OSError, SkippedFile):
        return []
    cache = go_module_cache()
    folders = (os.path.join(cache, *f"{_escaped(p)}@{v}".split("/")) for p, v in go_requires(text))
    return [f for f in folders if os.path.isdir(f)]


def cargo_crates(root: str) -> list[str]:
    """The registry source folders of the registry packages
    `root/Cargo.lock` names (the ones downloaded)."""
    import tomllib  # here, not at the server's start (1.4 ms): a Cargo project's only

    try:
        data = read_regular(os.path.join(root, "Cargo.lock"), MANIFEST_BYTES)[0]
        lock = tomllib.loads(data.decode("utf-8", "replace"))
    except (OSError, SkippedFile, tomllib.TOMLDecodeError):
        return []
    home = os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")
    registries = sorted(glob.glob(os.path.join(glob.escape(home), "registry", "src", "*")))
    found: list[str] = []
    for package in lock.get("package", []):
        if not str(package.get("source", "")).startswith("registry+"):
            continue
        name = f"{package.get('name')}-{package.get('version')}"
        found.extend(r for r in (os.path.join(reg, name) for reg in registries) if os.path.isdir(r))
    return found


def dependency_folders(roots: list[str], setting: str | tuple[str, ...]) -> list[str]:
    """The folders to index as dependencies, each once, for the workspace
    folders `roots` and the `dependencies` setting; `"off"` asks the
    environment (`"on"`'s folders): the caller decides whether to use them
    (a query's `**`)."""
    found: list[str] = []
    if isinstance(setting, tuple):
        for path in setting:
            path = os.path.expanduser(path)
            if os.path.isabs(path):
                found.append(os.path.normpath(path))
            else:
                found.extend(os.path.normpath(os.path.join(r, path)) for r in roots)
    else:
        for root in roots:
            found.extend(environment_folders(root))
    return [f for f in dict.fromkeys(found) if os.path.isdir(f)]


def walk_dependency(root: str, config: Config, report: WalkReport) -> Iterator[SourceFile]:
    """Every source file of the dependency folder `root` (see the module
    note), in walk order."""
    node = os.path.basename(root) == "node_modules"
    stack = [(root, "")]
    while stack:
        folder, rel_folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        subfolders: list[tuple[str, str]] = []
        for entry in entries:
            rel = f"{rel_folder}/{entry.name}" if rel_folder else entry.name
            try:
                if entry.is_symlink():
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                name = entry.name
                if name in SKIPPED_DIRS or name.endswith((".dist-info", ".egg-info")):
                    continue
                subfolders.append((entry.path, rel))
            elif stat.S_ISREG(st.st_mode):
                if node and not entry.name.endswith(NODE_SUFFIXES):
                    continue
                if st.st_size > config.max_file_bytes:
                    continue
                spec = language_of(entry.path, config)
                if spec is None:
                    continue
                report.kept += 1
                yield SourceFile(entry.path, rel, spec, st.st_size, st.st_mtime_ns)
        stack.extend(reversed(subfolders))
