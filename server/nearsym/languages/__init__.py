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

    def query_source(self) -> str:
        """The definitions query: the named `.scm` files, concatenated."""
        folder = resources.files(__package__).joinpath("queries")
        return "\n".join(folder.joinpath(f).read_text("utf-8") for f in self.query_files)


LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        "python", (".py", ".pyi", ".pyw"), "tree_sitter_python", "language", ("python.scm",)
    ),
    LanguageSpec(
        "javascript",
        (".js", ".mjs", ".cjs", ".jsx"),
        "tree_sitter_javascript",
        "language",
        ("ecmascript.scm", "javascript.scm"),
    ),
    LanguageSpec(
        "typescript",
        (".ts", ".mts", ".cts"),
        "tree_sitter_typescript",
        "language_typescript",
        ("ecmascript.scm", "typescript.scm"),
    ),
    LanguageSpec(
        "tsx",
        (".tsx",),
        "tree_sitter_typescript",
        "language_tsx",
        ("ecmascript.scm", "typescript.scm"),
    ),
    LanguageSpec("go", (".go",), "tree_sitter_go", "language", ("go.scm",)),
)

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
}

_BY_EXTENSION = {ext: spec for spec in LANGUAGES for ext in spec.extensions}
_BY_FILE_NAME = {fn: spec for spec in LANGUAGES for fn in spec.file_names}
_BY_NAME = {spec.name: spec for spec in LANGUAGES}


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
