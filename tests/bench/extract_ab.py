"""Two versions of the extraction, file by file in turn in one process: the
CPU seconds of each over every file of a tree, and whether they gave the
same blobs. On a shared machine whose speed drifts by a third from one
minute to the next, runs of whole processes in turn did not tell a 6%
change; here each file is extracted by both, the first of the two taking
turns, so a drift costs both alike.

    git worktree add /tmp/old HEAD~1
    (cd /tmp/old && python setup.py build_ext --inplace)
    python tests/bench/extract_ab.py /tmp/old/server /tmp/bench/jdk [rounds]

The old version's `nearsym` package is copied to a temporary folder as
`nearsym_old` (its imports renamed) and runs beside the installed one.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any


def renamed_copy(server: str, into: str) -> None:
    """`server`'s `nearsym` package as `into/nearsym_old`."""
    target = os.path.join(into, "nearsym_old")
    shutil.copytree(os.path.join(server, "nearsym"), target)
    for folder, _, names in os.walk(target):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                text = re.sub(r"\b(from|import) nearsym\b", r"\1 nearsym_old", text)
                text = re.sub(r"\bnearsym\.", "nearsym_old.", text)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)


def extracted(extract: Callable[..., Any], source: bytes, spec: Any) -> tuple[float, bytes]:
    started = time.thread_time()
    try:
        blob = extract(source, spec, mentions=False).encode()
    except Exception as error:  # TooBroken: the same in both, or not
        blob = type(error).__name__.encode()
    return time.thread_time() - started, blob


def main(old_server: str, root: str, rounds: int) -> None:
    from nearsym.extract.definitions import extract_defs
    from nearsym.workspace.config import Config
    from nearsym.workspace.discovery import discover

    with tempfile.TemporaryDirectory() as folder:
        renamed_copy(old_server, folder)
        sys.path.insert(0, folder)
        from nearsym_old.extract.definitions import extract_defs as old_extract_defs
        from nearsym_old.extract.languages import language_named as old_language

        files = list(discover(root, Config()))
        seconds = {"old": 0.0, "new": 0.0}
        digests = {"old": hashlib.sha256(), "new": hashlib.sha256()}
        differ: list[str] = []
        for turn in range(rounds):
            for k, file in enumerate(files):
                try:
                    with open(file.path, "rb") as f:
                        source = f.read()
                except OSError:
                    continue
                both = [
                    ("old", old_extract_defs, old_language(file.language.name)),
                    ("new", extract_defs, file.language),
                ]
                blobs = {}
                for name, extract, spec in both if (k + turn) % 2 else both[::-1]:
                    spent, blobs[name] = extracted(extract, source, spec)
                    seconds[name] += spent
                    if turn == 0:
                        digests[name].update(blobs[name])
                if turn == 0 and blobs["old"] != blobs["new"]:
                    differ.append(file.rel)
    old, new = seconds["old"] / rounds, seconds["new"] / rounds
    print(f"files {len(files)}  old {old:.2f} s  new {new:.2f} s  new/old {new / old:.3f}")
    print(f"blobs: {'the same' if not differ else f'{len(differ)} files differ'}")
    for rel in differ[:20]:
        print("  differs:", rel)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 1)
