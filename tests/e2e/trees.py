"""Generated workspaces large enough that indexing them takes a while."""

from __future__ import annotations

from pathlib import Path


def write_tree(root: Path, files: int, defs: int = 40, prefix: str = "gen") -> Path:
    """`files` Python files in folders of 50, each with `defs` functions
    named `{prefix}_{file}_{n}` and a class, so every name is unique."""
    for f in range(files):
        folder = root / f"pkg{f // 50:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"class {prefix.title()}Class{f}:\n    value = {f}\n\n"]
        for n in range(defs):
            lines.append(
                f"def {prefix}_{f}_{n}(argument, other=None):\n"
                f"    '''Return the sum for case {n}.'''\n"
                f"    total = argument + {n}\n"
                f"    return [total for _ in range({n % 7})]\n\n"
            )
        (folder / f"mod{f:04d}.py").write_text("".join(lines))
    return root
