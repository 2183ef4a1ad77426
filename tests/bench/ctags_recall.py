"""Completeness against universal-ctags, per language, on real code.

For each folder, `ctags -R` lists its definitions; nearsym indexes the same
folder. Recall is the share of ctags' definitions of the comparable kinds
(functions, methods, classes and other types, constants, enumerators,
macros) that nearsym also has at the same file, line and name. Also
reported: what nearsym finds that ctags has no tag for at all (any kind), and a sample of the misses
by ctags kind so they can be explained.

    python tests/bench/ctags_recall.py LANGUAGE=DIR [LANGUAGE=DIR ...] [--misses N]

LANGUAGE is nearsym's name (python, go, java, c, cpp, rust, typescript, ...).
Needs Debian's `universal-ctags`. `tests/bench/prepare_corpora.sh` fetches
the corpora used in the README from the package registries.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config
from nearsym.workspace.indexer import index_into

CTAGS_LANGUAGE = {
    "python": "Python", "go": "Go", "java": "Java", "c": "C", "cpp": "C++",
    "rust": "Rust", "typescript": "TypeScript", "javascript": "JavaScript",
    "csharp": "C#", "ruby": "Ruby", "php": "PHP", "bash": "Sh", "lua": "Lua",
    "kotlin": "Kotlin", "scala": "Scala", "elixir": "Elixir", "haskell": "Haskell",
    "ocaml": "OCaml", "julia": "Julia", "zig": "Zig", "swift": "Swift",
}  # fmt: skip

COMPARABLE = {
    "function", "func", "method", "member", "class", "struct", "interface", "trait",
    "enum", "typedef", "type", "alias", "union", "constant", "const", "macro",
    "enumerator", "enumConstant", "methodSpec", "module", "namespace", "singletonMethod",
    "implementation", "object", "protocol", "record", "annotation", "constructor",
}  # fmt: skip
"""ctags kind names of the definitions people jump to. Variables, fields of
plain data, parameters, locals, imports and packages are left out."""

SKIP_KINDS_BY_LANGUAGE = {
    # ctags' Python `member` is a method; Go's `member` is a struct field, C's
    # a struct member: fields are not in the comparable set for those.
    "go": {"member"},
    "c": {"member"},
    "cpp": {"member"},
    # A Rust `implementation` is an impl block (a container, not a symbol).
    "rust": {"implementation"},
    # ctags tags a Python `import x` as a `namespace`: an import, not a definition.
    "python": {"namespace"},
}


def ctags_definitions(language: str, root: str) -> list[tuple[str, int, str, str]]:
    ctags_name = CTAGS_LANGUAGE[language]
    command = ["ctags", "-R", "--fields=+nK", "--extras=-F", "--output-format=json"]
    if language == "c":
        command.append("--langmap=C:+.h")  # ctags reads .h as C++ unless told
    command += [f"--languages={ctags_name}", "-f", "-", "."]
    out = subprocess.run(command, cwd=root, capture_output=True, check=True).stdout
    skip = SKIP_KINDS_BY_LANGUAGE.get(language, set())
    rows = []
    for line in out.decode("utf-8", "replace").splitlines():
        if not line.startswith("{"):
            continue
        try:
            tag = json.loads(line)
        except json.JSONDecodeError:
            continue  # a tag whose pattern held a raw line break
        if tag.get("_type") != "tag" or "line" not in tag:
            continue
        kind = str(tag.get("kind", ""))
        name = str(tag["name"])
        if language == "lua":
            # `T:method` and `T['key']` are nearsym's `T.method` and `T.key`
            name = re.sub(r"\[['\"](.*?)['\"]\]", r".\1", name.replace(":", "."))
        rows.append(
            (str(tag["path"]).removeprefix("./"), int(tag["line"]), name,
             kind if kind not in skip else "~" + kind)
        )  # fmt: skip
    return rows


def measure(language: str, root: str, misses: int) -> dict[str, object]:
    started = time.perf_counter()
    every = ctags_definitions(language, root)
    # ctags makes up names for anonymous things (`__anonXXXX` structs,
    # `AnonymousFunctionXXXX`, `anonFuncXXXX`): nothing a person types.
    made_up = ("__anon", "AnonymousFunction", "anonFunc")
    expected = [e for e in every if e[3] in COMPARABLE and not e[2].startswith(made_up)]
    ctags_seconds = time.perf_counter() - started
    index = SymbolIndex(root)
    started = time.perf_counter()
    index_into(index, Config(max_file_bytes=5_000_000))
    nearsym_seconds = time.perf_counter() - started
    mine = [
        s
        for s in index.all_symbols()
        if s.language == language or (language == "c" and s.language == "cpp")
    ]
    # ctags names some definitions by their qualified name (Lua `M.f`).
    ours = {(s.path, s.span.line + 1, s.name) for s in mine}
    ours |= {(s.path, s.span.line + 1, s.qualified_name) for s in mine}
    indexed_files = {p for p, _, _ in ours} | set(index.files)
    compared = [e for e in expected if e[0] in indexed_files]
    found = [e for e in compared if (e[0], e[1], e[2]) in ours]
    missed = [e for e in compared if (e[0], e[1], e[2]) not in ours]
    by_kind = collections.Counter(e[3] for e in missed)
    theirs = {(p, ln, n) for p, ln, n, _ in every}
    extra = len(
        [
            s
            for s in mine
            if (s.path, s.span.line + 1, s.name) not in theirs
            and (s.path, s.span.line + 1, s.qualified_name) not in theirs
        ]
    )
    report: dict[str, object] = {
        "language": language,
        "ctags": len(expected),
        "compared": len(compared),
        "outside_nearsym_walk": len(expected) - len(compared),
        "recall": len(found) / max(1, len(compared)),
        "nearsym_only": extra,
        "missed_by_kind": dict(by_kind.most_common()),
        "ctags_seconds": round(ctags_seconds, 2),
        "nearsym_seconds": round(nearsym_seconds, 2),
    }
    if misses:
        report["sample_misses"] = [f"{p}:{ln} {n} ({k})" for p, ln, n, k in missed[:misses]]
    return report


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("pairs", nargs="+", metavar="LANGUAGE=DIR")
    parser.add_argument("--misses", type=int, default=0, help="print this many missed definitions")
    args = parser.parse_args()
    print(
        "| language | ctags defs | compared | recall | nearsym only | missed by ctags kind | ctags s | nearsym s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for pair in args.pairs:
        language, _, root = pair.partition("=")
        r = measure(language, os.path.abspath(root), args.misses)
        kinds = ", ".join(f"{k} {n}" for k, n in r["missed_by_kind"].items())  # type: ignore[attr-defined]
        print(
            f"| {language} | {r['ctags']} | {r['compared']} | {r['recall']:.3f} | "
            f"{r['nearsym_only']} | {kinds or '-'} | {r['ctags_seconds']} | {r['nearsym_seconds']} |"
        )
        for line in r.get("sample_misses", []):  # type: ignore[attr-defined]
            print(f"    {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
