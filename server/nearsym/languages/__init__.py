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

from nearsym.model import Kind


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
) -> LanguageSpec:
    return LanguageSpec(name, extensions, module, function, queries, file_names, interpreters)


LANGUAGES: tuple[LanguageSpec, ...] = (
    _spec("python", (".py", ".pyi", ".pyw"), "tree_sitter_python", ("python.scm",),
          interpreters=("python", "python3")),
    _spec("javascript", (".js", ".mjs", ".cjs", ".jsx"), "tree_sitter_javascript",
          ("ecmascript.scm", "javascript.scm"), interpreters=("node",)),
    _spec("typescript", (".ts", ".mts", ".cts"), "tree_sitter_typescript",
          ("ecmascript.scm", "typescript.scm"), "language_typescript"),
    _spec("tsx", (".tsx",), "tree_sitter_typescript", ("ecmascript.scm", "typescript.scm"),
          "language_tsx"),
    _spec("go", (".go",), "tree_sitter_go", ("go.scm",)),
    _spec("rust", (".rs",), "tree_sitter_rust", ("rust.scm",)),
    _spec("java", (".java",), "tree_sitter_java", ("java.scm",)),
    _spec("c", (".c", ".h"), "tree_sitter_c", ("c.scm",)),
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
    base = os.path.basename(path)
    if base in _BY_FILE_NAME:
        return _BY_FILE_NAME[base]
    _, ext = os.path.splitext(base)
    return _BY_EXTENSION.get(ext.lower())


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
