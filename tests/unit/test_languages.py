"""Every language's golden fixture and its expected symbol table.

`tests/fixtures/languages/<sample>` is a small realistic source file with
every kind of definition its language has; `<sample>.symbols` is the table
a person checked: one definition a line, `line  kind  container.name`.
A deliberate change regenerates the tables for review:

    NEARSYM_UPDATE_SYMBOLS=1 python -m pytest tests/unit/test_languages.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from nearsym.core.model import Kind
from nearsym.extract.definitions import extract_symbols
from nearsym.extract.grammar import load_grammar
from nearsym.extract.languages import LANGUAGES, language_for_path, language_for_shebang

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"
SAMPLES = sorted(p for p in FIXTURES.iterdir() if p.suffix != ".symbols")


def table(sample: Path) -> str:
    spec = language_for_path(sample.name)
    assert spec is not None, sample
    rows = [
        f"{s.span.line + 1}  {s.kind.name.lower()}  "
        + (f"{s.container}.{s.name}" if s.container else s.name)
        for s in extract_symbols(sample.read_bytes(), spec, "/ws", sample.name)
    ]
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_symbol_table(sample: Path) -> None:
    expected = sample.with_name(sample.name + ".symbols")
    got = table(sample)
    if os.environ.get("NEARSYM_UPDATE_SYMBOLS"):
        expected.write_text(got)
    assert got == expected.read_text()


def test_every_language_has_a_fixture_and_loads() -> None:
    covered = {language_for_path(p.name).name for p in SAMPLES}  # type: ignore[union-attr]
    for spec in LANGUAGES:
        load_grammar(spec)
    wanted = {s.name for s in LANGUAGES} - {"ocaml_interface"}
    assert wanted <= covered | {"python", "javascript", "typescript", "tsx", "go"}
    assert len(wanted) >= 22


def test_each_sample_has_functions_and_types() -> None:
    for sample in SAMPLES:
        spec = language_for_path(sample.name)
        assert spec is not None
        kinds = {s.kind for s in extract_symbols(sample.read_bytes(), spec, "/ws", sample.name)}
        assert kinds & {Kind.FUNCTION, Kind.METHOD}, sample.name
        if spec.name not in ("bash", "lua"):
            assert kinds & {Kind.CLASS, Kind.STRUCT, Kind.INTERFACE, Kind.MODULE}, sample.name


@pytest.mark.parametrize(
    ("line", "language"),
    [
        (b"#!/usr/bin/env bash", "bash"),
        (b"#!/bin/sh -e", "bash"),
        (b"#!/usr/bin/env python3", "python"),
        (b"#!/usr/bin/python3.11", "python"),
        (b"#!/usr/bin/env -S node --harmony", "javascript"),
        (b"# not a shebang", None),
    ],
)
def test_shebangs(line: bytes, language: str | None) -> None:
    spec = language_for_shebang(line)
    assert (spec.name if spec else None) == language


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("Rakefile", "ruby"),
        ("x.hpp", "cpp"),
        ("x.h", "c"),
        ("x.mli", "ocaml_interface"),
        ("x.txt", None),
    ],
)
def test_file_names(name: str, language: str | None) -> None:
    spec = language_for_path(name)
    assert (spec.name if spec else None) == language


def lsp_glob(pattern: str) -> re.Pattern[str]:
    """An LSP glob pattern as a regex: `*` one path segment's characters,
    `**` any segments, `?` one character, `{a,b}` either (the spec's
    syntax; character ranges are not used by the server)."""
    out, at = "", 0
    while at < len(pattern):
        if pattern.startswith("**/", at):
            out, at = out + "(?:.*/)?", at + 3
        elif pattern[at] == "*":
            out, at = out + "[^/]*", at + 1
        elif pattern[at] == "?":
            out, at = out + "[^/]", at + 1
        elif pattern[at] == "{":
            end = pattern.index("}", at)
            out += "(?:" + "|".join(re.escape(a) for a in pattern[at + 1 : end].split(",")) + ")"
            at = end + 1
        else:
            out, at = out + re.escape(pattern[at]), at + 1
    return re.compile(out + r"\Z")


def test_the_client_watches_every_file_the_registry_indexes() -> None:
    """The globs a client is asked to watch cover every extension and file
    name of every registered language (a file they miss would be indexed by
    a walk but never re-read when it changes), and nothing else."""
    from nearsym.lsp.values import SOURCE_GLOBS

    globs = [lsp_glob(g) for g in SOURCE_GLOBS]
    for spec in LANGUAGES:
        for path in [f"src/deep/x{e}" for e in spec.extensions] + [
            f"src/deep/{n}" for n in spec.file_names
        ]:
            assert language_for_path(path) is spec
            assert any(g.match(path) for g in globs), (spec.name, path)
            assert any(g.match(path.rsplit("/", 1)[1]) for g in globs), (spec.name, path)
    for unknown in ["README.md", "src/x.pyc", "src/Makefile", "src/x.py.orig"]:
        assert language_for_path(unknown) is None
        assert not any(g.match(unknown) for g in globs), unknown
