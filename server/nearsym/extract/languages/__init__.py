"""The language registry: one entry per language.

An entry names the file extensions (and well-known file names) that select the
language, the grammar wheel and the function in it that returns the grammar,
and the definitions query under `queries/`. Adding a language is one entry
here and one `.scm` file.

The queries mark a definition's node with `@definition.<kind>` and its name
with `@name`; `CAPTURE_KINDS` maps `<kind>` to an LSP SymbolKind. Only
extraction imports tree-sitter: this module names grammars, it does not load
them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources

from nearsym.core.model import Kind


@dataclass(frozen=True, slots=True)
class Skim:
    """Where a language's definitions cannot hide, so the definitions query
    need not walk there (the query's walk over every node costs half as
    much as parsing).

    Function bodies hold most of a file's nodes and almost none of its
    definitions. Extraction runs the query on each `outline` node (the file,
    a class body) starting patterns only at the node and its children,
    which completes those patterns without going down into bodies. Below
    that, a child of an outline node gets a full walk of its own, except a
    `guarded` child (a function, a field) whose text spells none of the
    tokens a definition inside it must spell (`inner`: a word, and a bytes
    regex matched where the word occurs, which is far quicker than a regex
    search), and a `flat` child, which nothing below can match. The test
    is on the text, outside comments and literals (`quiet`), so text that
    only looks like a token costs a walk, never a definition: the result
    is the full query's, which tests check.
    """

    outline: frozenset[str]
    guarded: frozenset[str]
    inner: tuple[tuple[bytes, bytes], ...]
    blocks: frozenset[str] = frozenset()
    """Brace-delimited nodes whose inside may be left out of the parse itself
    when it spells no `inner` token (see `folds.find_folds`): a parse costs
    most of an extraction, and function bodies are half of the bytes."""
    raw_quote: bytes = b"\0"
    """The quote of a string that may span lines and hold anything (a
    block's inside must hold an even count of them to be left out)."""
    lone_brace: bool = False
    """Whether a `{` alone on its line may open a block left out (C's
    function bodies, whose head is the line above)."""
    flush: bytes = b""
    """A bytes regex of the lines a block's inside may hold left of its
    indent (C's goto labels and preprocessor lines at the first column)."""
    flat: frozenset[str] = frozenset()
    """Children of an outline node that root no match below themselves
    (C's `#define`, whose value is one opaque token): the outline walk
    already found their own match, so they get no walk of their own. In
    the kernel, where a file may hold thousands of `#define`s, each was
    matched twice and walked once on its own."""
    quiet: bytes = b""
    """A bytes regex of the text where a token spelled is no hit: the
    comments and the string and character literals, found left to right as
    `re.finditer` finds them (so a quote inside a comment opens nothing).
    A word in a comment cannot make a definition, and the JDK's comments
    say `class` over 40,000 times; a method body that spelled one there
    was walked and parsed whole. The alternatives read literals as the
    languages do (but for Java's quotes spelled `\\u0022`, and a C line
    comment continued by a backslash, which ends here at its line and
    leaves the next line's words as hits); an unclosed quote or comment
    opens nothing."""
    const_blocks: bool = False
    """Whether a top-level `const (...)` block of plain specs is read by a
    byte scan and left out of the parse (`folds.const_blocks`: Go, whose
    generated system tables hold half the definitions of its library)."""
    despite_errors: bool = False
    """Whether a folded tree with a syntax error is kept when the parse
    confirms every fold. C's macros leave errors in most files (in 381 of
    the 502 of the Linux kernel's `kernel/`), and inside a body they spread:
    a whole parse of `sched/fair.c` reads the 4,000 lines after a brace-less
    `for_each_sched_entity(se)` as one function's body, while with the
    bodies left out each error stays in its own. Elsewhere an error in a
    folded tree may be the fold's doing, and the file is parsed whole."""
    quiet_lines: bool = False
    """Whether comments on lines of their own, outside the folds, are left
    out of the parse too (`comments.quiet_folds`): Java, whose Javadoc and
    licences were half the text its folded parse read. Go's library
    extracted no faster with them left out (4.12 s both), and the Linux
    kernel 13% slower, with other definitions in some files: C's macros
    leave syntax errors whose recovery the comments change."""


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """One language: how to recognise its files and find its definitions."""

    name: str
    extensions: tuple[str, ...]
    grammar_module: str
    grammar_function: str
    query_files: tuple[str, ...]
    file_names: tuple[str, ...] = ()
    interpreters: tuple[str, ...] = ()
    """`#!` interpreters that select this language for a file with no
    extension (`#!/usr/bin/env bash`)."""
    skim: Skim | None = None
    """Bodies the definitions query may skip; None walks the whole tree."""

    def query_source(self) -> str:
        """The definitions query: the named `.scm` files, concatenated."""
        folder = resources.files(__package__).joinpath("queries")
        return "\n".join(folder.joinpath(f).read_text("utf-8") for f in self.query_files)


def _spec(
    name: str,
    extensions: tuple[str, ...],
    module: str,
    queries: tuple[str, ...],
    function: str = "language",
    file_names: tuple[str, ...] = (),
    interpreters: tuple[str, ...] = (),
    skim: Skim | None = None,
) -> LanguageSpec:
    return LanguageSpec(name, extensions, module, function, queries, file_names, interpreters, skim)


_LINE_COMMENT, _BLOCK_COMMENT = rb"//[^\n]*", rb"/\*.*?\*/"
_STRING, _CHAR = rb'"(?:\\.|[^"\\\n])*"', rb"'(?:\\.|[^'\\\n])*'"
"""A string and a character literal on one line, with their escapes."""


def _quiet(*alternatives: bytes) -> bytes:
    """`Skim.quiet` of these comments and literals, tried in this order
    where more than one could start (`.` matches a newline)."""
    return rb"(?s)" + b"|".join(alternatives)


_GO_SKIM = Skim(
    outline=frozenset({"source_file"}),
    guarded=frozenset(
        {
            "function_declaration",
            "method_declaration",
            "var_declaration",
            "const_declaration",
            "import_declaration",
            "package_clause",
        }
    ),
    # Below the top level, a type needs `type` (not the `.(type)` of a type
    # switch), a struct's fields `struct {` with something inside, an
    # interface's methods the same after `interface`; a comment after the
    # keyword counts as a hit. Package-level names (and a `var` block's
    # specs) are patterns rooted at the file, which the outline walk finds.
    inner=(
        (b"type", rb"(?<!\w)type\b(?!\s*\))"),
        (b"struct", rb"(?<!\w)struct\s*(?:/|\{\s*[^\s}])"),
        (b"interface", rb"(?<!\w)interface\s*(?:/|\{\s*[^\s}])"),
    ),
    blocks=frozenset({"block", "literal_value"}),
    raw_quote=b"`",
    quiet=_quiet(_LINE_COMMENT, _BLOCK_COMMENT, _STRING, rb"`[^`]*`", _CHAR),
    const_blocks=True,
)

_JAVA_SKIM = Skim(
    outline=frozenset({
        "program", "class_declaration", "class_body", "interface_declaration",
        "interface_body", "enum_declaration", "enum_body", "enum_body_declarations",
        "record_declaration", "annotation_type_declaration", "annotation_type_body",
    }),
    guarded=frozenset({
        "method_declaration", "constructor_declaration", "compact_constructor_declaration",
        "field_declaration", "constant_declaration", "import_declaration",
        "package_declaration", "static_initializer", "block",
    }),
    # A local class, interface, enum or record spells its keyword (`class`
    # not after a dot: that is a class literal). An anonymous class is
    # `new T(args) {`: after `new`, a `)` then `{` (or a comment) before any
    # `;` outside clean string and char literals. A lambda argument (`->`,
    # whose block may hold a `;`) or a quote that does not open a clean
    # literal (a `;` inside, a text block, an apostrophe in a comment)
    # counts as a hit. The scan is possessive: it never backtracks.
    inner=(
        (b"new", rb"(?<![\w$])new\b"
                 rb"(?:[^;\"'\-)]++|-(?!>)|\)(?!\s*[{/])"
                 rb"|\"(?:[^\"\\\n;]++|\\.)*+\"|'(?:[^'\\\n;]|\\.)*+')*+"
                 rb"(?:\)|->|[\"'])"),
        *((word, rb"(?<![\w$.])" + word + rb"\b")
          for word in (b"class", b"interface", b"enum", b"record")),
    ),
    blocks=frozenset({"block", "constructor_body", "array_initializer"}),
    raw_quote=b'"""',
    quiet=_quiet(_LINE_COMMENT, _BLOCK_COMMENT, rb'"""(?:\\.|[^\\])*?"""', _STRING, _CHAR),
    quiet_lines=True,
)  # fmt: skip


C_FLUSH = rb"#|[A-Za-z_]\w*:(?!:)"
"""C's `Skim.flush`: preprocessor lines and goto labels (`out:`, not
`a::b`); `folds.NATIVE_FLUSH` gives the C scan's flags for it."""

_C_SKIM = Skim(
    # Top-level conditionals hold definitions as the file itself does.
    outline=frozenset({
        "translation_unit", "preproc_if", "preproc_ifdef", "preproc_else",
        "preproc_elif", "preproc_elifdef",
    }),
    guarded=frozenset({"function_definition"}),
    flat=frozenset({"preproc_def", "preproc_function_def", "preproc_include", "preproc_call"}),
    # Inside a function, a definition is a macro, a typedef, or a struct,
    # union or enum with a body (its fields, its enumerators): `struct foo
    # {`, not `struct foo *p = ...`.
    inner=(
        (b"define", rb"define\b"),
        (b"typedef", rb"typedef\b"),
        *((word, rb"(?<!\w)" + word + rb"\b[\w\s]*+[{/]") for word in (b"struct", b"union", b"enum")),
    ),
    blocks=frozenset({"compound_statement", "initializer_list"}),
    lone_brace=True,
    flush=C_FLUSH,
    quiet=_quiet(_LINE_COMMENT, _BLOCK_COMMENT, _STRING, _CHAR),
    despite_errors=True,
)  # fmt: skip


LANGUAGES: tuple[LanguageSpec, ...] = (
    _spec("python", (".py", ".pyi", ".pyw"), "tree_sitter_python", ("python.scm",),
          interpreters=("python", "python3")),
    _spec("javascript", (".js", ".mjs", ".cjs", ".jsx"), "tree_sitter_javascript",
          ("ecmascript.scm", "javascript.scm"), interpreters=("node",)),
    _spec("typescript", (".ts", ".mts", ".cts"), "tree_sitter_typescript",
          ("ecmascript.scm", "typescript.scm"), "language_typescript"),
    _spec("tsx", (".tsx",), "tree_sitter_typescript", ("ecmascript.scm", "typescript.scm"),
          "language_tsx"),
    _spec("go", (".go",), "tree_sitter_go", ("go.scm",), skim=_GO_SKIM),
    _spec("rust", (".rs",), "tree_sitter_rust", ("rust.scm",)),
    _spec("java", (".java",), "tree_sitter_java", ("java.scm",), skim=_JAVA_SKIM),
    _spec("c", (".c", ".h"), "tree_sitter_c", ("c.scm",), skim=_C_SKIM),
    _spec("cpp", (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp",
                  ".inl"), "tree_sitter_cpp", ("c.scm", "cpp.scm")),
    _spec("csharp", (".cs",), "tree_sitter_c_sharp", ("csharp.scm",)),
    _spec("ruby", (".rb", ".rake", ".gemspec", ".ru"), "tree_sitter_ruby", ("ruby.scm",),
          file_names=("Rakefile", "Gemfile", "Guardfile"), interpreters=("ruby",)),
    _spec("php", (".php", ".phtml", ".php8"), "tree_sitter_php", ("php.scm",), "language_php",
          interpreters=("php",)),
    _spec("bash", (".sh", ".bash"), "tree_sitter_bash", ("bash.scm",),
          file_names=(".bashrc", ".bash_profile", "PKGBUILD"), interpreters=("bash", "sh")),
    _spec("lua", (".lua",), "tree_sitter_lua", ("lua.scm",), interpreters=("lua", "luajit")),
    _spec("kotlin", (".kt", ".kts"), "tree_sitter_kotlin", ("kotlin.scm",)),
    _spec("scala", (".scala", ".sc"), "tree_sitter_scala", ("scala.scm",)),
    _spec("swift", (".swift",), "tree_sitter_swift", ("swift.scm",)),
    _spec("elixir", (".ex", ".exs"), "tree_sitter_elixir", ("elixir.scm",),
          interpreters=("elixir",)),
    _spec("haskell", (".hs",), "tree_sitter_haskell", ("haskell.scm",)),
    _spec("ocaml", (".ml",), "tree_sitter_ocaml", ("ocaml.scm",), "language_ocaml"),
    _spec("ocaml_interface", (".mli",), "tree_sitter_ocaml", ("ocaml.scm",),
          "language_ocaml_interface"),
    _spec("zig", (".zig",), "tree_sitter_zig", ("zig.scm",)),
    _spec("julia", (".jl",), "tree_sitter_julia", ("julia.scm",), interpreters=("julia",)),
)  # fmt: skip

CAPTURE_KINDS: dict[str, Kind] = {
    "module": Kind.MODULE,
    "namespace": Kind.NAMESPACE,
    "class": Kind.CLASS,
    "interface": Kind.INTERFACE,
    "struct": Kind.STRUCT,
    "enum": Kind.ENUM,
    "enum_member": Kind.ENUM_MEMBER,
    "type": Kind.CLASS,
    "function": Kind.FUNCTION,
    "method": Kind.METHOD,
    "constructor": Kind.CONSTRUCTOR,
    "field": Kind.FIELD,
    "property": Kind.PROPERTY,
    "constant": Kind.CONSTANT,
    "variable": Kind.VARIABLE,
    "macro": Kind.FUNCTION,
    "operator": Kind.OPERATOR,
    "event": Kind.EVENT,
}

_BY_EXTENSION = {ext: spec for spec in LANGUAGES for ext in spec.extensions}
_BY_FILE_NAME = {fn: spec for spec in LANGUAGES for fn in spec.file_names}
_BY_NAME = {spec.name: spec for spec in LANGUAGES}
_BY_INTERPRETER = {i: spec for spec in LANGUAGES for i in spec.interpreters}


def language_for_path(path: str) -> LanguageSpec | None:
    """The language of a file by its name, or None (unknown files are skipped,
    never an error)."""
    return language_for_name(os.path.basename(path))


def language_for_name(name: str) -> LanguageSpec | None:
    """`language_for_path` of a bare file name (a walk's listing gives those)."""
    spec = _BY_FILE_NAME.get(name)
    if spec is not None:
        return spec
    dot = name.rfind(".")
    # As os.path.splitext: the leading dots of `.bashrc` start no extension.
    if dot <= 0 or not name[:dot].lstrip("."):
        return None
    return _BY_EXTENSION.get(name[dot:].lower())


def language_named(name: str) -> LanguageSpec | None:
    return _BY_NAME.get(name)


def language_for_shebang(first_line: bytes) -> LanguageSpec | None:
    """The language a `#!` line names: `#!/bin/sh`, `#!/usr/bin/env python3`."""
    if not first_line.startswith(b"#!"):
        return None
    words = first_line[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    if program == "env":
        rest = [w for w in words[1:] if not w.startswith("-")]
        program = rest[0] if rest else ""
    return _BY_INTERPRETER.get(program) or _BY_INTERPRETER.get(program.rstrip("0123456789."))
