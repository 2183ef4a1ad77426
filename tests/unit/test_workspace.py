"""Discovery: ignore rules, excluded folders, links, size and binary checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nearsym.workspace.config import Config
from nearsym.workspace.discovery import SkippedFile, discover, indexable, read_source


def write(root: Path, rel: str, text: str = "def f(): pass\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def found(root: Path, config: Config | None = None) -> list[str]:
    return sorted(sf.rel for sf in discover(str(root), config or Config()))


def test_gitignore_nested_and_negated(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "generated/\n*.gen.py\n")
    write(tmp_path, "src/a.py")
    write(tmp_path, "src/b.gen.py")
    write(tmp_path, "generated/c.py")
    write(tmp_path, "src/.gitignore", "local.py\n!keep.gen.py\n")
    write(tmp_path, "src/local.py")
    write(tmp_path, "src/keep.gen.py")
    write(tmp_path, "other/local.py")
    assert found(tmp_path) == ["other/local.py", "src/a.py", "src/keep.gen.py"]


def test_git_info_exclude_and_exclude_setting(tmp_path: Path) -> None:
    write(tmp_path, ".git/info/exclude", "scratch.py\n")
    write(tmp_path, "scratch.py")
    write(tmp_path, "vendor/lib.go", "package lib\n")
    write(tmp_path, "main.go", "package main\n")
    assert found(tmp_path, Config(exclude=("vendor/",))) == ["main.go"]


def test_default_exclusions(tmp_path: Path) -> None:
    for rel in ["node_modules/x/i.js", ".git/hooks/h.py", "build/out.js", "__pycache__/m.py"]:
        write(tmp_path, rel)
    write(tmp_path, "env/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "env/lib/site.py")
    write(tmp_path, "keep.py")
    write(tmp_path, "notes.txt", "not code")
    assert found(tmp_path) == ["keep.py"]


def test_a_workspace_that_is_a_venv_is_still_walked(tmp_path: Path) -> None:
    """Only venvs below the folder opened are passed over: one opened on
    purpose (to read its packages) is walked, and so is a folder below it
    opened alone."""
    write(tmp_path, "pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "lib/site.py")
    write(tmp_path, "lib/inner/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "lib/inner/hidden.py")
    assert found(tmp_path) == ["lib/site.py"]
    assert [sf.rel for sf in discover(str(tmp_path / "lib" / "inner"), Config())] == ["hidden.py"]


def test_only_regular_files_are_listed(tmp_path: Path) -> None:
    """A FIFO, a socket, a device link or a dangling link named like source
    is never listed (the walk decides by the listing's file types)."""
    import socket

    write(tmp_path, "real.py")
    os.mkfifo(tmp_path / "pipe.py")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock.py"))
        os.symlink("/dev/null", tmp_path / "null.py")
        os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
        assert found(tmp_path, Config(follow_symlinks=True)) == ["real.py"]
        assert found(tmp_path) == ["real.py"]


def test_symlinks_are_not_followed_by_default(tmp_path: Path) -> None:
    write(tmp_path, "real/a.py")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    assert found(tmp_path) == ["real/a.py"]


def test_symlink_loops_and_escapes_end(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root, "real/a.py")
    write(tmp_path, "outside/secret.py")
    os.symlink(root, root / "real" / "loop")
    os.symlink(tmp_path / "outside", root / "escape")
    os.symlink(root / "real", root / "alias")
    skipped: list[str] = []
    files = sorted(
        sf.rel
        for sf in discover(
            str(root), Config(follow_symlinks=True), lambda p, why: skipped.append(why)
        )
    )
    assert files == ["alias/a.py"] or files == ["real/a.py"]
    assert any("out of the workspace" in why for why in skipped)
    assert any("loop" in why for why in skipped)


def test_size_cap_and_binary_files(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * 1000)
    with pytest.raises(SkippedFile, match="cap"):
        read_source(str(big), 100)
    binary = tmp_path / "bin.py"
    binary.write_bytes(b"def f():\x00 pass\n")
    with pytest.raises(SkippedFile, match="binary"):
        read_source(str(binary), 10_000)
    assert read_source(str(big), 10_000).startswith(b"x = 1")
    minified = tmp_path / "bundle.min.js"
    minified.write_text("var a=1;" * 20_000)
    with pytest.raises(SkippedFile, match="minified"):
        read_source(str(minified), 1_000_000)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file_raises_oserror(tmp_path: Path) -> None:
    path = tmp_path / "secret.py"
    path.write_text("def f(): pass\n")
    path.chmod(0)
    with pytest.raises(OSError):
        read_source(str(path), 10_000)


def test_scripts_without_extension_by_shebang(tmp_path: Path) -> None:
    write(tmp_path, "bin/deploy", "#!/usr/bin/env bash\ndeploy() { :; }\n")
    write(tmp_path, "bin/README", "just text\n")
    assert found(tmp_path) == ["bin/deploy"]


def test_a_file_replaced_by_a_fifo_is_skipped_not_waited_for(tmp_path: Path) -> None:
    """The walk saw a regular file; by the time a worker reads it, it is a
    FIFO with no writer (a plain open() would wait for one forever)."""
    import threading

    from nearsym.workspace.pool import SKIPPED, parse_one

    os.mkfifo(tmp_path / "swapped.py")
    result: list[tuple[object, ...]] = []
    reader = threading.Thread(
        target=lambda: result.append(
            parse_one(str(tmp_path / "swapped.py"), "swapped.py", "python", 1000)
        ),
        daemon=True,
    )
    reader.start()
    reader.join(timeout=60)
    assert result and result[0][1] == SKIPPED and b"FIFO" in bytes(result[0][4])  # type: ignore[arg-type]
    os.symlink("/dev/zero", tmp_path / "zero.py")
    with pytest.raises(SkippedFile, match="character device"):
        read_source(str(tmp_path / "zero.py"), 1000)


def test_one_link_rule_for_walks_events_and_buffers(tmp_path: Path) -> None:
    """With followSymlinks, a file reached through a link out of the root
    is neither walked nor indexed from a disk event or a buffer."""
    from nearsym.workspace.live import Change, LiveWorkspace

    root = tmp_path / "root"
    write(root, "a.py", "def inside(): pass\n")
    write(tmp_path, "outside/secret.py", "def secret(): pass\n")
    os.symlink(tmp_path / "outside", root / "ext")
    os.symlink(root / "a.py", root / "alias.py")
    config = Config(follow_symlinks=True)
    assert found(root, config) == ["a.py", "alias.py"]
    secret = str(root / "ext" / "secret.py")
    assert indexable(str(root), secret, config) is None
    assert indexable(str(root), secret, config, must_exist=False) is None
    assert indexable(str(root), str(root / "alias.py"), config) is not None
    assert indexable(str(root), str(root / "alias.py"), Config()) is None
    live = LiveWorkspace(config)
    ns = live.add_root(str(root))
    live.index_all(ns)
    live.disk_changed([(Change.CHANGED, secret)])
    live.open_buffer(str(root / "ext" / "new.py"), b"def typed_outside(): pass\n")
    assert sorted(ns.index.files) == ["a.py", "alias.py"]


def test_a_workers_task_gives_each_file_what_it_would_alone(tmp_path: Path) -> None:
    """A task's files share one scan for their mentions (`parse_many`):
    each gets its own, and a file skipped, gone or of an unknown language
    in the middle takes nothing from its neighbours."""
    from nearsym.core.filedefs import FileDefs
    from nearsym.workspace.pool import GONE, OK, SKIPPED, parse_many, parse_one

    write(tmp_path, "a.py", "def alpha(): return beta_value\n")
    write(tmp_path, "b.go", "package b\nfunc Gamma() { delta_value() }\n")
    (tmp_path / "bin.py").write_bytes(b"def x(): pass\n\0\0")
    write(tmp_path, "c.py", "class Epsilon: zeta_value = 1\n")
    jobs = [
        (str(tmp_path / "a.py"), "a.py", "python"),
        (str(tmp_path / "b.go"), "b.go", "go"),
        (str(tmp_path / "bin.py"), "bin.py", "python"),
        (str(tmp_path / "gone.py"), "gone.py", "python"),
        (str(tmp_path / "c.txt"), "c.txt", "no such language"),
        (str(tmp_path / "c.py"), "c.py", "python"),
    ]
    together = parse_many(jobs, 1000)
    alone = [parse_one(*job, 1000) for job in jobs]
    assert together == alone
    assert [r[1] for r in together] == [OK, OK, SKIPPED, GONE, SKIPPED, OK]
    mentions = [FileDefs.decode(r[4]).mentions for r in together if r[1] == OK]
    assert len(set(mentions)) == 3 and all(mentions)
