"""The table of files indexing passed over (`index.skipped`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nearsym.index.skipped import SkippedFiles, path_key


def test_a_file_is_held_at_the_stamp_it_was_skipped_at_and_no_other() -> None:
    table = SkippedFiles()
    assert not table.holds("a.py", 1, 2)
    table.update([("a.py", 10, 100), ("b/c.js", 20, 200)])
    assert table.holds("a.py", 10, 100) and table.holds("b/c.js", 20, 200)
    assert not table.holds("a.py", 10, 101) and not table.holds("a.py", 11, 100)
    assert not table.holds("c.js", 20, 200)
    assert len(table) == 2


def test_a_new_stamp_replaces_the_old_and_dropped_paths_are_forgotten() -> None:
    table = SkippedFiles()
    table.update([("a.py", 10, 100), ("b.py", 1, 1)])
    table.update([("a.py", 12, 300), ("a.py", 13, 400)])  # the last one stands
    assert table.holds("a.py", 13, 400) and not table.holds("a.py", 10, 100)
    assert len(table) == 2
    table.update(dropped=["b.py", "never.py"])
    assert not table.holds("b.py", 1, 1) and len(table) == 1
    table.update([("b.py", 1, 1)], dropped=["b.py"])  # recorded wins over dropped
    assert table.holds("b.py", 1, 1)


def test_a_table_of_what_a_walk_kept_holds_only_that() -> None:
    table = SkippedFiles.of([(f"f{i}.py", i, i * 7) for i in range(500)])
    assert len(table) == 500
    assert all(table.holds(f"f{i}.py", i, i * 7) for i in range(500))
    assert not table.holds("f500.py", 500, 3500)


def test_a_table_goes_through_its_bytes_and_adds_only_paths_it_lacks() -> None:
    table = SkippedFiles()
    table.update([("a.py", 10, 100), ("b\udce9.py", 20, 200)])
    restored = SkippedFiles()
    restored.update([("a.py", 11, 111)])  # parsed since, at a newer stamp
    restored.take(table.to_bytes())
    assert restored.holds("a.py", 11, 111) and not restored.holds("a.py", 10, 100)
    assert restored.holds("b\udce9.py", 20, 200) and len(restored) == 2
    restored.take(b"")
    assert len(restored) == 2
    with pytest.raises(ValueError):
        restored.take(b"\0" * 23)


def test_a_path_s_key_is_the_same_in_every_process() -> None:
    """Keys are stored in snapshots: Python's own string hash differs from
    one process to the next."""
    code = "from nearsym.index.skipped import path_key; print(path_key('src/a.py'))"
    keys = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }  # fmt: skip
    assert keys == {str(path_key("src/a.py"))}


def test_a_stamp_too_recent_to_trust_is_not_stored() -> None:
    """A file skipped within the cache's racy window may change again
    under the same stamp: the snapshot leaves it out, so the next start
    reads it."""
    table = SkippedFiles()
    table.update([("old.bin", 10, 100), ("new.bin", 10, 200)])
    stored = SkippedFiles()
    stored.take(table.to_bytes(settled_before=150))
    assert stored.holds("old.bin", 10, 100) and not stored.holds("new.bin", 10, 200)
    assert len(SkippedFiles().to_bytes(settled_before=150)) == 0


def test_dropping_reads_the_same_from_a_small_table_or_a_large_one() -> None:
    """`update` looks rows up in the set of dropped paths when the table
    is the smaller, and the other way round when it is not."""
    for table_size, dropped_size in ((3, 50), (50, 3)):
        table = SkippedFiles()
        table.update([(f"t{i}.py", i, i) for i in range(table_size)])
        table.update(dropped=[f"t{i}.py" for i in range(0, dropped_size, 2)])
        kept = [i for i in range(table_size) if table.holds(f"t{i}.py", i, i)]
        assert kept == [i for i in range(table_size) if i % 2 or i >= dropped_size]
