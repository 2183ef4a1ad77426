"""The imports a source file makes, as written, read from its tree.

Python, JavaScript/TypeScript and Go have a reader each; other languages
have none, and their files import nothing as far as the ranking knows.
What an import refers to in the workspace is resolved elsewhere
(`workspace.imports`).
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from nearsym.extract.grammar import node_text, parser
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


def _python_imports(root: ts.Node) -> list[ImportRef]:
    refs: list[ImportRef] = []

    def dotted(node: ts.Node | None) -> str:
        if node is None:
            return ""
        if node.type == "aliased_import":
            return dotted(node.child_by_field_name("name"))
        return node_text(node)

    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "import_statement":
            refs.extend(ImportRef(dotted(n)) for n in node.children_by_field_name("name"))
        elif node.type == "import_from_statement":
            module = node.child_by_field_name("module_name")
            level, name = 0, ""
            if module is not None and module.type == "relative_import":
                for part in module.children:
                    if part.type == "import_prefix":
                        level = len(node_text(part))
                    elif part.type == "dotted_name":
                        name = node_text(part)
            else:
                name = dotted(module)
            names = [dotted(n).rsplit(".", 1)[-1] for n in node.children_by_field_name("name")]
            if any(c.type == "wildcard_import" for c in node.children):
                names.append("*")
            refs.append(ImportRef(name, level, tuple(names)))
        else:
            stack.extend(node.children)
    return refs


_IMPORT_NAME_PARENTS = frozenset(
    {"import_specifier", "import_clause", "export_specifier", "namespace_import"}
)


def _ecmascript_imports(root: ts.Node) -> list[ImportRef]:
    refs: list[ImportRef] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("import_statement", "export_statement"):
            source = node.child_by_field_name("source")
            if source is not None:
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
                        names.append(node_text(n))
                    inner.extend(n.children)
                refs.append(ImportRef(node_text(source), 0, tuple(names)))
                continue
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if fn is not None and node_text(fn) == "require" and args is not None:
                strings = [c for c in args.children if c.type == "string"]
                if strings:
                    refs.append(ImportRef(node_text(strings[0])))
        stack.extend(node.children)
    return refs


def _go_imports(root: ts.Node) -> list[ImportRef]:
    refs: list[ImportRef] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "import_spec":
            path = node.child_by_field_name("path")
            if path is not None:
                refs.append(ImportRef(node_text(path)))
            continue
        if node.type in ("function_declaration", "method_declaration", "type_declaration"):
            continue  # imports come first; skip the bodies
        stack.extend(node.children)
    return refs


_IMPORT_READERS = {
    "python": _python_imports,
    "javascript": _ecmascript_imports,
    "typescript": _ecmascript_imports,
    "tsx": _ecmascript_imports,
    "go": _go_imports,
}


def extract_imports(source: bytes, spec: LanguageSpec) -> list[ImportRef]:
    """The imports of a file, for relating it to the files it uses. Empty for
    languages without a reader."""
    reader = _IMPORT_READERS.get(spec.name)
    if reader is None:
        return []
    return reader(parser(spec).parse(source).root_node)
