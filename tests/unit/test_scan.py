"""The C scans (`nearsym.extract._scan`) give what their Python functions
give, on random bytes and on real sources; and the install built them."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import tree_sitter as ts
from hypothesis import given, settings
from hypothesis import strategies as st

from nearsym.extract import comments, folds, mentions, native
from nearsym.extract.folds import spelled_tokens
from nearsym.extract.grammar import load_grammar
from nearsym.extract.languages import (
    C_FLUSH,
    LANGUAGES,
    LanguageSpec,
    Skim,
    language_for_path,
)
from nearsym.extract.mentions import scan_with_numpy

ROOT = Path(__file__).resolve().parents[2]


def test_the_install_built_the_c_scans() -> None:
    """Every machine nearsym is tested on has a compiler and Python's
    headers, so a missing module means the build broke (pip says so only
    in its verbose log: the extension is optional)."""
    assert native.mentions_of is _scan().mentions_of
    assert native.find_folds is _scan().find_folds
    assert set(folds.NATIVE_FLUSH.values()) == {0, _scan().FLUSH_HASH | _scan().FLUSH_LABEL}
    assert native.spelled is _scan().spelled
    assert native.fold_ranges is _scan().fold_ranges
    assert native.const_names is _scan().const_names


def test_every_skim_has_its_inner_tokens_in_c() -> None:
    """The C scan holds the regexes it was written from; each skim's are
    them word for word (an edit to one in `languages` fails here, and
    until the C follows it that skim is scanned in Python)."""
    skims = {spec.name: spec.skim for spec in LANGUAGES if spec.skim is not None}
    assert set(skims) == {"go", "java", "c"}
    assert {
        name: (skim.inner, skim.quiet) in native.SPELLED for name, skim in skims.items()
    } == dict.fromkeys(skims, True)


# Identifier bytes, digits, the separators that end them, a NUL, and bytes
# past ASCII: every class the scan tells apart.
TEXT = st.lists(
    st.sampled_from(
        [b"a", b"Z", b"_", b"$", b"7", b"0", b" ", b".", b"\n", b"\0", b"\xc3\xa9", b"\xff"]
    )
    | st.binary(max_size=4)
    | st.from_regex(rb"[A-Za-z_$][A-Za-z0-9_$]{0,300}", fullmatch=True),
    max_size=40,
).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(TEXT, max_size=6))
def test_c_mentions_are_numpys_on_any_bytes(sources: list[bytes]) -> None:
    assert mentions.mentions_of(sources) == scan_with_numpy(sources)


def test_c_mentions_are_numpys_on_long_tokens_and_real_sources() -> None:
    long = [b"x" * n for n in (1, 2, 7, 8, 9, 16, 17, 255, 256, 257, 1000)]
    edges = [b" ".join(long), b"", b"a", b"ab", b"9ab", b"$$", bytes(range(256)) * 3]
    real = [p.read_bytes() for p in sorted((ROOT / "server").rglob("*.[pc]*"))]
    stdlib = Path(sys.prefix if (Path(sys.prefix) / "lib").is_dir() else sys.base_prefix)
    real += [p.read_bytes() for p in sorted(Path(stdlib, "lib").glob("python3*/[a-e]*.py"))[:40]]
    for batch in (long, edges, real):
        assert mentions.mentions_of(batch) == scan_with_numpy(batch)
    assert len(real) > 80


# Code as the fold scan reads it: braces at line ends, indents of tabs and
# spaces, blank, preprocessor and label lines, comments, raw quotes, heads
# that forbid a fold, and CRLF.
CODE_PARTS = [
    b"{\n", b"}\n", b"\n", b"\r\n", b"\t", b"    ", b" ", b"{", b"}", b"x", b"f()", b";",
    b"switch", b"select", b"type", b"struct", b"/*", b"*/", b"//", b"*", b"#if X\n",
    b"out:", b"a::b", b"`", b'"""', b"\0", b"\r",
    b"{\n#ifdef X\n\tx;\n#endif\n}\n", b"{\n#\n\tx;\n}\n", b"{\nout:\n\tx;\n}\n",
    b"{\n\n\t#if Y\n\ty;\n}\n",
]  # fmt: skip
CODE = st.lists(st.sampled_from(CODE_PARTS), max_size=120).map(b"".join)

FLUSHES = {0: b"", 3: C_FLUSH}


def fold_skims() -> list[Skim]:
    skims = [spec.skim for spec in LANGUAGES if spec.skim is not None and spec.skim.blocks]
    assert {"go", "java", "c"} <= {spec.name for spec in LANGUAGES if spec.skim in skims}
    return skims


def both_folds(source: bytes, hits: list[int], skim: Skim) -> None:
    flush = folds.NATIVE_FLUSH[skim.flush]
    native = _scan().find_folds(source, hits, skim.lone_brace, flush, skim.raw_quote)
    assert native == folds.folds_in_python(source, hits, skim)
    ranges = [ts.Range(*args) for args in _scan().fold_ranges(source, native)]
    assert ranges == folds.ranges_in_python(source, native)


def _scan() -> Any:
    from nearsym.extract import _scan

    return _scan


@settings(max_examples=600, deadline=None)
@given(CODE, st.lists(st.integers(0, 400), max_size=6), st.data())
def test_c_folds_are_pythons_on_any_code(
    source: bytes, hits: list[int], data: st.DataObject
) -> None:
    skim = data.draw(st.sampled_from(fold_skims()))
    lone, flush = data.draw(st.booleans()), data.draw(st.sampled_from(sorted(FLUSHES)))
    skim = dataclasses.replace(skim, lone_brace=lone, flush=FLUSHES[flush])
    both_folds(source, sorted(hits), skim)
    both_folds(source, python_hits(source, spec_of(skim)), skim)


def python_hits(source: bytes, spec: LanguageSpec) -> list[int]:
    """`folds.spelled_tokens` of the skim's tokens, in Python."""
    grammar = load_grammar(spec)
    return spelled_tokens(source, grammar.inner, grammar.quiet)


def spec_of(skim: Skim) -> LanguageSpec:
    """The language whose skim reads like `skim` (its `inner` tokens)."""
    return next(s for s in LANGUAGES if s.skim is not None and s.skim.inner == skim.inner)


@pytest.mark.parametrize(
    "source",
    [
        b"\tx {\n" * 3000,
        b"\t\tf(a,\n\t\t\tb) {\n" * 1000,
        b"x {\n\n" * 3000,
        b"\tx {\n\t\ty\n" * 3000,
    ],
    ids=["one indent", "wrapped heads", "blank lines", "deeper lines"],
)
def test_unclosed_braces_cost_one_pass(source: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many `{` lines at one indent, none closed, made each brace search
    to the end of the file for its close (115 CPU seconds for a megabyte
    of them): a search a later brace would repeat is answered by the last
    one's result, in Python and in C alike."""
    made: list[Any] = []
    kept = folds._Found

    def counted(*args: Any) -> Any:
        made.append(kept(*args))
        return made[-1]

    monkeypatch.setattr(folds, "_Found", counted)
    for skim in fold_skims():
        hits = python_hits(source, spec_of(skim))
        both_folds(source, hits, skim)
        assert made[-1].scanned <= 3 * len(source)


def test_c_fold_ranges_refuse_folds_out_of_order_or_outside() -> None:
    source = b"a {\n\tx\n}\nb {\n\ty\n}\n"
    assert len(_scan().fold_ranges(source, [(2, 6), (10, 14)])) == 3
    assert _scan().fold_ranges(source, [])[0][2:] == (0, 0xFFFFFFFF)
    for wrong in ([(10, 14), (2, 6)], [(2, 12), (10, 14)], [(6, 2)], [(2, 99)]):
        with pytest.raises(ValueError):
            _scan().fold_ranges(source, wrong)
    # What is left out may start the file: the first fold then opens at -1.
    leading = [(-1, 4), (10, 14)]
    assert _scan().fold_ranges(source, leading) == [
        (tuple(r.start_point), tuple(r.end_point), r.start_byte, r.end_byte)
        for r in folds.ranges_in_python(source, leading)
    ]
    assert [r[2:] for r in _scan().fold_ranges(source, leading)] == [(4, 11), (14, 0xFFFFFFFF)]
    for wrong in ([(-2, 4)], [(2, 6), (-1, 8)]):
        with pytest.raises(ValueError):
            _scan().fold_ranges(source, wrong)


def test_every_skim_that_folds_has_its_flush_lines_in_c() -> None:
    assert all(skim.flush in folds.NATIVE_FLUSH for skim in fold_skims())


def traps_and_fixtures() -> list[tuple[str, bytes]]:
    """(a file name, its text): the skims' traps and hidden definitions
    from `test_skim`, and the Go, Java and C fixtures."""
    from . import test_skim

    sources: list[tuple[str, bytes]] = []
    for name in ("GO_FOLD_TRAPS", "C_FOLD_TRAPS", "JAVA_FOLD_TRAPS"):
        suffix = {"G": "a.go", "C": "a.c", "J": "A.java"}[name[0]]
        sources += [(suffix, text) for text in getattr(test_skim, name).values()]
    sources += [("a.go", test_skim.GO_HIDDEN), ("a.c", test_skim.C_HIDDEN)]
    sources += [("A.java", test_skim.JAVA_HIDDEN)]
    fixtures = ROOT / "tests" / "fixtures"
    for pattern in ("*.go", "*.java", "*.c", "*.h"):
        sources += [(p.name, p.read_bytes()) for p in sorted(fixtures.rglob(pattern))]
    return sources


def test_c_folds_are_pythons_on_the_traps_and_real_sources() -> None:
    folded = 0
    for path, source in traps_and_fixtures():
        spec = language_for_path(path)
        assert spec is not None and spec.skim is not None
        hits = python_hits(source, spec)
        both_folds(source, hits, spec.skim)
        folded += len(folds.find_folds(source, hits, spec.skim))
    assert folded > 20


# What the inner tokens' regexes tell apart: their words and others that
# hold them, word bytes and `$` and `.` before them, every kind of space,
# the braces, slashes, parentheses and arrows after them, and Java's
# literals with their escapes, semicolons and line ends.
TOKEN_PARTS = [
    b"type", b"struct", b"interface", b"new", b"class", b"enum", b"record", b"define",
    b"typedef", b"union", b"x", b"_", b"9", b"$", b".", b" ", b"\t", b"\n", b"\r", b"\f",
    b"\v", b"{", b"}", b"/", b"(", b")", b"-", b">", b"->", b";", b'"', b"'", b"\\", b"\0",
    b"\xc3\xa9", b"#", b"@", b"types", b"newer", b"*", b"`", b"//", b"/*", b"*/", b'"""',
]  # fmt: skip
TOKENS = st.lists(st.sampled_from(TOKEN_PARTS), max_size=60).map(b"".join)


@settings(max_examples=1500, deadline=None)
@given(TOKENS, st.sampled_from(["go", "java", "c"]))
def test_c_spelled_tokens_are_pythons_on_any_text(source: bytes, language: str) -> None:
    spec = next(s for s in LANGUAGES if s.name == language)
    assert spec.skim is not None
    python = python_hits(source, spec)
    assert _scan().spelled(source, native.SPELLED[spec.skim.inner, spec.skim.quiet]) == python
    assert folds.inner_hits(source, spec) == python


def test_c_spelled_tokens_are_pythons_on_the_traps_and_real_sources() -> None:
    sources = traps_and_fixtures()
    sources += [("a.c", p.read_bytes()) for p in sorted((ROOT / "server").rglob("*.c"))]
    found = 0
    for path, source in sources:
        spec = language_for_path(path)
        assert spec is not None and spec.skim is not None
        python = python_hits(source, spec)
        assert folds.inner_hits(source, spec) == python, path
        found += len(python)
    assert found > 100


@pytest.mark.parametrize(
    ("language", "source"),
    [
        ("java", b"new " * 700),
        ("java", b"new " * 700 + b"X() {"),
        ("java", b'new ("a;" ) ' * 300 + b"-> x"),
        ("java", b"new x ) new 'q' ) " * 200 + b";"),
        ("java", b'"new new ' * 300),
        ("c", b"struct " * 700 + b"{"),
        ("c", b"enum x \n" * 500 + b"/"),
        ("c", b"union u, " * 300),
    ],
)
def test_c_spelled_tokens_are_pythons_where_lookaheads_overlap(
    language: str, source: bytes
) -> None:
    """Each `new` (C's `struct`) looks ahead to the first byte that decides
    it; where one lookahead runs over the next token's, the C scan answers
    the second from the first (a megabyte of `new new ...` took 30 CPU
    seconds), and must find what Python's regexes find."""
    spec = next(s for s in LANGUAGES if s.name == language)
    assert spec.skim is not None
    number = native.SPELLED[spec.skim.inner, spec.skim.quiet]
    assert _scan().spelled(source, number) == python_hits(source, spec)


def test_c_spelled_tokens_refuses_a_skim_it_does_not_know() -> None:
    with pytest.raises(ValueError, match="no skim numbered 9"):
        _scan().spelled(b"type T int", 9)


# A Go const block's lines: names (keywords and `iota` among them, which
# refuse the block), spaces and tabs, commas, a type, values and comments.
NAME_PARTS = st.sampled_from(
    [b"A", b"_b", b"X9", b"gox", b"B_2", b"c", b"D", b"eE"] * 8
    + [b"iota", b"type", b"nil", b"goto"]
)
CONST_LINE = st.one_of(
    st.sampled_from([b"", b"\t", b"  // c", b"//x", b"\t// A, B = 1"]),
    st.tuples(
        st.sampled_from([b"", b"\t", b" \t ", b"    "]),
        st.lists(NAME_PARTS, min_size=1, max_size=4),
        st.sampled_from([b",", b", ", b" ,\t"]),
        st.sampled_from([b"", b" uint32", b"\tpkg.T"]),
        st.sampled_from([b"", b" = 1", b" = a.B(0x7), -(1 << 2)", b"\t=\tX"]),
        st.sampled_from([b"", b" // tail", b"\t//"]),
    ).map(lambda p: p[0] + p[2].join(p[1]) + b"".join(p[3:])),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(CONST_LINE, max_size=12), st.integers(0, 1 << 20))
def test_c_const_names_are_pythons_on_any_plain_block(lines: list[bytes], row: int) -> None:
    from nearsym.extract import consts

    body = b"".join(line + b"\n" for line in lines)
    if not consts._PLAIN.fullmatch(body):
        return  # `_plain_names` refuses it before either is asked
    python = consts.names_in_python(body, row)
    found = _scan().const_names(body, row)
    if python is None:
        assert found is None
    else:
        assert found is not None
        assert (found[0], found[1]) == (python[0], python[1].tobytes())


# Whole-line comments, and what stands beside them: code, literals, blank
# and carriage-return lines, backslashes, braces that fold, and the marks.
COMMENT_PARTS = [
    b"// c", b"/* b */", b"/*", b"*/", b"\n", b"\r\n", b" ", b"\t", b"x", b";", b'"',
    b"'", b"`", b'"""', b"\\", b"{\n", b"\n}\n", b"f() {\n", b"@deprecated", b"Obsolete",
    b"// Deprecated: no", b"\n\t// d\n", b"\nfunc f() {\n\ta() // c\n}\n",
    b"\nvoid f() {\n    // in\n    a();\n}\n", b"\nint f(void)\n{\n\treturn 0;\n}\n",
]  # fmt: skip
COMMENTS = st.lists(st.sampled_from(COMMENT_PARTS), max_size=50).map(b"".join)


@settings(max_examples=1500, deadline=None)
@given(COMMENTS, st.sampled_from(["go", "java", "c"]))
def test_c_quiet_folds_are_pythons_on_any_text(source: bytes, language: str) -> None:
    spec = next(s for s in LANGUAGES if s.name == language)
    assert spec.skim is not None
    found = folds.find_folds(source, python_hits(source, spec), spec.skim)
    python = comments.quiet_folds_in_python(source, re.compile(spec.skim.quiet), found)
    assert _scan().quiet_folds(source, native.QUIET[spec.skim.quiet], found) == python
    on = dataclasses.replace(spec, skim=dataclasses.replace(spec.skim, quiet_lines=True))
    assert comments.quiet_folds(source, on, found) == python


def test_c_quiet_folds_are_pythons_on_the_traps_and_real_sources() -> None:
    sources = traps_and_fixtures()
    sources += [("a.c", p.read_bytes()) for p in sorted((ROOT / "server").rglob("*.c"))]
    added = 0
    for path, source in sources:
        spec = language_for_path(path)
        assert spec is not None and spec.skim is not None
        found = folds.find_folds(source, python_hits(source, spec), spec.skim)
        python = comments.quiet_folds_in_python(source, re.compile(spec.skim.quiet), found)
        assert _scan().quiet_folds(source, native.QUIET[spec.skim.quiet], found) == python
        assert set(found) <= set(python), path
        added += len(python) - len(found)
    assert added > 50


def test_c_quiet_folds_refuses_a_skim_it_does_not_know() -> None:
    with pytest.raises(ValueError, match="no skim numbered 9"):
        _scan().quiet_folds(b"// c\n", 9, [])
