"""The base types each class of a source file names, read from its tree.

A class's bases are what its declaration says it extends, implements or
embeds: Python's superclasses, a TypeScript/JavaScript class's `extends`
and `implements` (and an interface's `extends`), Java's superclass and
interfaces, Kotlin's delegation specifiers, Swift's inheritance clause
(extensions included), C++'s and C#'s base lists, a Go struct's embedded
types (their methods are promoted). Each base is its bare type name
(`a.b.Base` -> `Base`, `Base[T]` -> `Base`, `*pkg.Reader` -> `Reader`);
keyword arguments (`metaclass=`), constructor arguments and type arguments
are not bases. What a base name refers to is resolved elsewhere, by name
(`index.where` for where-queries, `workspace.members` for the open file's
classes). Languages without a pattern here have no bases: Rust's trait
impls (a trait is not a base its implementor's members live in), Ruby,
mixins added at run time.
"""

from __future__ import annotations

import re
from functools import cache

import tree_sitter as ts

from nearsym.extract.folds import skim_matches, skimmed
from nearsym.extract.grammar import TooBroken, load_grammar, node_text
from nearsym.extract.languages import LanguageSpec

_ECMASCRIPT = """
(class_declaration name: (_) @name (class_heritage) @bases)
(interface_declaration name: (_) @name (extends_type_clause) @bases)
"""
_PATTERNS = {
    "python": "(class_definition name: (identifier) @name superclasses: (argument_list) @bases)",
    "javascript": "(class_declaration name: (_) @name (class_heritage) @bases)",
    "typescript": _ECMASCRIPT
    + "(abstract_class_declaration name: (_) @name (class_heritage) @bases)",
    "tsx": _ECMASCRIPT + "(abstract_class_declaration name: (_) @name (class_heritage) @bases)",
    "java": """
(class_declaration name: (identifier) @name superclass: (superclass) @bases)
(class_declaration name: (identifier) @name interfaces: (super_interfaces) @bases)
(interface_declaration name: (identifier) @name (extends_interfaces) @bases)
""",
    "kotlin": "(class_declaration name: (_) @name (delegation_specifiers) @bases)\n"
    "(object_declaration name: (_) @name (delegation_specifiers) @bases)",
    "swift": "(class_declaration name: (_) @name (inheritance_specifier) @bases)\n"
    "(protocol_declaration name: (_) @name (inheritance_specifier) @bases)",
    "cpp": "(class_specifier name: (_) @name (base_class_clause) @bases)\n"
    "(struct_specifier name: (_) @name (base_class_clause) @bases)",
    "csharp": "(class_declaration name: (identifier) @name (base_list) @bases)\n"
    "(interface_declaration name: (identifier) @name (base_list) @bases)",
    "go": "(type_spec name: (type_identifier) @name type: (struct_type"
    " (field_declaration_list (field_declaration !name type: (_) @bases))))",
}
"""Per language: `@name` is a class's name, each `@bases` a node holding
base type names."""

_LAST_PART = {
    "attribute": "attribute",
    "member_expression": "property",
    "scoped_type_identifier": "name",
    "nested_type_identifier": "name",
    "qualified_identifier": "name",
    "scoped_identifier": "name",
    "qualified_type": "name",
    "generic_type": "name",
    "subscript": "value",
    "generic_name": "",
    "user_type": "",
}
"""Node types naming a type by a path or with arguments, and the field that
holds the bare name ("" for the last of the names among its children)."""
_NOT_BASES = frozenset(
    {
        "keyword_argument",
        "type_arguments",
        "type_parameters",
        "arguments",
        "call_expression",
        "value_arguments",
    }
)
_NAMES = frozenset({"identifier", "type_identifier", "property_identifier"})


@cache
def _query(spec: LanguageSpec) -> ts.Query | None:
    pattern = _PATTERNS.get(spec.name)
    if pattern is None:
        return None
    try:
        return ts.Query(load_grammar(spec).language, pattern)
    except (ts.QueryError, ValueError, ImportError):
        return None  # a grammar whose node names differ: no bases


def _base_names(source: bytes, node: ts.Node, out: list[str]) -> None:
    kind = node.type
    if kind in _NAMES:
        out.append(node_text(source, node))
    elif kind in _LAST_PART:
        field = _LAST_PART[kind]
        inner = node.child_by_field_name(field) if field else None
        if inner is None:
            names = [c for c in node.named_children if c.type in _NAMES]
            inner = names[-1] if names else None
        if inner is None and node.named_children:
            inner = node.named_children[0]
        if inner is not None:
            _base_names(source, inner, out)
    elif kind not in _NOT_BASES:
        for child in node.named_children:
            _base_names(source, child, out)


def class_bases(source: bytes, spec: LanguageSpec) -> dict[tuple[int, str], tuple[str, ...]]:
    """Each class of `source` that names bases, by (0-based line of its
    name, its name): the bases' bare names, in the order written. Empty for
    languages without a pattern; never raises on bad source (what
    tree-sitter recovered is read). The file is parsed and walked as the
    definitions are (`folds.skimmed`, `folds.skim_matches`): a class is a
    definition, so the bodies the skim leaves out hold none."""
    if _query(spec) is None:
        return {}
    try:
        parsed, hits, tree = skimmed(source, spec)
    except TooBroken:
        return {}  # a parse given up: nothing recovered
    return _collect(spec, parsed, tree, hits)


def _collect(
    spec: LanguageSpec, source: bytes, tree: ts.Tree, hits: list[int]
) -> dict[tuple[int, str], tuple[str, ...]]:
    query = _query(spec)
    assert query is not None
    found: dict[tuple[int, str], list[str]] = {}
    for _, captures in skim_matches(spec, query, source, tree.root_node, hits):
        names = captures.get("name")
        if not names:
            continue
        out = found.setdefault((names[0].start_point.row, node_text(source, names[0])), [])
        for bases in captures.get("bases", []):
            _base_names(source, bases, out)
    return {key: tuple(dict.fromkeys(b for b in bases if b)) for key, bases in found.items()}


_HEADER_END = {
    "python": (b":", b"\n    pass\n"),
    "javascript": (b"{", b"{}"),
    "typescript": (b"{", b"{}"),
    "tsx": (b"{", b"{}"),
    "java": (b"{", b"{}"),
    "csharp": (b"{", b"{}"),
    "cpp": (b"{", b"{};"),
}
"""Languages whose class header ends at a character its bases never hold
outside brackets (Python's `:`, the others' `{`), and the body that makes
the header alone a whole class."""
HEADER_BYTES = 4096
"""The longest header read alone; a longer one is read from the whole file."""
_OPEN, _CLOSE = b"([<", b")]>"


def header_bases(source: bytes, line: int, name: str, spec: LanguageSpec) -> tuple[str, ...] | None:
    """The bases of the class `name` whose name is on 0-based `line` of
    `source`, read from its header alone (the text from that line to where
    the header ends, given a body of its own): a few hundred bytes parsed
    instead of the whole file, which for a large test module (CPython's
    `test_str.py`) costs milliseconds per class. None when the header
    cannot be read that way (a language without a plain header end, no end
    within `HEADER_BYTES`, a header that does not parse cleanly): then the
    whole file is read (`class_bases`)."""
    end_and_body = _HEADER_END.get(spec.name)
    if end_and_body is None or _query(spec) is None:
        return None
    terminator, body = end_and_body
    start = 0
    for _ in range(line):
        start = source.find(b"\n", start) + 1
        if start == 0:
            return None
    depth = 0
    stop = min(len(source), start + HEADER_BYTES)
    at = start
    while at < stop:
        c = source[at : at + 1]
        if c in (b"#", b"/", b'"', b"'", b"`") and not (c == b"/" and spec.name == "python"):
            return None  # a comment or a string: the brackets may lie
        if depth == 0 and c == terminator:
            break
        if c and c in _OPEN:
            depth += 1
        elif c and c in _CLOSE and depth > 0:
            if c == b">" and source[at - 1 : at] == b"-":
                return None  # an arrow, not a bracket
            depth -= 1
        at += 1
    else:
        return None
    header = source[start:at].lstrip(b" \t")
    keyword = rb"(?:^|\s)(?:class|interface|struct)\s+" + re.escape(name.encode()) + rb"(?![\w$])"
    if not re.search(keyword, header):
        return None  # the line holds something else before the class
    snippet = header + (body if terminator == b"{" else terminator + body)
    try:
        parsed, hits, tree = skimmed(snippet, spec)
    except TooBroken:
        return None
    if tree.root_node.has_error:
        return None
    return _collect(spec, parsed, tree, hits).get((0, name), ())
