"""Which definitions their language marks as deprecated.

Design note
-----------
Every language that can say "deprecated" says it in the definition's
header or just above it, never in its body:

- a decorator, annotation or attribute: Python `@deprecated(...)`
  (PEP 702's `warnings.deprecated`, `typing_extensions.deprecated`), Java
  and Kotlin `@Deprecated`, C# `[Obsolete]`, Rust `#[deprecated]`, PHP
  `#[Deprecated]`, Swift `@available(*, deprecated)`;
- a doc comment right above it: a JSDoc, TSDoc, Javadoc, KDoc or PHPDoc
  `@deprecated` tag, or Go's convention of a paragraph that starts with
  `Deprecated:` in the doc comment.

So the check reads only the definition node's own header children (the
modifiers, attribute lists and annotations before its name) and the run of
comments, decorators and attributes that stands directly above it, climbing
through the wrappers a grammar puts around a definition (Python's
`decorated_definition`, an `export` statement, Go's `type (...)` block).
It does not read bodies, and it does not follow a deprecation declared
elsewhere (a `.pyi` stub, a `__getattr__` that warns, a re-export).

Cost: nothing for a file that never spells `deprecat` or `obsolete` (nearly
every file: two substring searches per file decide); otherwise a few sibling steps
per definition.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from nearsym.extract.grammar import node_bytes

_MARKER = re.compile(r"(?i)(?<![\w$])(deprecated|obsolete(attribute)?)(?![\w$])")
"""In a decorator, annotation or attribute: the marker's own name."""

_DOC_TAG = re.compile(r"(?m)^[\s/*#!]*@(?i:deprecated)\b|^\s*(//+|/?\*+|#)?\s*Deprecated:")
"""In a comment: a doc tag `@deprecated` at a line's start (after the
comment's own `*`, `//` or `#`), or Go's `Deprecated:` paragraph."""

_MARK_TYPES = frozenset(
    {
        "decorator",  # Python
        "annotation",  # Java, Kotlin, Swift attribute
        "marker_annotation",  # Java `@Deprecated`
        "attribute_list",  # C#
        "attribute_item",  # Rust `#[...]`
        "attribute",  # Rust inner, Swift, PHP
        "attribute_group",  # PHP 8 `#[...]`
        "modifiers",  # Java, Kotlin: holds the annotations
        "modifier",
    }
)
_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment", "doc_comment"})
_WRAPPERS = frozenset(
    {
        "decorated_definition",  # Python
        "export_statement",  # JavaScript, TypeScript
        "ambient_declaration",  # TypeScript `declare`
        "lexical_declaration",  # `const f = () => ...`
        "variable_declaration",
        "type_declaration",  # Go `type T ...`
        "const_declaration",
        "var_declaration",
        "field_declaration",  # Java, C# fields: the declarator is inside
        "property_declaration",  # Kotlin, C#
        "declaration",  # C, C++
        "template_declaration",  # C++
    }
)


def marks_deprecation(source: bytes) -> bool:
    """Whether any definition of `source` can be marked deprecated: every
    marker spells one of these (`Deprecated`, `deprecated`, `Obsolete`).
    Two substring searches (memmem) cost far less than a case-insensitive
    regex over every byte of a large tree."""
    return b"eprecat" in source or b"bsolete" in source


def is_deprecated(source: bytes, node: ts.Node) -> bool:
    """Whether the definition `node` is marked deprecated by its header or
    the comments and attributes directly above it. `source` is the text
    its tree was parsed from."""
    current: ts.Node | None = node
    depth = 0
    while current is not None and depth < 4:
        for child in current.children:
            if child.type in _MARK_TYPES and _marker_in(source, child):
                return True
            if child.is_named and child.type not in _MARK_TYPES | _COMMENT_TYPES:
                break  # past the header: the name, the signature, the body
        if _marked_above(source, current):
            return True
        parent = current.parent
        if parent is None or parent.type not in _WRAPPERS:
            return False
        current = parent
        depth += 1
    return False


def _marked_above(source: bytes, node: ts.Node) -> bool:
    """The run of comments, decorators and attributes directly above `node`
    (each ending on the line before the next starts, or on the same)."""
    below = node.start_point.row
    sibling = node.prev_sibling
    while sibling is not None and sibling.end_point.row >= below - 1:
        if sibling.type in _COMMENT_TYPES:
            if _DOC_TAG.search(_text(source, sibling)):
                return True
        elif sibling.type in _MARK_TYPES:
            if _marker_in(source, sibling):
                return True
        else:
            return False
        below = sibling.start_point.row
        sibling = sibling.prev_sibling
    return False


def _marker_in(source: bytes, node: ts.Node) -> bool:
    """A decorator, annotation or attribute naming the marker: its text up
    to the first `(` (arguments are free text: `@deprecated` inside a note
    string names nothing), or, for a list of several, anywhere."""
    text = _text(source, node)
    if node.type in ("modifiers", "attribute_list", "attribute_group", "modifier"):
        return any(_marker_in(source, c) for c in node.named_children) or (
            _MARKER.search(text.split("(", 1)[0]) is not None
        )
    head = text.split("(", 1)[0]
    if (
        node.type in ("annotation", "attribute") and "(" in text
    ):  # Swift `@available(*, deprecated)`
        inside = text.split("(", 1)[1]
        if head.strip().lstrip("@") == "available" and _MARKER.search(inside):
            return True
    return _MARKER.search(head) is not None


def _text(source: bytes, node: ts.Node) -> str:
    return node_bytes(source, node).decode("utf-8", "replace")
