"""Source bytes -> definitions, with tree-sitter.

Design note
-----------
Each language has a definitions query (`languages/queries/*.scm`) that marks a
definition node `@definition.<kind>` and its name `@name`. Extraction runs the
query once over the tree and then does what a query cannot:

- Several patterns may match one name (a Go `type_spec` is a struct *and* a
  type); the earliest pattern in the query file wins, so specific patterns
  are written first.
- The container of a definition is the qualified name of the nearest
  enclosing definition (`Outer.Inner` for a method of a nested class); a Go
  method's container is its receiver's type name.
- A function whose nearest enclosing definition is a class-like one is a
  method; a definition inside a function (at any depth) is local; a method named `constructor` (JS/TS) is a constructor; an ALL_CAPS
  module variable is a constant.
- Name ranges are converted from tree-sitter's byte columns to UTF-16 code
  units, as LSP requires.

A file with syntax errors still yields whatever definitions tree-sitter
recovered. Only this module (and nothing in the core) imports tree-sitter.
"""

from __future__ import annotations

import importlib
import re
import threading
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import tree_sitter as ts

from nearsym.columns import LOCAL_BIT, FileDefs
from nearsym.languages import CAPTURE_KINDS, LanguageSpec
from nearsym.model import Kind, Symbol

_CLASS_LIKE = frozenset({Kind.CLASS, Kind.INTERFACE, Kind.STRUCT, Kind.ENUM})
_CALLABLE = frozenset({Kind.FUNCTION, Kind.METHOD})
_CONSTANT_NAME = re.compile(r"^_*[A-Z][A-Z0-9_]+$")
_DATA_KINDS = frozenset({Kind.VARIABLE, Kind.FIELD, Kind.PROPERTY})


@dataclass(frozen=True, slots=True)
class Grammar:
    """A loaded grammar and its compiled definitions query."""

    language: ts.Language
    query: ts.Query
    inner: tuple[tuple[bytes, re.Pattern[bytes]], ...] = ()
    """`Skim.inner`, compiled."""


@cache
def load_grammar(spec: LanguageSpec) -> Grammar:
    """Load a language's grammar from its wheel and compile its query.

    Raises ImportError when the grammar wheel is missing, and
    tree_sitter.QueryError when a query does not fit the grammar.
    """
    module = importlib.import_module(spec.grammar_module)
    language = ts.Language(getattr(module, spec.grammar_function)())
    inner = tuple((w, re.compile(p)) for w, p in spec.skim.inner) if spec.skim else ()
    return Grammar(language, ts.Query(language, spec.query_source()), inner)


_parsers = threading.local()


def _parser(spec: LanguageSpec) -> ts.Parser:
    """A parser per thread and language: tree-sitter parsers are not shared."""
    cache_: dict[str, ts.Parser] | None = getattr(_parsers, "by_language", None)
    if cache_ is None:
        cache_ = {}
        _parsers.by_language = cache_
    parser = cache_.get(spec.name)
    if parser is None:
        parser = ts.Parser(load_grammar(spec).language)
        cache_[spec.name] = parser
    return parser


def utf16_column(source: bytes, byte_offset: int, byte_column: int) -> int:
    """The UTF-16 column of a byte offset, given its byte column in its line."""
    line_start = byte_offset - byte_column
    prefix = source[line_start:byte_offset]
    if prefix.isascii():
        return byte_column
    return len(prefix.decode("utf-8", "replace").encode("utf-16-le")) // 2


def _text(node: ts.Node) -> str:
    raw = node.text or b""
    return raw.decode("utf-8", "replace").strip("\"'`").lstrip(":")


def _receiver_type(method: ts.Node) -> str:
    """`func (s *Server[T]) Run()` -> `Server`."""
    receiver = method.child_by_field_name("receiver")
    if receiver is None:
        return ""
    stack = [receiver]
    while stack:
        node = stack.pop()
        if node.type == "type_identifier":
            return _text(node)
        stack.extend(reversed(node.children))
    return ""


@dataclass(slots=True)
class _Definition:
    node: ts.Node
    name_node: ts.Node
    kind: Kind
    name: str
    container: str = ""
    local: bool = False
    emit: bool = True
    scope: str = ""


def extract_symbols(source: bytes, spec: LanguageSpec, root: str, path: str) -> list[Symbol]:
    """Every definition in `source`, in file order.

    `root` and `path` (relative, `/`-separated) are stored on each symbol.
    Never raises on bad source: invalid UTF-8 is replaced, syntax errors yield
    what tree-sitter recovered.
    """
    return extract_defs(source, spec).symbols(root, path)


def extract_defs(source: bytes, spec: LanguageSpec) -> FileDefs:
    """Every definition in `source`, in file order, as columns (what an
    indexing worker sends back and the cache stores)."""
    definitions = _definitions(source, spec)
    names: list[str] = []
    containers: list[str] = []
    kinds = bytearray()
    spans = array("I")
    ascii = source.isascii()  # then byte columns are UTF-16 columns
    for d in definitions:
        if not d.name:
            continue
        names.append(d.name)
        containers.append(d.container)
        kinds.append(int(d.kind) | (LOCAL_BIT if d.local else 0))
        node = d.name_node
        start, end = node.start_point, node.end_point
        if ascii:
            spans.extend((start.row, start.column, end.row, end.column))
        else:
            spans.extend(
                (
                    start.row,
                    utf16_column(source, node.start_byte, start.column),
                    end.row,
                    utf16_column(source, node.end_byte, end.column),
                )
            )
    return FileDefs(spec.name, tuple(names), tuple(containers), bytes(kinds), spans)


Match = tuple[int, dict[str, list[ts.Node]]]
Token = tuple[bytes, re.Pattern[bytes]]


def _matches(source: bytes, spec: LanguageSpec, grammar: Grammar, root: ts.Node) -> list[Match]:
    """The definitions query's matches, walking only where definitions can be.

    Without a skim this is one walk of the whole tree. With one, see
    `Skim`. A match can be seen twice; callers keep one per name.
    """
    cursor = ts.QueryCursor(grammar.query)
    skim, inner = spec.skim, grammar.inner
    if skim is None:
        return cursor.matches(root)
    shallow = ts.QueryCursor(grammar.query)
    shallow.set_max_start_depth(1)
    hits = _spelled(source, inner)
    found: list[Match] = []
    stack = [root]
    while stack:
        node = stack.pop()
        found.extend(shallow.matches(node))
        for child in node.named_children:
            kind = child.type
            if kind in skim.outline:
                stack.append(child)
            elif kind in skim.guarded:
                at = bisect_left(hits, child.start_byte)
                if at < len(hits) and hits[at] < child.end_byte:
                    found.extend(cursor.matches(child))
            elif "comment" not in kind:
                found.extend(cursor.matches(child))
    return found


def _spelled(source: bytes, tokens: Iterable[Token]) -> list[int]:
    """The sorted offsets where one of `tokens` (a word, and the pattern that
    must match where it occurs) occurs in `source`."""
    hits: list[int] = []
    for word, pattern in tokens:
        at = source.find(word)
        while at != -1:
            if pattern.match(source, at):
                hits.append(at)
            at = source.find(word, at + 1)
    hits.sort()
    return hits


def _definitions(source: bytes, spec: LanguageSpec) -> list[_Definition]:
    grammar = load_grammar(spec)
    tree = _parser(spec).parse(source)

    chosen: dict[tuple[int, int], tuple[int, _Definition]] = {}
    holders: list[_Definition] = []
    for pattern, captures in _matches(source, spec, grammar, tree.root_node):
        if "container" in captures and "container.name" in captures:
            holder = captures["container"][0]
            label = _type_name(captures["container.name"][0])
            holders.append(_Definition(holder, holder, Kind.CLASS, label, emit=False))
            continue
        names = captures.get("name")
        if not names:
            continue
        scope = captures.get("scope")
        for capture, nodes in captures.items():
            if not capture.startswith("definition."):
                continue
            kind = CAPTURE_KINDS.get(capture.removeprefix("definition."))
            if kind is None:
                continue
            name_node = names[0]
            key = (name_node.start_byte, name_node.end_byte)
            if key in chosen and chosen[key][0] <= pattern:
                continue
            text = _text(name_node)
            if kind is Kind.OPERATOR and not text.startswith("operator"):
                text = f"operator {text}"  # C#: `operator +`, `operator int`
            d = _Definition(nodes[0], name_node, kind, text)
            if scope:
                d.scope = _text(scope[0])
            chosen[key] = (pattern, d)

    definitions = sorted((d for _, d in chosen.values()), key=lambda d: d.name_node.start_byte)
    by_node = {d.node.id: d for d in holders}
    by_node.update((d.node.id, d) for d in definitions)
    # Parents first: a definition's container is already qualified when its
    # children look it up (Go receivers are resolved by name, not nesting).
    # The nearest enclosing definition comes off a stack of the open ones
    # (tree nodes nest by byte range), not from walking each node's parents;
    # two nodes with the same range fall back to the walk.
    ranked = [(d.node.start_byte, d.node.end_byte, d) for d in by_node.values()]
    ranked.sort(key=lambda item: (item[0], -item[1]))
    stack: list[tuple[int, int, _Definition]] = []
    for start, end, d in ranked:
        while stack and stack[-1][1] < end:
            stack.pop()
        if d.node.type == "method_declaration" and spec.name == "go":
            d.container = _receiver_type(d.node)
        else:
            if stack and stack[-1][0] == start and stack[-1][1] == end:
                parent = _enclosing(d.node, by_node)
            else:
                parent = stack[-1][2] if stack else None
            if parent is not None:
                d.container = (
                    f"{parent.container}.{parent.name}" if parent.container else parent.name
                )
                if parent.kind in _CLASS_LIKE and d.kind is Kind.FUNCTION:
                    d.kind = Kind.METHOD
                d.local = parent.local or parent.kind in _CALLABLE
        if d.scope:
            d.container = f"{d.container}.{d.scope}" if d.container else d.scope
        _split_qualified(d)
        if d.kind is Kind.METHOD and d.name == "constructor" and spec.name != "python":
            d.kind = Kind.CONSTRUCTOR
        if d.kind in _DATA_KINDS and _CONSTANT_NAME.match(d.name):
            d.kind = Kind.CONSTANT
        if d.kind is Kind.METHOD and d.container.rsplit(".", 1)[-1] == d.name:
            d.kind = Kind.CONSTRUCTOR  # C++, C#, Java: the class's own name
        stack.append((start, end, d))

    return definitions


_QUALIFIER = re.compile(r"::|\.|\\")


def _split_qualified(d: _Definition) -> None:
    """`ns::Cart::add` (C++ out of line), `Foo::Bar` (Ruby), `Shop.Cart`
    (Elixir), `Shop\\Model` (PHP): the last part is the name a person types,
    the rest joins the container."""
    if not _QUALIFIER.search(d.name) or d.name.startswith(("operator", ".")):
        return
    parts = [p for p in _QUALIFIER.split(d.name) if p]
    if len(parts) < 2:
        return
    owner = ".".join(parts[:-1])
    d.name = parts[-1]
    d.container = f"{d.container}.{owner}" if d.container else owner


def _type_name(node: ts.Node) -> str:
    """The bare type a container names: `Store<V>` -> `Store`,
    `&mut a::Store` -> `Store`."""
    text = _text(node)
    text = text.split("<", 1)[0].split("[", 1)[0].split("(", 1)[0]
    text = text.replace("&", "").replace("*", "").replace("mut ", "").strip()
    return re.split(r"::|\.", text)[-1].strip()


def _enclosing(node: ts.Node, by_node: dict[int, _Definition]) -> _Definition | None:
    parent = node.parent
    while parent is not None:
        found = by_node.get(parent.id)
        if found is not None:
            return found
        parent = parent.parent
    return None


__all__ = ["Grammar", "extract_defs", "extract_symbols", "load_grammar", "utf16_column"]


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
        return _text(node)

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
                        level = len(_text(part))
                    elif part.type == "dotted_name":
                        name = _text(part)
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
                        names.append(_text(n))
                    inner.extend(n.children)
                refs.append(ImportRef(_text(source), 0, tuple(names)))
                continue
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if fn is not None and _text(fn) == "require" and args is not None:
                strings = [c for c in args.children if c.type == "string"]
                if strings:
                    refs.append(ImportRef(_text(strings[0])))
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
                refs.append(ImportRef(_text(path)))
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
    return reader(_parser(spec).parse(source).root_node)
