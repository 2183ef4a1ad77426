"""The cache's key, integrity and modes; names that are not UTF-8; settings."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from nearsym.index.cache import Cache
from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config, config_from_options, index_key
from nearsym.workspace.indexer import index_into, save_snapshot


def _index(root: Path, cache_dir: Path, config: Config) -> tuple[SymbolIndex, int]:
    index = SymbolIndex(str(root))
    cache = Cache(str(root), str(cache_dir), index_key(config))
    stats = index_into(index, config, cache=cache)
    save_snapshot(index, stats, cache)
    cache.close()
    return index, stats.from_snapshot + stats.from_cache


def _old(path: Path) -> None:
    """Backdate a file: entries written within 2 s of its mtime are not trusted."""
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))


def test_a_cache_made_with_other_settings_is_not_used(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.py").write_text("def big_function():\n    pass\n" * 20)
    _old(root / "big.py")
    cache_dir = tmp_path / "c"
    index, _ = _index(root, cache_dir, Config())
    assert index.candidates("big_function", 5)
    index, loaded = _index(root, cache_dir, Config())
    assert loaded == 1  # the same settings: from the cache
    index, loaded = _index(root, cache_dir, Config(max_file_bytes=100))
    assert loaded == 0 and not index.candidates("big_function", 5)


def test_every_setting_that_changes_the_index_changes_the_key() -> None:
    base = index_key(Config())
    for changed in (
        Config(max_file_bytes=10),
        Config(languages=("python",)),
        Config(exclude=("x/",)),
        Config(follow_symlinks=True),
        Config(require_git=False),
    ):
        assert index_key(changed) != base, changed
    assert index_key(Config(max_results=5, cache=False)) == base


def test_damaged_blobs_are_caught_by_their_checksums(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(5):
        (root / f"m{n}.py").write_text(f"def function_{n}():\n    pass\n")
        _old(root / f"m{n}.py")
    cache_dir = tmp_path / "c"
    _index(root, cache_dir, Config())
    path = Cache(str(root), str(cache_dir), index_key(Config())).path
    db = sqlite3.connect(path)
    parts = db.execute("SELECT part, length(data) FROM snapshot").fetchall()
    for part, size in parts:  # one byte flipped in the middle of every part
        if size:
            data = bytearray(
                db.execute("SELECT data FROM snapshot WHERE part=?", (part,)).fetchone()[0]
            )
            data[size // 2] ^= 0xFF
            db.execute("UPDATE snapshot SET data=? WHERE part=?", (bytes(data), part))
    (row,) = db.execute("SELECT path FROM files LIMIT 1").fetchall()
    db.execute("UPDATE files SET defs = CAST(X'00' || defs AS BLOB) WHERE path=?", row)
    db.commit()
    db.close()
    cache = Cache(str(root), str(cache_dir), index_key(Config()))
    assert cache.load_snapshot() is None
    assert len(cache.load()) == 4
    index, loaded = _index(root, cache_dir, Config())
    assert loaded == 4  # the damaged entry was parsed again
    for n in range(5):
        assert [s.name for s in index.candidates(f"function_{n}", 1)] == [f"function_{n}"]


def test_cache_files_are_private(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    pass\n")
    cache_dir = tmp_path / "c"
    cache_dir.mkdir(mode=0o755)
    os.chmod(cache_dir, 0o755)
    _index(root, cache_dir, Config())
    assert stat.S_IMODE(os.stat(cache_dir).st_mode) == 0o700
    files = list(cache_dir.iterdir())
    assert files
    for f in files:
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, f


def test_names_that_are_not_utf8_are_cached_and_loaded_losslessly(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    raw = os.fsencode(root)
    for name in (b"/\xff\xfe.py", b"/dir\xffname/inner.py"):
        os.makedirs(os.path.dirname(raw + name), exist_ok=True)
        with open(raw + name, "w") as f:
            f.write("def bytes_named():\n    pass\n")
        os.utime(raw + name, ns=(1_000_000_000, 1_000_000_000))
    cache_dir = tmp_path / "c"
    _index(root, cache_dir, Config())
    cache = Cache(str(root), str(cache_dir), index_key(Config()))
    assert sorted(cache.load()) == ["dir\udcffname/inner.py", "\udcff\udcfe.py"]
    cache.close()
    again, loaded = _index(root, cache_dir, Config())
    assert loaded == 2
    assert sorted(s.path for s in again.candidates("bytes_named", 5)) == [
        "dir\udcffname/inner.py",
        "\udcff\udcfe.py",
    ]


def test_unknown_settings_are_reported_with_the_nearest_name() -> None:
    config, problems = config_from_options({"maxResult": 5, "command": ["nearsym"]})
    assert config == Config()
    assert problems == [
        "nearsym: unknown setting 'maxResult' (did you mean 'maxResults'?); ignored"
    ]
    config, problems = config_from_options({"requireGit": False})
    assert config.require_git is False and problems == []


@pytest.mark.parametrize("value", ["0", "-1", "lots"])
def test_max_file_bytes_must_be_positive_on_the_command_line(tmp_path: Path, value: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nearsym",
            "search",
            "x",
            "--root",
            str(tmp_path),
            "--max-file-bytes",
            value,
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "--max-file-bytes" in done.stderr


def test_a_written_snapshot_is_not_kept_by_the_writer(tmp_path: Path) -> None:
    """The writer thread lets go of a snapshot once it is on disk: its
    parts (tens of MB on a large tree) must not stay resident until the
    next write comes."""
    import gc
    import marshal
    import weakref

    import numpy as np

    cache = Cache(str(tmp_path), str(tmp_path / "c"), index_key(Config()))
    column = np.arange(100_000, dtype=np.uint32)
    alive = weakref.ref(column)
    parts = {
        "entry:<u4": memoryview(column).cast("B"),  # a view, as `Segment.to_parts` hands over
        "files": marshal.dumps((["a.py"], [1], [1_000_000_000])),
    }
    cache.store_snapshot(parts)
    del parts, column
    cache.flush()
    gc.collect()
    assert alive() is None
    stored = cache.load_snapshot()
    assert stored is not None
    assert np.array_equal(np.frombuffer(stored["entry:<u4"], dtype=np.uint32), np.arange(100_000))
    cache.close()


def test_a_snapshot_part_is_its_rows_last_column(tmp_path: Path) -> None:
    """A part is inserted as a zeroblob, then written a chunk at a time:
    SQLite makes a zeroblob's zeros in memory unless it is the row's last
    column (in the middle, the Linux kernel's snapshot write peaked 146 MB
    higher). The stamps a snapshot keeps mark a file too recent to trust."""
    import sqlite3
    import time

    cache = Cache(str(tmp_path), str(tmp_path / "c"), index_key(Config()))
    cache.store_snapshot({"names": b"x" * 100_000})
    cache.flush()
    db = sqlite3.connect(cache.path)
    columns = [row[1] for row in db.execute("PRAGMA table_info(snapshot)")]
    db.close()
    assert columns[-1] == "data"
    stored = cache.load_snapshot()
    assert stored is not None and stored["names"] == b"x" * 100_000
    now = time.time_ns()
    assert Cache.trusted({"old.py": (3, now - 10**10), "new.py": (4, now)}) == {
        "old.py": (3, now - 10**10),
        "new.py": (4, -1),
    }
    cache.close()
