"""`nearsym publish`: index folders and write them into a shared index.

Each root is indexed as `nearsym search` and `nearsym index` do (the cold
index of `workspace.indexer`, on a process pool), then its definitions are
written to PostgreSQL in one transaction per root
(`nearsym.index.shared.publish_repository`), with the repository's name,
the commit when the root is a git checkout, and the root's path.

The commit is read from `.git` as files (HEAD, the loose ref, packed-refs;
a worktree's `.git` file is followed to its git directory): no git command
runs, so publishing a checkout never runs its hooks or its configuration.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from typing import overload

from nearsym.core.model import Symbol
from nearsym.index.cache import Cache
from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config, index_key
from nearsym.workspace.indexer import index_into, save_snapshot
from nearsym.workspace.pool import Workers

_HASH = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pub = sub.add_parser("publish", help="index folders into a team's shared index (PostgreSQL)")
    pub.add_argument(
        "--root", action="append", required=True, metavar="DIR", help="folder (repeatable)"
    )
    pub.add_argument("--to", required=True, metavar="URL", help="postgresql://USER@HOST/DB")
    pub.add_argument(
        "--name",
        action="append",
        metavar="NAME",
        help="repository name, one per --root in order (default: the folder's name)",
    )
    pub.add_argument(
        "--no-cache", action="store_true", help="parse everything; neither read nor write the cache"
    )


def git_commit(root: str) -> str | None:
    """The commit checked out at `root`, read from its git files, or None
    when `root` is not the top of a git checkout (or HEAD is unborn)."""
    gitdir = os.path.join(root, ".git")
    try:
        if os.path.isfile(gitdir):
            with open(gitdir, encoding="utf-8") as f:
                line = f.read().strip()
            if not line.startswith("gitdir:"):
                return None
            gitdir = os.path.join(root, line.removeprefix("gitdir:").strip())
        if not os.path.isdir(gitdir):
            return None
        common = gitdir
        commondir = os.path.join(gitdir, "commondir")
        if os.path.isfile(commondir):
            with open(commondir, encoding="utf-8") as f:
                common = os.path.join(gitdir, f.read().strip())
        with open(os.path.join(gitdir, "HEAD"), encoding="utf-8") as f:
            head = f.read().strip()
        for _ in range(5):  # a symbolic ref may point at another one
            if _HASH.match(head):
                return head
            if not head.startswith("ref:"):
                return None
            ref = head.removeprefix("ref:").strip()
            if ".." in ref.split("/"):
                return None
            head = _read_ref(gitdir, common, ref) or ""
        return None
    except (OSError, UnicodeDecodeError):
        return None


def _read_ref(gitdir: str, common: str, ref: str) -> str | None:
    for base in (gitdir, common):
        try:
            with open(os.path.join(base, *ref.split("/")), encoding="utf-8") as f:
                return f.read().strip()
        except OSError:
            continue
    try:
        with open(os.path.join(common, "packed-refs"), encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref:
                    return parts[0]
    except OSError:
        pass
    return None


class IndexedFiles(Sequence[tuple[str, tuple[Symbol, ...]]]):
    """Every file of an index that holds definitions, in path order, as
    (path, its definitions); a file's `Symbol`s are built when it is read.

    The publisher reads each file once, so the kernel's 4 million `Symbol`s
    never live together (built all at once they took 1.1 GB beside the
    index's 0.4 GB)."""

    def __init__(self, index: SymbolIndex) -> None:
        self._index = index
        self._paths = [p for p in sorted(index.files) if index.definition_count(p)]

    def __len__(self) -> int:
        return len(self._paths)

    @overload
    def __getitem__(self, at: int) -> tuple[str, tuple[Symbol, ...]]: ...

    @overload
    def __getitem__(self, at: slice) -> list[tuple[str, tuple[Symbol, ...]]]: ...

    def __getitem__(
        self, at: int | slice
    ) -> tuple[str, tuple[Symbol, ...]] | list[tuple[str, tuple[Symbol, ...]]]:
        if isinstance(at, slice):
            return [(p, self._index.symbols_of(p)) for p in self._paths[at]]
        path = self._paths[at]
        return path, self._index.symbols_of(path)

    def __iter__(self) -> Iterator[tuple[str, tuple[Symbol, ...]]]:
        for path in self._paths:
            yield path, self._index.symbols_of(path)


def definitions_by_file(index: SymbolIndex) -> IndexedFiles:
    """Every file of `index` that holds definitions, in path order (built
    a file at a time as it is read: `IndexedFiles`)."""
    return IndexedFiles(index)


def run(args: argparse.Namespace) -> int:
    from nearsym.index.shared import SharedIndexError, connect, publish_repository

    roots = [os.path.abspath(r) for r in args.root]
    names: Sequence[str] = args.name or []
    if names and len(names) != len(roots):
        print("nearsym publish: give one --name per --root, or none", file=sys.stderr)
        return 2
    for root in roots:
        if not os.path.isdir(root):
            print(f"nearsym publish: {root}: not a folder", file=sys.stderr)
            return 2
    chosen = list(names) or [os.path.basename(r.rstrip(os.sep)) or r for r in roots]
    if len(set(chosen)) != len(chosen):
        print("nearsym publish: two roots would get the same name; use --name", file=sys.stderr)
        return 2
    try:
        conn = connect(args.to)
    except SharedIndexError as error:
        print(f"nearsym publish: {error}", file=sys.stderr)
        return 1
    workers = Workers()
    try:
        for root, name in zip(roots, chosen, strict=True):
            started = time.perf_counter()
            index = SymbolIndex(root)
            config = Config()
            cache = None if args.no_cache else Cache(root, settings=index_key(config))
            stats = index_into(index, config, workers=workers, cache=cache)
            if cache is not None:
                save_snapshot(index, stats, cache)
                cache.close()
            indexed = time.perf_counter() - started
            files = definitions_by_file(index)
            try:
                done = publish_repository(conn, name, root, git_commit(root), files)
            except SharedIndexError as error:
                print(f"nearsym publish: {error}", file=sys.stderr)
                return 1
            print(
                f"{name}: {done.files} files, {done.definitions} definitions;"
                f" indexed in {indexed:.2f}s, written in {done.seconds:.2f}s"
            )
    finally:
        workers.close(wait=True)  # the tracker stopped before the interpreter ends
        conn.close()
    return 0
