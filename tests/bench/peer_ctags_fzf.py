"""The peer row for the golden set: universal-ctags + `fzf --filter`.

This is the fzf.vim `:Tags` workflow: `ctags -R` writes a tags file for the
corpus, and fzf filters its lines by what was typed, matching the name and
file columns (`--nth 1..2`, `--tiebreak=begin`, as fzf.vim passes them). The
cases, the correctness rule and the figures are nearsym's own
(`nearsym.tools.evaluate`), so the row is comparable with `nearsym eval`'s.

    python tests/bench/peer_ctags_fzf.py ../shared/golden/dev.jsonl --corpora DIR

Needs Debian's `universal-ctags` and `fzf` (apt-get install universal-ctags fzf).
Keystrokes to first place are measured too (one fzf run per prefix).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from functools import cache

from nearsym.tools.evaluate import EVAL_DEPTH, Case, Corpora, Tally, load_cases

FZF = ["fzf", "--delimiter", "\t", "--nth", "1..2", "--tiebreak=begin"]


@cache
def tags_file(root: str) -> str:
    out = os.path.join(root, ".nearsym-peer-tags")
    subprocess.run(
        ["ctags", "-R", "--fields=+n", "--extras=-F", "-f", out, "."],
        cwd=root,
        check=True,
    )
    return out


def ranked(root: str, query: str) -> list[tuple[str, str, int]]:
    with open(tags_file(root), "rb") as tags:
        lines = [line for line in tags if not line.startswith(b"!_TAG_")]
    result = subprocess.run(
        [*FZF, "--filter", query], input=b"".join(lines), capture_output=True, check=False
    )
    rows = []
    for line in result.stdout.decode("utf-8", "replace").splitlines()[:EVAL_DEPTH]:
        cols = line.split("\t")
        number = next((int(c[5:]) for c in cols if c.startswith("line:")), 0)
        rows.append((cols[0], cols[1].removeprefix("./"), number))
    return rows


def correct(case: Case, row: tuple[str, str, int]) -> bool:
    name, path, line = row
    wanted = [case.line] + ([case.decorator_line] if case.decorator_line else [])
    return name == case.name and path == case.path and any(abs(line - w) <= 1 for w in wanted)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases")
    parser.add_argument("--corpora", required=True)
    args = parser.parse_args()
    with open(args.cases, encoding="utf-8") as f:
        cases = load_cases(f)
    corpora = Corpora(args.corpora)
    tallies: dict[str, Tally] = {}
    keys: list[int] = []
    seen: set[str] = set()
    for case in cases:
        root = corpora.root(case.corpus)
        rows = ranked(root, case.query)
        rank = next((i for i, r in enumerate(rows, 1) if correct(case, r)), None)
        for group in (
            "overall",
            f"variant:{case.variant}",
            "ambiguous" if case.ambiguous else "unique",
        ):
            tallies.setdefault(group, Tally()).add(rank)
        if case.case_id not in seen:
            seen.add(case.case_id)
            k = next(
                (
                    k
                    for k in range(1, len(case.name) + 1)
                    if (top := ranked(root, case.name[:k])) and correct(case, top[0])
                ),
                len(case.name) + 1,
            )
            keys.append(k)
    keys.sort()
    print("| group | n | MRR | Hit@1 | Hit@10 |")
    print("|---|---|---|---|---|")
    for group, tally in sorted(tallies.items()):
        row = tally.row()
        print(
            f"| {group} | {row['n']} | {row['mrr']:.3f} | {row['hit1']:.3f} | {row['hit10']:.3f} |"
        )
    median = (
        keys[len(keys) // 2]
        if len(keys) % 2
        else (keys[len(keys) // 2 - 1] + keys[len(keys) // 2]) / 2
    )
    print(f"keystrokes to first place: median {median}, mean {sum(keys) / len(keys):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
