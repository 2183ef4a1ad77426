"""A held-out Go case set for `nearsym eval`, made from a Go tree's own uses.

For files drawn at random (a fixed seed) from a Go tree, each use of an
imported package's name (`strings.HasPrefix` in a file importing
`strings`) whose package folder defines exactly one top-level `HasPrefix`
becomes a case: that file open, that definition wanted, typed whole, as
its first three and five characters, and as its word initials (`HP`). One
case per use, one use per file, each (package, name) once. The answer is
the definition Go's own import resolves to, so no resolver is needed; like
the golden sets', each case's open file uses the name.

    python tests/bench/go_cases.py /usr/share/go-1.19/src 300 > go.jsonl
    mkdir -p corpora && ln -s /usr/share/go-1.19/src corpora/go
    nearsym eval go.jsonl --corpora corpora

docs/ranking.md has the figures on Go 1.19's library.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from collections import defaultdict

import tree_sitter as ts
import tree_sitter_go

from nearsym.index.store import SymbolIndex
from nearsym.workspace.config import Config
from nearsym.workspace.indexer import index_into

_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|$)|[A-Z]?[a-z0-9]+|[A-Z]+")


def uses(source: bytes, parser: ts.Parser) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The file's imports (local name -> path) and its `name.Field` uses."""
    imports: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    stack = [parser.parse(source).root_node]
    while stack:
        node = stack.pop()
        if node.type == "import_spec":
            path_node = node.child_by_field_name("path")
            if path_node is None or path_node.text is None:
                continue
            path = path_node.text.decode().strip('"`')
            alias = node.child_by_field_name("name")
            local = alias.text.decode() if alias is not None and alias.text else path.split("/")[-1]
            imports[local] = path
            continue
        if node.type == "selector_expression":
            operand = node.child_by_field_name("operand")
            field = node.child_by_field_name("field")
            if (
                operand is not None
                and operand.type == "identifier"
                and operand.text
                and field is not None
                and field.text
            ):
                found.append((operand.text.decode(), field.text.decode()))
        stack.extend(node.children)
    return imports, found


def main(root: str, sites: int) -> None:
    parser = ts.Parser(ts.Language(tree_sitter_go.language()))
    index = SymbolIndex(root)
    index_into(index, Config())
    top: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
    same_name: dict[str, int] = defaultdict(int)
    for rel in index.files:
        for s in index.symbols_of(rel):
            same_name[s.name] += 1
            if not s.container and rel.endswith(".go") and not rel.endswith("_test.go"):
                top[(os.path.dirname(rel), s.name)].append((rel, s.span.line + 1))
    files = sorted(r for r in index.files if r.endswith(".go") and "testdata" not in r)
    rng = random.Random(7)
    rng.shuffle(files)
    seen: set[tuple[str, str]] = set()
    for rel in files:
        if len(seen) >= sites:
            break
        with open(os.path.join(root, rel), "rb") as f:
            imports, found = uses(f.read(), parser)
        rng.shuffle(found)
        for local, name in found:
            package = imports.get(local)
            if package is None or "." in package.split("/")[0]:  # outside the tree
                continue
            where = top.get((package, name)) or top.get((f"vendor/{package}", name))
            if not where or len(where) != 1 or (package, name) in seen:
                continue
            seen.add((package, name))
            path, line = where[0]
            base = {
                "corpus": "go",
                "open_file": rel,
                "expected": {"path": path, "line": line, "name": name},
                "n_same_name": same_name[name],
            }
            case = f"go:{len(seen):04d}"
            typed = {"full": name}
            if len(name) > 4:
                typed["prefix3"] = name[:3]
            if len(name) > 6:
                typed["prefix5"] = name[:5]
            words = _WORDS.findall(name)
            if len(words) >= 2:
                typed["initials"] = "".join(w[0] for w in words)
            for variant, query in typed.items():
                print(
                    json.dumps(
                        {"id": f"{case}:{variant}", "query": query, "variant": variant, **base}
                    )
                )
            break
    print(f"{len(seen)} uses from {root}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300)
