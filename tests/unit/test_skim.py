"""The skim (the definitions query kept out of bodies that cannot hold a
definition) finds exactly what the full query finds."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tree_sitter as ts

from nearsym.core.filedefs import DEPRECATED_BIT
from nearsym.extract.definitions import extract_defs
from nearsym.extract.folds import find_folds, parse, skim_matches, skimmed, spelled_tokens
from nearsym.extract.grammar import load_grammar, node_text
from nearsym.extract.languages import LANGUAGES, LanguageSpec, language_for_path

from .helpers import full, rows

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

GO_HIDDEN = b"""package p

var table = struct{ inTable int }{1}

// A doc comment that says type and struct { x } in words.
func Plain(a int) int {
    switch v := any(a).(type) {
    case int:
        return v
    }
    ch := make(chan struct{})
    var e interface{}
    _, _ = ch, e
    return a
}

func WithLocals() {
    type localType int
    type localStruct struct {
        localField int
    }
    type localIface interface {
        LocalMethod()
    }
    x := struct{ literalField string }{"a"}
    _ = x
}

func Param(p struct{ paramField int }) interface{ ResultMethod() } {
    return nil
}

func (s *Server) Method() {
    type /* odd */ commented int
}

type Server struct {
    Field int
    Inner struct {
        Nested int
    }
}

const (
    A, B = 1, 2
)

var (
    x, y = 1, 2
    fn   = func() {
        type inInit int
    }
)
"""

JAVA_HIDDEN = b"""package p;

import java.util.List;

public class Outer {
    private static final Runnable FIELD = new Runnable() {
        public void inFieldInit() {}
    };
    private int plain = 1;

    static {
        Object o = new Object() { void inStatic() {} };
    }

    public void noDefs(int a) {
        String s = "class record enum";
        throw new IllegalArgumentException("bad; " + a);
    }

    public Object literal() {
        return Outer.class;
    }

    public Object anon() {
        return new Thread("a;b") {
            public void inAnonWithSemicolonString() {}
        };
    }

    public Object lambdaArg() {
        return new Holder(() -> { go(); stop(); }) {
            void inAnonWithLambda() {}
        };
    }

    public Object apostrophe() {
        return new Holder(1, // don't
                2) {
            void inAnonAfterComment() {}
        };
    }

    public void locals() {
        class LocalClass { void localMethod() {} }
        record LocalRecord(int a) {}
        enum LocalEnum { ONE }
        interface LocalIface { void m(); }
    }

    enum Kind {
        A { void inConstantBody() {} },
        B;
        void enumMethod() {}
    }

    interface Api {
        void apiMethod();
        default void defaulted() { Runnable r = new Runnable() { public void run() {} }; }
    }

    record Point(int x, int y) {
        Point {
            Object o = new Object() { void inCompact() {} };
        }
    }

    class Inner {
        class Deeper {
            void deep() {}
        }
    }
}
"""


C_HIDDEN = b"""#include <stdio.h>

#define TOP 1

struct top { int field; };

static int plain(int a)
{
	if (a > 0) {
		a--;
	}
	return a;
}

int with_locals(void)
{
	struct local_struct { int local_field; } s;
	enum local_enum { LOCAL_ONE, LOCAL_TWO };
	typedef int local_type;
	union { int u_a; long u_b; } u;
#define IN_BODY 2
	return IN_BODY + LOCAL_ONE + s.local_field;
}

#ifdef CONFIG_X
static void in_ifdef(void)
{
	struct /* a comment */ { int commented_field; } c;
}
#else
static void in_else(void)
{
	plain(1);
}
#endif

static const struct ops table = {
	.open = plain,
};

int after(void) { return 0; }
"""


def same(path: str, source: bytes) -> list[tuple[str, str, int, tuple[int, ...]]]:
    spec = language_for_path(path)
    assert spec is not None and spec.skim is not None
    skimmed = rows(extract_defs(source, spec))
    assert skimmed == rows(extract_defs(source, full(spec)))
    return skimmed


def names(found: list[tuple[str, str, int, tuple[int, ...]]]) -> set[str]:
    return {name for name, _, _, _ in found}


def test_go_definitions_hidden_in_bodies_are_found() -> None:
    found = names(same("hidden.go", GO_HIDDEN))
    assert {
        "inTable", "Plain", "WithLocals", "localType", "localStruct", "localField",
        "localIface", "LocalMethod", "literalField", "Param", "paramField", "ResultMethod",
        "Method", "commented", "Server", "Field", "Inner", "Nested", "A", "B", "x", "y", "fn",
        "inInit",
    } <= found  # fmt: skip


def test_c_definitions_hidden_in_bodies_are_found() -> None:
    found = names(same("hidden.c", C_HIDDEN))
    assert {
        "TOP", "top", "field", "plain", "with_locals", "local_struct", "local_field",
        "local_enum", "LOCAL_ONE", "LOCAL_TWO", "local_type", "u_a", "u_b", "IN_BODY",
        "in_ifdef", "commented_field", "in_else", "table", "after",
    } <= found  # fmt: skip


def test_java_definitions_hidden_in_bodies_are_found() -> None:
    found = names(same("Hidden.java", JAVA_HIDDEN))
    assert {
        "Outer", "FIELD", "inFieldInit", "plain", "inStatic", "noDefs", "literal", "anon",
        "inAnonWithSemicolonString", "lambdaArg", "inAnonWithLambda", "apostrophe",
        "inAnonAfterComment", "LocalClass", "localMethod", "LocalRecord", "LocalEnum", "ONE",
        "LocalIface", "Kind", "inConstantBody", "enumMethod", "Api", "apiMethod", "defaulted",
        "run", "Point", "inCompact", "Inner", "Deeper", "deep",
    } <= found  # fmt: skip


C_FLAT = b"""#include <linux/types.h>
#define PLAIN 1
#define CALL(x) ((x) + 1)
#pragma once
#ifdef CONFIG_X
#define INSIDE 2
#include "local.h"
#endif
struct s { int field; };
int v;
"""


def test_each_c_define_is_matched_once() -> None:
    """A `#define` is found by the outline walk that finds every child of
    the file; its own walk found it a second time (half the matches of the
    kernel's `drivers/`, with a walk for each)."""
    spec = language_for_path("flat.h")
    assert spec is not None
    source, hits, tree = skimmed(C_FLAT, spec)
    query = load_grammar(spec).query
    matched = [
        node_text(source, captures["name"][0])
        for _, captures in skim_matches(spec, query, source, tree.root_node, hits)
        if "name" in captures
    ]
    assert [m for m in sorted(matched) if m.isupper()] == ["CALL", "INSIDE", "PLAIN"]
    assert names(same("flat.h", C_FLAT)) == {"CALL", "INSIDE", "PLAIN", "field", "s", "v"}


@pytest.mark.parametrize("spec", [s for s in LANGUAGES if s.skim is not None], ids=lambda s: s.name)
def test_the_skims_name_node_types_their_grammar_has(spec: LanguageSpec) -> None:
    assert spec.skim is not None
    language = load_grammar(spec).language
    for kind in spec.skim.outline | spec.skim.guarded | spec.skim.flat | spec.skim.blocks:
        assert language.id_for_node_kind(kind, True), f"{spec.name} has no {kind}"


@pytest.mark.parametrize(
    "path",
    sorted(
        str(p.relative_to(FIXTURES))
        for p in FIXTURES.rglob("*")
        if (spec := language_for_path(str(p))) is not None and spec.skim is not None
    ),
)
def test_fixtures_skimmed_equal_full(path: str) -> None:
    assert same(path, (FIXTURES / path).read_bytes())


GO_TOKENS = [
    (b"type T int", True),
    (b"switch x.(type) {", False),
    (b"switch x.( type ) {", False),
    (b"types.Int", False),
    (b"struct{}", False),
    (b"struct { }", False),
    (b"struct{ a int }", True),
    (b"struct /* c */ {}", True),
    (b"interface{}", False),
    (b"interface{ M() }", True),
    (b"mystruct{a}", False),
    # In a comment or a literal a token is no hit; a quote or a comment
    # left open opens nothing.
    (b"// the type T int", False),
    (b"/* type T\nint */ x := 1", False),
    (b'x := "type T int"', False),
    (b"x := `\ntype T int\n`", False),
    (b"x := '\\'' + 1; type T int", True),
    (b'x := "a\\"b"; type T int', True),
    (b'x := "open\ntype T int', True),
    (b"/* open\ntype T int", True),
    (b"x := 1 / 2 // type T", False),
]

JAVA_TOKENS = [
    (b"return Foo.class;", False),
    (b"class Local {}", True),
    (b"record R(int a) {}", True),
    (b'throw new IllegalStateException("x" + y);', False),
    (b"int[] a = new int[] {1, 2};", False),
    (b"x = new Foo(); if (a) { b(); }", False),
    (b"new Foo(a, b) {", True),
    (b'new Foo("a;b") {', True),
    (b"new Foo(';') {", True),
    (b"new Foo(() -> { a(); }) {", True),
    (b"new Foo(x) /* c */ {", True),
    (b"renew(a) {", False),
    (b"/** Returns the class of this. */", False),
    (b"// a new Foo() { would be", False),
    (b'String s = "class A {}";', False),
    (b'String s = """\n  class A {}\n""";', False),
    (b'String s = """\n  \\""" class A {}\n""";', False),
    (b'String s = """ open; class Local {}', True),
    (b"char c = '\"'; class Local {}", True),
    (b'String s = "/*"; class Local {} /* */', True),
]


C_TOKENS = [
    (b"struct foo { int a; } x;", True),
    (b"struct { int a; } x;", True),
    (b"struct foo\n{", True),
    (b"struct /* c */ {", True),
    (b"union u { int a; };", True),
    (b"enum e { A };", True),
    (b"typedef int t;", True),
    (b"#define X 1", True),
    (b"#  define X 1", True),
    (b"struct foo *p = get();", False),
    (b"struct foo x = { 0 };", False),
    (b"n = sizeof(struct foo);", False),
    (b"f((struct foo){ .a = 1 });", False),
    (b"enum_value = ENUM_ONE;", False),
    (b"return mystruct;", False),
    (b"/* struct foo { int a; } */", False),
    (b'puts("typedef int t;");', False),
    (b"#error don't\ntypedef int t;", True),
]


def spelled(spec: LanguageSpec, text: bytes) -> bool:
    grammar = load_grammar(spec)
    return bool(spelled_tokens(text, grammar.inner, grammar.quiet))


@pytest.mark.parametrize(("text", "hit"), GO_TOKENS)
def test_go_inner_tokens(text: bytes, hit: bool) -> None:
    spec = language_for_path("x.go")
    assert spec is not None
    assert spelled(spec, text) is hit


@pytest.mark.parametrize(("text", "hit"), C_TOKENS)
def test_c_inner_tokens(text: bytes, hit: bool) -> None:
    spec = language_for_path("x.c")
    assert spec is not None
    assert spelled(spec, text) is hit


@pytest.mark.parametrize(("text", "hit"), JAVA_TOKENS)
def test_java_inner_tokens(text: bytes, hit: bool) -> None:
    spec = language_for_path("X.java")
    assert spec is not None
    assert spelled(spec, text) is hit


def test_only_some_languages_skim() -> None:
    assert {spec.name for spec in LANGUAGES if spec.skim is not None} == {"go", "java", "c"}


def test_cache_stamp_is_the_same_in_every_process() -> None:
    """The stamp covers the skim, whose sets iterate in a per-process order."""
    script = "from nearsym.index.cache import stamp; print(stamp())"
    stamps = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(stamps) == 1


# Folds: the inside of a block left out of the parse itself (`Skim.blocks`).
# Each source below tempts the text scan into a wrong fold; the result must
# still be the full query's on a whole-file parse.

GO_FOLD_TRAPS = {
    "plain": b"""package p

func Plain(a int) int {
\tif a > 0 {
\t\treturn a
\t}
\treturn -a
}

func After() {}
""",
    "closed early": b"""package p

var table = map[int]int{
\t1: 2,
\t3: 4}

func Swallowed(a int) {
\t_ = a
}
""",
    "raw string": b"""package p

func Holder() string {
\treturn `
}

func NotAFunction() {
`
}

func Real() {}
""",
    "raw string, indented": b"""package p

func Holder() string {
	return `
}

func NotAFunction() {
	`
}

func Real() {}
""",
    "raw string at the top": b"""package p

var src = `
func InString() {
\tx := 1
}
`

func Real() {}
""",
    "block comment": b"""package p

func Commented() {
\t/* a comment that spans
}

func NotEither() {
\t*/
}

func Real() {}
""",
    "labels and switches": b"""package p

func Labelled() {
loop:
\tfor {
\t\tswitch {
\t\tcase true:
\t\t\tbreak loop
\t\t}
\t}
}

func Real() {}
""",
    "local type": b"""package p

func WithLocal() {
\tif true {
\t\ttype local int
\t}
\tfor {
\t\tbreak
\t}
}
""",
    "wrapped head": b"""package p

func Wrapped(a int,
\tb int) {
\ta++
}

func WrappedType(a int,
\tb int) {
\ttype local int
}

func Real() {}
""",
}

JAVA_FOLD_TRAPS = {
    "plain": b"""class A {
    void plain(int a) {
        if (a > 0) {
            a--;
        }
    }

    void after() {}
}
""",
    "close one space off": b"""class A {
    static int[] squared(int[] x) {
         int n = x.length;
         return x;
     }

     static void swallowed(int[] x) {
         x[0] = 1;
     }

    void real() {}
}
""",
    "wrapped throws": b"""class A {
    void wrapped(int a,
                 int b)
        throws Exception  {
        a++;
    }

    void swallowed() {
        b();
    }
}
""",
    "text block": b'''class A {
    String holder() {
        return """
    }

    void notAMethod() {
""";
    }

    void real() {}
}
''',
    "code in a comment": b"""/**
 * <pre>
static void inComment() {
    run();
}
 * </pre>
 */
class A {
    void real() {
        go();
    }
}
""",
    "wrapped class head": b"""class A
  extends B {
    void inClass() {
        go();
    }
  }
""",
    "allman": b"""class A
    implements Runnable
{
    public void run()
    {
        go();
    }
}
""",
    "anonymous class": b"""class A {
    void outer() {
        Runnable r = new Runnable() {
            public void run() {
                go();
            }
        };
    }
}
""",
    "wrapped signature": b"""class A {
    private static void run(String pid,
                            Object... args)
        throws IOException,
               UnsupportedEncodingException {
        go(pid);
    }

    public A(String uri,
             List<? extends T> ts)
    {
        this.uri = uri;
    }
}
""",
    "wrapped, the body no deeper": b"""class A {
    void shallow(int a,
                 int b) {
    a();
    }
    void swallowed() {}
}
""",
    "wrapped, a token in the first line": b"""class A {
    Runnable make(int a,
                  int b) { return null; }
    Object local(int a,
            int b) {
        class Local {}
        return new Local();
    }
}
""",
    "tokens in comments and strings": b"""class A {
    Object quiet() {
        // returns the class of a new Foo(), or an enum
        String s = "class Local {}";
        return s;
    }

    Object loud() {
        class Local {}
        return new Local();
    }
}
""",
    "wrapped class head, deeper": b"""class A
        extends B {
    void inClass() {
        go();
    }
}
""",
}


C_FOLD_TRAPS = {
    "kernel style": b"""static int plain(int a,
\t\t int b)
{
\tint ret = 0;
#ifdef CONFIG_X
\tret = a;
#endif
\tif (b)
\t\tgoto out;
\tret += b;
out:
\treturn ret;
}

int after(void)
{
\treturn 1;
}
""",
    "closed early": b"""int early(int x)
{
\tif (x) {
\t\tx++;
\t} }
int swallowed(void)
{
\treturn 0;
}
""",
    "struct head above its brace": b"""struct point
{
\tint x;
\tint y;
};
""",
    "brace in a string": b"""void braces(void)
{
\tputs("}");
}

void after(void)
{
\tputs("{");
}
""",
    "comment above the brace": b"""/* a comment
 */
{
\tint in_comment;
}
struct after { int a; };
""",
    "table": b"""static const struct ops table = {
\t.open = open_it,
\t.release = release_it,
};

int after(void)
{
\treturn 0;
}
""",
    "wrapped head": b"""static int wrapped(int a,
\t\t   int b) {
\tif (a &&
\t    b) {
\t\treturn a;
\t}
\treturn b;
}

int after(void)
{
\treturn 0;
}
""",
}


@pytest.mark.parametrize("case", sorted(C_FOLD_TRAPS))
def test_c_folds_find_what_a_whole_parse_finds(case: str) -> None:
    found = names(same("trap.c", C_FOLD_TRAPS[case]))
    assert "swallowed" in found or case != "closed early"
    assert {"x", "y"} <= found or case != "struct head above its brace"


def test_c_errors_stay_in_their_bodies() -> None:
    """A brace-less macro loop is a syntax error that a whole parse spreads
    over the rest of the file; with the bodies left out it stays in one,
    and every function after it is found at the top level
    (`Skim.despite_errors`)."""
    source = b"""static void set_skip(struct entity *se)
{
\tfor_each_entity(se)
\t\tqueue_of(se)->skip = se;
}

static void clear_skip(struct entity *se)
{
\tfor_each_entity(se)
\t\tqueue_of(se)->skip = NULL;
}

static int later(void)
{
\treturn 0;
}
"""
    spec = language_for_path("fair.c")
    assert spec is not None
    defs = extract_defs(source, spec)
    assert list(zip(defs.names, defs.containers, strict=True)) == [
        ("set_skip", ""),
        ("clear_skip", ""),
        ("later", ""),
    ]
    assert folded_bodies("fair.c", source) != []


def test_c_folds_inside_one_error_are_refused_together() -> None:
    """Two folds inside one definition with a syntax error are parsed again
    whole (the parse without them may have recovered unlike a whole one);
    a single fold inside one is kept."""
    two = b"""int f(int x, int y)
{
\tstruct s { int a; } v;
\tif (x) {
\t\ta();
\t}
\tif (y) {
\t\tb();
\t}
\tv.a = @ 1;
}

int g(void)
{
\treturn 0;
}
"""
    assert {"f", "s", "a", "g"} <= names(same("a.c", two))
    assert folded_bodies("a.c", two) == ["return 0;"]
    one = b"""static __printf(2, 3)
int logf(int level, const char *fmt, ...)
{
\treturn level;
}
"""
    same("a.c", one)
    assert folded_bodies("a.c", one) == ["return level;"]


@pytest.mark.parametrize("case", sorted(GO_FOLD_TRAPS))
def test_go_folds_find_what_a_whole_parse_finds(case: str) -> None:
    found = names(same("trap.go", GO_FOLD_TRAPS[case]))
    assert "NotAFunction" not in found and "NotEither" not in found
    assert "InString" not in found


@pytest.mark.parametrize("case", sorted(JAVA_FOLD_TRAPS))
def test_java_folds_find_what_a_whole_parse_finds(case: str) -> None:
    found = names(same("Trap.java", JAVA_FOLD_TRAPS[case]))
    assert "notAMethod" not in found and "inComment" not in found
    assert "inClass" in found or not case.startswith("wrapped class head")
    assert "swallowed" in found or not case.startswith("wrapped, the body")
    assert "Local" in found or not case.startswith("wrapped, a token")


def skim_nodes(spec: LanguageSpec, source: bytes) -> list[ts.Node]:
    """Every node of the tree the skim's parse makes of `source`."""
    grammar = load_grammar(spec)
    tree, _ = parse(source, spec, spelled_tokens(source, grammar.inner, grammar.quiet))
    found: list[ts.Node] = []
    stack = [tree.root_node]
    while stack:
        found.append(node := stack.pop())
        stack.extend(node.children)
    return found


def folded_bodies(path: str, source: bytes) -> list[str]:
    """The text of each block the parse left empty."""
    spec = language_for_path(path)
    assert spec is not None
    kinds = ("block", "constructor_body", "compound_statement", "initializer_list")
    empty = [
        source[node.start_byte + 1 : node.end_byte - 1].decode().strip()
        for node in skim_nodes(spec, source)
        if node.type in kinds and node.named_child_count == 0
    ]
    return sorted(text for text in empty if text)


def test_plain_bodies_are_folded_and_a_body_with_a_local_type_is_not() -> None:
    """The folds happen (the tests above would pass without any), and
    never over a definition."""
    assert folded_bodies("p.go", GO_FOLD_TRAPS["plain"]) == [
        "if a > 0 {\n\t\treturn a\n\t}\n\treturn -a"
    ]
    assert folded_bodies("p.go", GO_FOLD_TRAPS["local type"]) == ["break"]
    assert folded_bodies("A.java", JAVA_FOLD_TRAPS["plain"]) == [
        "if (a > 0) {\n            a--;\n        }"
    ]
    # The outer body holds `new Runnable() {`; the method inside it does not.
    assert folded_bodies("A.java", JAVA_FOLD_TRAPS["anonymous class"]) == ["go();"]
    # Wrapped heads: the `{` ends a continuation line, or stands alone under
    # one (Allman style); the close is the first line less deep than the body.
    assert folded_bodies("A.java", JAVA_FOLD_TRAPS["wrapped signature"]) == [
        "go(pid);",
        "this.uri = uri;",
    ]
    assert folded_bodies("A.java", JAVA_FOLD_TRAPS["allman"]) == ["go();"]
    assert folded_bodies("A.java", JAVA_FOLD_TRAPS["wrapped throws"]) == ["a++;", "b();"]
    assert folded_bodies("A.java", JAVA_FOLD_TRAPS["wrapped, a token in the first line"]) == []
    assert folded_bodies("p.go", GO_FOLD_TRAPS["wrapped head"]) == ["a++"]
    # A token in a comment or a string holds no definition (`Skim.quiet`).
    assert folded_bodies("A.java", JAVA_FOLD_TRAPS["tokens in comments and strings"]) == [
        '// returns the class of a new Foo(), or an enum\n        String s = "class Local {}";'
        "\n        return s;"
    ]
    assert folded_bodies("a.c", C_FOLD_TRAPS["wrapped head"]) == [
        "if (a &&\n\t    b) {\n\t\treturn a;\n\t}\n\treturn b;",
        "return 0;",
    ]
    # C: a `{` alone, a label and preprocessor lines at the first column.
    assert folded_bodies("a.c", C_FOLD_TRAPS["kernel style"]) == [
        "int ret = 0;\n#ifdef CONFIG_X\n\tret = a;\n#endif\n\tif (b)\n\t\tgoto out;"
        "\n\tret += b;\nout:\n\treturn ret;",
        "return 1;",
    ]
    assert folded_bodies("a.c", C_FOLD_TRAPS["table"]) == [
        ".open = open_it,\n\t.release = release_it,",
        "return 0;",
    ]
    assert folded_bodies("a.c", C_HIDDEN) == [
        ".open = plain,",
        "if (a > 0) {\n\t\ta--;\n\t}\n\treturn a;",
        "plain(1);",
    ]


def test_a_fold_the_parse_refuses_costs_only_a_second_parse() -> None:
    """A head inside a raw string passes the text checks; the parse shows
    the brace is not a block's, and the file is parsed again without it."""
    source = GO_FOLD_TRAPS["raw string at the top"]
    spec = language_for_path("p.go")
    assert spec is not None
    assert spec.skim is not None
    assert find_folds(source, [], spec.skim) != []
    assert folded_bodies("p.go", source) == []


# Whole-line comments: left out of the parse as the folds are
# (`comments.quiet_folds`), but a run that marks a deprecation, a comment
# beside code, one in a literal, and a C line comment that goes on.
COMMENT_TRAPS = {
    "a.go": b"""// Package p.
package p

// Reset zeros the key.
//
// Deprecated: do not.
func Reset() {}

/* a block
   comment */
func F() {}
""",
    "A.java": b"""/*
 * The licence.
 */
package p;

/** A class. */
class A {
    /** Kept: @deprecated use b. */
    @Deprecated
    void a() {}

    // line one
    // line two
    void b() {} // beside code
    String s = "// not a comment";
    String t = \"\"\"
        // in a text block
        \"\"\";
}
""",
    "a.c": b"""// a comment that goes on \\
int hidden_in_a_comment;
int after;
/* header */
struct s { int x; };
#define M(a) \\
\t/* inside a macro */ \\
\t(a)
int last;
""",
}


def comments_parsed(spec: LanguageSpec, source: bytes) -> list[str]:
    """The text of each comment the skim's parse kept."""
    return sorted(
        source[node.start_byte : node.end_byte].decode()
        for node in skim_nodes(spec, source)
        if "comment" in node.type
    )


def quiet_lines(path: str) -> LanguageSpec:
    """The path's language, its whole-line comments left out of the parse
    (Java's are; Go's and C's are not, but the traps hold for them too)."""
    spec = language_for_path(path)
    assert spec is not None and spec.skim is not None
    return dataclasses.replace(spec, skim=dataclasses.replace(spec.skim, quiet_lines=True))


@pytest.mark.parametrize("path", sorted(COMMENT_TRAPS))
def test_whole_line_comments_are_left_out_of_the_parse(path: str) -> None:
    """The definitions are the whole parse's (deprecation marks included),
    and the comments left out are those on lines of their own."""
    source, spec = COMMENT_TRAPS[path], quiet_lines(path)
    found = rows(extract_defs(source, spec))
    assert found == rows(extract_defs(source, full(spec)))
    kept = comments_parsed(spec, source)
    if path == "a.go":
        assert [kind & DEPRECATED_BIT != 0 for name, _, kind, _ in found if name == "Reset"] == [
            True
        ]
        assert kept == ["//", "// Deprecated: do not.", "// Reset zeros the key."]
    elif path == "A.java":
        assert kept == ["/** Kept: @deprecated use b. */", "// beside code"]
    else:
        assert "hidden_in_a_comment" not in names(found)
        assert kept == [
            "/* inside a macro */",
            "// a comment that goes on \\\nint hidden_in_a_comment;",
        ]
    shipped = language_for_path(path)
    assert shipped is not None and shipped.skim is not None
    assert shipped.skim.quiet_lines == (path == "A.java")
