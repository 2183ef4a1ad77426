"""The base classes a source file's classes name, as written, read from its
tree.

One walk over the tree finds every class-like node whose children include
a heritage clause (Python's superclass list, JS/TS `extends` and
`implements`, Java's `superclass` and `super_interfaces`, Kotlin's
delegation specifiers, C#'s base list, C++'s base class clause, Swift's
inheritance specifiers) and reads the names in it: the last part of a
dotted name (`mod.Base` -> `Base`), without type arguments (`B<T>` -> `B`)
or keyword arguments (`metaclass=M`). What a name refers to is resolved
elsewhere (`index.where`), by name.

Deliberately not read: Go's embedded fields, Rust's trait impls (a trait
is not a base its implementor's members live in), mixins added at run time.
"""

from __future__ import annotations

import tree_sitter as ts

from nearsym.extract.grammar import node_text, parser
from nearsym.extract.languages import LanguageSpec

_HERITAGE = frozenset(
    {
        "argument_list",  # Python: class A(B, C)
        "class_heritage",  # JS/TS: extends / implements
        "extends_type_clause",  # TS interfaces
        "superclass",  # Java
        "super_interfaces",  # Java
        "extends_interfaces",  # Java interfaces
        "delegation_specifiers",  # Kotlin
        "base_list",  # C#
        "base_class_clause",  # C++
        "inheritance_specifier",  # Swift
    }
)
_DOTTED = frozenset(
    {
        "attribute",
        "member_expression",
        "scoped_identifier",
        "scoped_type_identifier",
        "qualified_name",
        "qualified_identifier",
        "nested_type_identifier",
        "generic_type",
    }
)
_NAMES = frozenset(
    {"identifier", "type_identifier", "simple_identifier", "property_identifier", "name"}
)
_SKIP = frozenset({"keyword_argument", "type_arguments", "type_parameters", "comment"})


def _names(node: ts.Node, out: list[str]) -> None:
    if node.type in _SKIP:
        return
    if node.type in _NAMES:
        out.append(node_text(node))
        return
    if node.type in _DOTTED:
        parts: list[str] = []
        for child in node.named_children:
            if child.type not in _SKIP:
                _names(child, parts)
        if parts:
            out.append(parts[-1] if node.type != "generic_type" else parts[0])
        return
    for child in node.named_children:
        _names(child, out)


def class_bases(source: bytes, spec: LanguageSpec) -> dict[tuple[int, str], tuple[str, ...]]:
    """Per class of `source` that names a base, keyed by (0-based line of
    its name, its name): the base names, in the order written. Never raises
    on bad source (what tree-sitter recovered is read)."""
    out: dict[tuple[int, str], tuple[str, ...]] = {}
    stack = [parser(spec).parse(source).root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        heritage = [c for c in node.named_children if c.type in _HERITAGE]
        name = node.child_by_field_name("name")
        if not heritage or name is None or node.type == "call":
            continue
        found: list[str] = []
        for clause in heritage:
            _names(clause, found)
        if found:
            out[(name.start_point.row, node_text(name))] = tuple(dict.fromkeys(found))
    return out
