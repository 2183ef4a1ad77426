"""Model-based test of live updates: after every random step, the live index
equals a fresh index of the current disk with open buffers in place of their
files. Seeded random walks, several hundred steps each."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import nearsym.workspace.live as live_module
from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config
from nearsym.workspace.discovery import SourceFile, discover, language_of
from nearsym.workspace.live import Change, LiveWorkspace

NAMES = ["alpha", "beta", "gamma", "delta", "parse", "run", "Config", "Store", "load"]
FOLDERS = ["", "pkg", "pkg/sub", "lib", "tests", "node_modules/dep", "build", "gen"]
EXTENSIONS = [".py", ".go", ".ts", ".js", ".txt"]


def source(rng: random.Random, ext: str) -> str:
    names = rng.sample(NAMES, rng.randint(0, 3))
    if ext != ".txt" and rng.random() < 0.1:  # binary: found by a walk, not indexed
        return "\0" + " ".join(names)
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
        self.opened: set[str] = set()
        """Buffers open in the editor: those that stand for their file
        (`live.buffers`) and those opened as on disk."""
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
            if path.exists() and rng.random() < 0.5:  # as on disk: it stands aside
                text = path.read_bytes()
            else:
                text = source(rng, path.suffix).encode()
            live.open_buffer(str(path), text)
            self.opened.add(str(path))
        elif op == "change":
            if not self.opened:
                return "change skipped"
            path = Path(rng.choice(sorted(self.opened)))
            live.change_buffer(str(path), source(rng, path.suffix).encode())
        elif op == "close":
            if not self.opened:
                return "close skipped"
            path = Path(rng.choice(sorted(self.opened)))
            self.opened.discard(str(path))
            live.close_buffer(str(path))
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


def counted(live: LiveWorkspace) -> list[str]:
    """The paths `live` parses as buffers, from now on."""
    parsed: list[str] = []
    extract = live.extract

    def counting(text: bytes, language: object, root: str, rel: str) -> object:
        parsed.append(rel)
        return extract(text, language, root, rel)

    live.extract = counting
    return parsed


def names_of(live: LiveWorkspace) -> set[str]:
    return {s.name for ns in live.namespaces for s in ns.index.all_symbols()}


def test_a_buffer_opened_as_on_disk_is_not_parsed_until_edited(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def on_disk():\n    pass\n")
    live = LiveWorkspace(Config())
    live.index_all(live.add_root(str(tmp_path)))
    parsed = counted(live)
    path = str(tmp_path / "a.py")
    live.open_buffer(path, (tmp_path / "a.py").read_bytes())
    assert parsed == [] and path not in live.buffers
    assert "on_disk" in names_of(live)
    # The disk's changes apply to it as to any file, until it is edited.
    (tmp_path / "a.py").write_text("def changed_on_disk():\n    pass\n")
    live.disk_changed([(Change.CHANGED, path)])
    assert "changed_on_disk" in names_of(live)
    live.change_buffer(path, b"def typed():\n    pass\n")
    assert parsed == ["a.py"] and live.buffers[path] == b"def typed():\n    pass\n"
    assert "typed" in names_of(live) and "changed_on_disk" not in names_of(live)
    # A text unlike the disk's is a buffer from the start.
    live.close_buffer(path)
    live.open_buffer(path, b"def unsaved():\n    pass\n")
    assert parsed == ["a.py", "a.py"] and "unsaved" in names_of(live)


def test_an_open_newer_word_wins_over_the_open(tmp_path: Path) -> None:
    """An edit or close that came while the open was checked the disk is
    the newer word: the open then changes nothing."""
    (tmp_path / "a.py").write_text("def on_disk():\n    pass\n")
    live = LiveWorkspace(Config())
    live.index_all(live.add_root(str(tmp_path)))
    path = str(tmp_path / "a.py")
    live.change_buffer(path, b"def newer():\n    pass\n")
    live.open_buffer(path, b"def older():\n    pass\n", current=lambda: False)
    assert live.buffers[path] == b"def newer():\n    pass\n"
    assert "newer" in names_of(live) and "older" not in names_of(live)


def test_a_file_not_indexed_yet_is_parsed_as_a_buffer(tmp_path: Path) -> None:
    """Opened before any index reached it (a new folder, a loose file), its
    symbols answer at once; during a cold index (`bulk`) the walk gives
    them, the open file's folder first."""
    (tmp_path / "a.py").write_text("def on_disk():\n    pass\n")
    live = LiveWorkspace(Config())
    ns = live.add_root(str(tmp_path))
    parsed = counted(live)
    path = str(tmp_path / "a.py")
    live.open_buffer(path, (tmp_path / "a.py").read_bytes())
    assert parsed == ["a.py"] and "on_disk" in names_of(live)
    live.close_buffer(path)
    parsed.clear()
    ns.index.remove_file("a.py")
    ns.index.bulk = True
    live.open_buffer(path, (tmp_path / "a.py").read_bytes())
    assert parsed == [] and path not in live.buffers


def test_an_open_buffer_is_put_back_without_a_second_parse(tmp_path: Path) -> None:
    """A snapshot installed or a walk ended puts the open buffers back over
    their files: from their last parse, not a new one."""
    (tmp_path / "a.py").write_text("def on_disk():\n    pass\n")
    live = LiveWorkspace(Config())
    ns = live.add_root(str(tmp_path))
    live.index_all(ns)
    parsed = counted(live)
    path = str(tmp_path / "a.py")
    text = b"def in_the_buffer():\n    pass\n"
    live.change_buffer(path, text)
    live.rewalk(ns)
    live.reindex_buffers(ns)
    assert parsed == ["a.py"]
    assert "in_the_buffer" in names_of(live) and "on_disk" not in names_of(live)
    live.change_buffer(path, b"def edited():\n    pass\n")
    assert parsed == ["a.py", "a.py"] and "edited" in names_of(live)


def test_a_deleted_file_is_dropped_without_listing_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source file deleted is dropped alone; a folder deleted takes what
    was under it, found among all the indexed paths (with the lock held:
    30-50 ms a deletion on the kernel's 56,000, when every deletion listed
    them)."""
    (tmp_path / "pkg").mkdir()
    for name in ("a", "b"):
        (tmp_path / "pkg" / f"{name}.py").write_text(f"def {name}_here():\n    pass\n")
    (tmp_path / "top.py").write_text("def top_here():\n    pass\n")
    live = LiveWorkspace(Config())
    live.index_all(live.add_root(str(tmp_path)))
    listed: list[int] = []
    files = SymbolIndex.files

    def counted(index: SymbolIndex) -> list[str]:
        listed.append(1)
        return files.fget(index)  # type: ignore[attr-defined,no-any-return]

    monkeypatch.setattr(SymbolIndex, "files", property(counted))
    (tmp_path / "top.py").unlink()
    live.disk_changed([(Change.DELETED, str(tmp_path / "top.py"))])
    assert listed == []
    assert names_of(live) == {"a_here", "b_here"}
    shutil.rmtree(tmp_path / "pkg")
    live.disk_changed([(Change.DELETED, str(tmp_path / "pkg"))])
    assert listed  # a folder's files are looked for
    assert names_of(live) == set()


def test_a_rewalk_reads_a_skipped_file_again_only_once_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file a walk finds and indexing passes over (binary, too broken to
    query) is not read by the next re-walk while its size and mtime stay;
    changed, it is read again (and indexed, once it is source). The Linux
    kernel's two broken files were parsed at every `.gitignore` saved."""
    (tmp_path / "a.py").write_text("def here():\n    pass\n")
    (tmp_path / "blob.py").write_bytes(b"\0binary")
    (tmp_path / "broken.py").write_text("x = " + "[" * 100_000 + "\n")
    live = LiveWorkspace(Config())
    ns = live.add_root(str(tmp_path))
    read: list[str] = []
    read_source = live_module.read_source

    def counting(path: str, max_bytes: int) -> bytes:
        read.append(os.path.basename(path))
        return read_source(path, max_bytes)

    monkeypatch.setattr(live_module, "read_source", counting)
    live.rewalk(ns)
    assert sorted(read) == ["a.py", "blob.py", "broken.py"] and len(ns.index.skipped) == 2
    assert names_of(live) == {"here"}
    read.clear()
    live.rewalk(ns)
    assert read == []
    (tmp_path / "broken.py").write_text("def mended():\n    pass\n")
    live.rewalk(ns)
    assert read == ["broken.py"] and names_of(live) == {"here", "mended"}
    assert len(ns.index.skipped) == 1
    (tmp_path / "blob.py").unlink()
    live.rewalk(ns)
    assert len(ns.index.skipped) == 0


def test_a_rewalk_stats_only_the_files_it_does_not_hold(tmp_path: Path) -> None:
    """`discover(known=...)` yields the files the caller holds without
    their stamp (a system call each), and the others with it."""
    for name in ("a.py", "b.py", "c.go"):
        (tmp_path / name).write_text("x = 1\n")
    walked = {sf.rel: sf for sf in discover(str(tmp_path), Config(), known={"a.py", "c.go"})}
    assert sorted(walked) == ["a.py", "b.py", "c.go"]
    assert (walked["a.py"].size, walked["c.go"].size) == (-1, -1)
    assert walked["b.py"].size == 6 and walked["b.py"].mtime_ns > 0


def test_a_file_indexed_during_a_rewalk_is_judged_by_the_new_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold index still running when a `.gitignore` is saved applies
    files it judged by the old rules while the re-walk walks: the re-walk
    drops those the new rules ignore."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "gen").mkdir()
    (tmp_path / "a.py").write_text("def kept():\n    pass\n")
    live = LiveWorkspace(Config())
    ns = live.add_root(str(tmp_path))
    live.index_all(ns)
    (tmp_path / "gen" / "late.py").write_text("def late():\n    pass\n")  # its event to come
    (tmp_path / ".gitignore").write_text("gen/\n")
    walk = live_module.discover

    def walk_while_a_cold_index_applies(*args: Any, **kwargs: Any) -> Iterator[SourceFile]:
        for n, sf in enumerate(walk(*args, **kwargs)):
            if n == 0:
                late = str(tmp_path / "gen" / "late.py")
                spec = language_of(late, live.config)
                assert spec is not None
                cold = SourceFile(late, "gen/late.py", spec, 1, 1)
                live.apply_many(ns, [(cold, live.read_defs(cold))])
            yield sf

    monkeypatch.setattr(live_module, "discover", walk_while_a_cold_index_applies)
    live.disk_changed([(Change.CHANGED, str(tmp_path / ".gitignore"))])
    assert names_of(live) == {"kept"}
