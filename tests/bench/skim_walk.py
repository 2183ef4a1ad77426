"""CPU seconds of parsing (whole files, and with the skim's folds left out),
of the skimmed definitions query and of the full one, over every file of a
language in a tree; and whether the skimmed extraction found the same
definitions as the full one.

    python tests/bench/skim_walk.py /usr/share/go-1.19/src .go

For C, whose whole parse recovers from macros unlike a folded one, files
may differ; `tests/bench/ctags_recall.py` is the check there.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time

from nearsym.extract import folds
from nearsym.extract.definitions import extract_defs
from nearsym.extract.grammar import load_grammar
from nearsym.extract.grammar import parser as parser_of
from nearsym.extract.languages import language_for_path


def main(root: str, extension: str) -> None:
    spec = language_for_path("x" + extension)
    if spec is None or spec.skim is None:
        raise SystemExit(f"no skim for {extension}")
    full = dataclasses.replace(spec, skim=None)
    grammar, full_grammar, parser = load_grammar(spec), load_grammar(full), parser_of(spec)
    parse = folded = skim = walk = 0.0
    files = differ = definitions = 0
    for folder, _, names in os.walk(root):
        for name in names:
            if not name.endswith(extension):
                continue
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    source = f.read()
            except OSError:
                continue
            files += 1
            t0 = time.process_time()
            tree = parser.parse(source)
            t1 = time.process_time()
            hits = folds.spelled_tokens(source, grammar.inner, grammar.quiet)
            folds.skim_matches(spec, grammar.query, source, tree.root_node, hits)
            t2 = time.process_time()
            folds.skim_matches(full, full_grammar.query, source, tree.root_node, [])
            t3 = time.process_time()
            folds.parse(source, spec, hits)
            t4 = time.process_time()
            parse, skim, walk = parse + t1 - t0, skim + t2 - t1, walk + t3 - t2
            folded += t4 - t3
            a, b = extract_defs(source, spec), extract_defs(source, full)
            definitions += len(a)
            if (a.names, a.containers, a.kinds, list(a.spans)) != (
                b.names, b.containers, b.kinds, list(b.spans),
            ):  # fmt: skip
                differ += 1
                print("differs:", os.path.join(folder, name))
    print(f"{files} files, {definitions} definitions, {differ} files differ")
    print(
        f"CPU seconds: parse {parse:.2f} (folded {folded:.2f}),"
        f" skimmed query {skim:.2f}, full query {walk:.2f}"
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
