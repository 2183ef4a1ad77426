"""The imports a source file makes, as written, read from its tree.

Python, JavaScript/TypeScript, Go and Rust (its `pub use` re-exports
only) have a reader each; other languages
have none, and their files import nothing as far as the ranking knows.
What an import refers to in the workspace is resolved elsewhere
(`workspace.imports`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import tree_sitter as ts

from nearsym.extract.folds import skimmed
from nearsym.extract.grammar import (
    TooBroken,
    load_grammar,
    node_text,
    parse_bounded,
    parser,
    text_predicate,
)
from nearsym.extract.languages import LanguageSpec


@dataclass(frozen=True, slots=True)
class ImportRef:
    """One import of a source file, as written.

    `module` is dotted for Python (`flask.sansio.app`), the import string for
    JS/TS and Go (`./util`, `net/http`); `level` counts a Python relative
    import's leading dots; `names` are the names it brings in (`*` for all).
    """

    module: str
    level: int = 0
    names: tuple[str, ...] = ()


_PYTHON_STATEMENTS = "[(import_statement) (import_from_statement)] @statement"
_ECMASCRIPT_STATEMENTS = """
(import_statement source: (_)) @statement
(export_statement source: (_)) @statement
(call_expression function: (identifier) @fn (#text-eq? @fn "require")) @statement
"""


@cache
def _query(language: ts.Language, pattern: str) -> ts.Query:
    return ts.Query(language, pattern)


def _statements(source: bytes, root: ts.Node, language: ts.Language, pattern: str) -> list[ts.Node]:
    """The nodes `pattern` captures as `@statement` anywhere in the tree, in
    file order: found by tree-sitter, not by walking every node in Python
    (a 5,000-line module has 100,000 nodes)."""
    query = _query(language, pattern)
    found = ts.QueryCursor(query).captures(root, text_predicate(source)).get("statement", [])
    return sorted(found, key=lambda n: n.start_byte)


def _python_imports(source: bytes, root: ts.Node, language: ts.Language) -> list[ImportRef]:
    refs: list[ImportRef] = []

    def dotted(node: ts.Node | None) -> str:
        if node is None:
            return ""
        if node.type == "aliased_import":
            return dotted(node.child_by_field_name("name"))
        return node_text(source, node)

    for node in _statements(source, root, language, _PYTHON_STATEMENTS):
        if node.type == "import_statement":
            refs.extend(ImportRef(dotted(n)) for n in node.children_by_field_name("name"))
        elif node.type == "import_from_statement":
            module = node.child_by_field_name("module_name")
            level, name = 0, ""
            if module is not None and module.type == "relative_import":
                for part in module.children:
                    if part.type == "import_prefix":
                        level = len(node_text(source, part))
                    elif part.type == "dotted_name":
                        name = node_text(source, part)
            else:
                name = dotted(module)
            names = [dotted(n).rsplit(".", 1)[-1] for n in node.children_by_field_name("name")]
            if any(c.type == "wildcard_import" for c in node.children):
                names.append("*")
            refs.append(ImportRef(name, level, tuple(names)))
    return refs


_IMPORT_NAME_PARENTS = frozenset(
    {"import_specifier", "import_clause", "export_specifier", "namespace_import"}
)


def _ecmascript_imports(source: bytes, root: ts.Node, language: ts.Language) -> list[ImportRef]:
    refs: list[ImportRef] = []
    for node in _statements(source, root, language, _ECMASCRIPT_STATEMENTS):
        if node.type in ("import_statement", "export_statement"):
            module = node.child_by_field_name("source")
            if module is not None:
                names = []
                inner = [node]
                while inner:
                    n = inner.pop()
                    parent = n.parent
                    if (
                        n.type in ("identifier", "type_identifier")
                        and parent is not None
                        and parent.type in _IMPORT_NAME_PARENTS
                    ):
                        names.append(node_text(source, n))
                    inner.extend(n.children)
                refs.append(ImportRef(node_text(source, module), 0, tuple(names)))
        elif node.type == "call_expression":
            fn = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if fn is not None and node_text(source, fn) == "require" and args is not None:
                strings = [c for c in args.children if c.type == "string"]
                if strings:
                    refs.append(ImportRef(node_text(source, strings[0])))
    return refs


def _go_imports(source: bytes, root: ts.Node, language: ts.Language) -> list[ImportRef]:
    refs: list[ImportRef] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "import_spec":
            path = node.child_by_field_name("path")
            if path is not None:
                refs.append(ImportRef(node_text(source, path)))
            continue
        if node.type in ("function_declaration", "method_declaration", "type_declaration"):
            continue  # imports come first; skip the bodies
        stack.extend(node.children)
    return refs


def _rust_uses(
    source: bytes, node: ts.Node, prefix: list[str], out: list[tuple[list[str], str]]
) -> None:
    """(module path, name) for each name a `use` tree brings in."""
    kind = node.type
    if kind == "scoped_identifier":
        path = node.child_by_field_name("path")
        name = node.child_by_field_name("name")
        if name is not None:
            parts = node_text(source, path).split("::") if path is not None else []
            out.append(([*prefix, *parts], node_text(source, name)))
    elif kind in ("identifier", "self", "crate", "super"):
        out.append((prefix, node_text(source, node)))
    elif kind == "use_as_clause":
        path = node.child_by_field_name("path")
        if path is not None:
            _rust_uses(source, path, prefix, out)
    elif kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        parts = node_text(source, path).split("::") if path is not None else []
        inner = node.child_by_field_name("list")
        if inner is not None:
            _rust_uses(source, inner, [*prefix, *parts], out)
    elif kind == "use_list":
        for child in node.named_children:
            _rust_uses(source, child, prefix, out)
    elif kind == "use_wildcard":
        path = node.named_children[0] if node.named_children else None
        parts = node_text(source, path).split("::") if path is not None else []
        out.append(([*prefix, *parts], "*"))


def _rust_imports(source: bytes, root: ts.Node, language: ts.Language) -> list[ImportRef]:
    """The `pub use` declarations at the top of a module (its re-exports);
    `module` is the `::` path (`crate::a::b`), `names` the last parts."""
    by_module: dict[str, list[str]] = {}
    for node in root.named_children:
        if node.type != "use_declaration" or not any(
            c.type == "visibility_modifier" for c in node.children
        ):
            continue
        argument = node.child_by_field_name("argument")
        found: list[tuple[list[str], str]] = []
        if argument is not None:
            _rust_uses(source, argument, [], found)
        for path, name in found:
            by_module.setdefault("::".join(path), []).append(name)
    return [ImportRef(module, 0, tuple(names)) for module, names in by_module.items()]


_IMPORT_READERS = {
    "python": _python_imports,
    "javascript": _ecmascript_imports,
    "typescript": _ecmascript_imports,
    "tsx": _ecmascript_imports,
    "go": _go_imports,
    "rust": _rust_imports,
}


def reads_imports(language: str) -> bool:
    """Whether `extract_imports` reads the imports of `language` (else it
    finds none)."""
    return language in _IMPORT_READERS


_TOP_LEVEL_ONLY = frozenset({"go"})
"""Languages whose imports come only at the top level, never in a body:
their skimmed tree (`folds.skimmed`, bodies left out of the parse) holds
them all. Go's `net/http/server.go` (100 KB), the file a restart's first
query reads: 10 ms parsed whole, 4 skimmed."""


def extract_imports(source: bytes, spec: LanguageSpec) -> list[ImportRef]:
    """The imports of a file, for relating it to the files it uses. Empty for
    languages without a reader."""
    reader = _IMPORT_READERS.get(spec.name)
    if reader is None:
        return []
    try:
        if spec.name in _TOP_LEVEL_ONLY:
            source, _, tree = skimmed(source, spec)
        else:
            tree = parse_bounded(parser(spec), source)
    except TooBroken:
        return []  # a parse given up: nothing recovered
    return reader(source, tree.root_node, load_grammar(spec).language)
