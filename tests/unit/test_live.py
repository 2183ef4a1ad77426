"""Model-based test of live updates: after every random step, the live index
equals a fresh index of the current disk with open buffers in place of their
files. Seeded random walks, several hundred steps each."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from nearsym.workspace.config import Config
from nearsym.workspace.live import Change, LiveWorkspace

NAMES = ["alpha", "beta", "gamma", "delta", "parse", "run", "Config", "Store", "load"]
FOLDERS = ["", "pkg", "pkg/sub", "lib", "tests", "node_modules/dep", "build", "gen"]
EXTENSIONS = [".py", ".go", ".ts", ".js", ".txt"]


def source(rng: random.Random, ext: str) -> str:
    names = rng.sample(NAMES, rng.randint(0, 3))
    if ext == ".py":
        return (
            "".join(f"def {n}():\n    pass\n\n" for n in names) + "class K:\n    def m(self): ...\n"
        )
    if ext == ".go":
        return "package p\n\n" + "".join(f"func {n}() {{}}\n" for n in names)
    if ext in (".ts", ".js"):
        return "".join(f"export function {n}() {{}}\n" for n in names)
    return " ".join(names)


def snapshot(live: LiveWorkspace) -> dict[str, set[tuple[object, ...]]]:
    return {
        ns.root: {
            (s.path, s.name, s.kind, s.container, s.span.line, s.span.col, s.local)
            for s in ns.index.all_symbols()
        }
        for ns in live.namespaces
    }


def fresh(live: LiveWorkspace) -> dict[str, set[tuple[object, ...]]]:
    other = LiveWorkspace(live.config)
    other.buffers = dict(live.buffers)
    for ns in live.namespaces:
        other.index_all(other.add_root(ns.root))
    return snapshot(other)


class Walk:
    def __init__(self, base: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.base = base
        self.roots = [base / "one", base / "two"]
        for r in self.roots:
            (r / ".git").mkdir(parents=True)  # a repository: its .gitignores apply
        self.live = LiveWorkspace(Config())
        self.live.index_all(self.live.add_root(str(self.roots[0])))

    def files(self) -> list[Path]:
        return [p for r in self.roots for p in r.rglob("*") if p.is_file()]

    def any_path(self) -> Path:
        root = self.rng.choice(self.roots)
        folder = self.rng.choice(FOLDERS)
        return root / folder / (self.rng.choice(NAMES).lower() + self.rng.choice(EXTENSIONS))

    def step(self) -> str:
        rng, live = self.rng, self.live
        op = rng.choice(
            ["create", "create", "edit", "delete", "rename", "rmdir", "ignore",
             "open", "change", "close", "add_root", "remove_root"]
        )  # fmt: skip
        files = self.files()
        if op == "create" or (op in ("edit", "delete", "rename") and not files):
            path = self.any_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            existed = path.exists()
            path.write_text(source(rng, path.suffix))
            live.disk_changed([(Change.CHANGED if existed else Change.CREATED, str(path))])
        elif op == "edit":
            path = rng.choice(files)
            path.write_text(source(rng, path.suffix))
            live.disk_changed([(Change.CHANGED, str(path))])
        elif op == "delete":
            path = rng.choice(files)
            path.unlink()
            live.disk_changed([(Change.DELETED, str(path))])
        elif op == "rename":
            path = rng.choice(files)
            target = self.any_path().with_suffix(path.suffix)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                return "rename skipped"
            os.replace(path, target)
            live.disk_changed([(Change.DELETED, str(path)), (Change.CREATED, str(target))])
        elif op == "rmdir":
            root = rng.choice(self.roots)
            folder = root / rng.choice([f for f in FOLDERS if f])
            if not folder.exists():
                return "rmdir skipped"
            shutil.rmtree(folder)
            live.disk_changed([(Change.DELETED, str(folder))])
        elif op == "ignore":
            root = rng.choice(self.roots)
            folder = root / rng.choice(["", "pkg"])
            folder.mkdir(parents=True, exist_ok=True)
            pattern = rng.choice(["gen/\n", "*.go\n", "sub/\n", "!keep.py\n", "alpha.py\n", ""])
            name = rng.choice([".gitignore", ".gitignore", ".ignore"])
            (folder / name).write_text(pattern)
            live.disk_changed([(Change.CHANGED, str(folder / name))])
        elif op == "open":
            path = rng.choice(files) if files and rng.random() < 0.7 else self.any_path()
            live.open_buffer(str(path), source(rng, path.suffix).encode())
        elif op == "change":
            if not live.buffers:
                return "change skipped"
            path = Path(rng.choice(sorted(live.buffers)))
            live.change_buffer(str(path), source(rng, path.suffix).encode())
        elif op == "close":
            if not live.buffers:
                return "close skipped"
            live.close_buffer(rng.choice(sorted(live.buffers)))
        elif op == "add_root":
            ns = live.add_root(str(rng.choice(self.roots)))
            live.rewalk(ns)
        elif op == "remove_root" and len(live.namespaces) > 1:
            live.remove_root(rng.choice(live.namespaces).root)
        return op


@pytest.mark.parametrize(
    "seed", [int(s) for s in os.environ.get("NEARSYM_LIVE_SEEDS", "1,2,3").split(",")]
)
def test_live_index_equals_a_fresh_index_after_every_step(tmp_path: Path, seed: int) -> None:
    walk = Walk(tmp_path, seed)
    history: list[str] = []
    for _ in range(300):
        history.append(walk.step())
        got, want = snapshot(walk.live), fresh(walk.live)
        if got != want:
            for root in want:
                missing = sorted(want[root] - got.get(root, set()))[:5]
                stale = sorted(got.get(root, set()) - want[root])[:5]
                print(root, "missing", missing, "stale", stale)
            pytest.fail(f"diverged after {history[-12:]}")
