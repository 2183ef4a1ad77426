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

Parsing is most of the cost, and function bodies are half of a file's bytes
and hold almost none of its definitions. Where a language's `Skim` names its
blocks, a block whose text spells no token a definition needs (a Go `type`,
a Java `class` or `new T() {`) is left out of the parse itself: the parser
reads only the ranges around such insides (`_folds`), so the tree has an
empty body there. The blocks are found in the text (a line ending in `{`,
closed by a `}` at the same indent) and confirmed by the parse; anything it
does not confirm is parsed whole. On Go 1.19's library this cut parsing from
7.0 to 2.9 CPU seconds, on the JDK's Java from 11.7 to 7.8, with the same
definitions in every file (`tests/bench/skim_walk.py`).

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

from nearsym.core.filedefs import LOCAL_BIT, FileDefs
from nearsym.core.model import Kind, Symbol
from nearsym.extract.languages import CAPTURE_KINDS, LanguageSpec

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


def _parser(spec: LanguageSpec, *, folding: bool = False) -> ts.Parser:
    """A parser per thread and language: tree-sitter parsers are not shared.
    The `folding` one has its included ranges set by each parse (`_parse`);
    the other always reads whole files."""
    cache_: dict[tuple[str, bool], ts.Parser] | None = getattr(_parsers, "by_language", None)
    if cache_ is None:
        cache_ = {}
        _parsers.by_language = cache_
    parser = cache_.get((spec.name, folding))
    if parser is None:
        parser = ts.Parser(load_grammar(spec).language)
        cache_[(spec.name, folding)] = parser
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


def _matches(spec: LanguageSpec, grammar: Grammar, root: ts.Node, hits: list[int]) -> list[Match]:
    """The definitions query's matches, walking only where definitions can be.

    Without a skim this is one walk of the whole tree. With one, see
    `Skim`; `hits` are where its inner tokens are spelled (`_spelled`). A
    match can be seen twice; callers keep one per name.
    """
    cursor = ts.QueryCursor(grammar.query)
    skim = spec.skim
    if skim is None:
        return cursor.matches(root)
    shallow = ts.QueryCursor(grammar.query)
    shallow.set_max_start_depth(1)
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


def _folds(source: bytes, hits: list[int], raw_quote: bytes) -> list[tuple[int, int]]:
    """(open brace, close brace) of the blocks whose inside the parse may
    leave out: a line ending in `{` whose block, closed by a `}` at the
    start of a line with the same indent, spells no inner token.

    Only what is cheap to see in the text is trusted, and the parse checks
    the rest (`_misfolded`). The first line inside must be indented deeper
    than the head, and every other line at least as deep, or be blank: a
    block closed early (`{ ...}` ending a line, a `}` indented one space
    off) or a head indented unlike its close (a wrapped `throws X {`) would
    otherwise reach to some later `}` and swallow what lies between. The
    inside must also balance its braces, close every block comment it opens
    and hold an even count of `raw_quote` (Go's backtick, Java's text
    block), so that the chosen `}` is not in a comment or a string that the
    text around it would end elsewhere. A head that spells a token itself
    (`type T struct {`, `class A {`), opens a switch (whose braces are not a
    block), stands alone or starts like a comment is not folded; blocks
    inside a kept one may still be.
    """
    folds: list[tuple[int, int]] = []
    at = source.find(b"{\n")
    while at != -1:
        close = _fold_at(source, at, hits, raw_quote)
        if close:
            folds.append((at, close))
        at = source.find(b"{\n", close or at + 2)  # a fold's heads are inside it
    return folds


def _fold_at(source: bytes, brace: int, hits: list[int], raw_quote: bytes) -> int:
    """The close brace of the block opened at `brace` if it may be folded
    (`_folds`), else 0."""
    start = source.rfind(b"\n", 0, brace) + 1
    line = source[start:brace]
    body = line.lstrip(b" \t")
    if (
        not body  # `{` alone: what it opens is on lines above
        or body.startswith((b"*", b"/"))  # in a comment, likely
        or b"switch" in body
        or b"select" in body
    ):
        return 0
    first = bisect_left(hits, start)
    hit = hits[first] if first < len(hits) else len(source)
    if hit < brace:
        return 0  # a token in the head
    indent = line[: len(line) - len(body)]
    close = source.find(b"\n" + indent + b"}", brace) + 1 + len(indent)
    if close <= len(indent) or hit < close:
        return 0  # no close, or a token inside
    inner = _FIRST_INDENT.match(source, brace + 2, close)
    deeper = inner[1] if inner is not None else b""
    if len(deeper) <= len(indent) or not deeper.startswith(indent):
        return 0
    inside = source[brace + 1 : close]
    if (
        _outdented(deeper).search(source, brace + 1, close - len(indent) - 1)
        or inside.count(b"{") != inside.count(b"}")
        or inside.rfind(b"/*") > inside.rfind(b"*/")
        or inside.count(raw_quote) % 2
    ):
        return 0
    return close


_FIRST_INDENT = re.compile(rb"(?:[ \t]*\r?\n)*([ \t]*)")
"""The indent of the first line that is not blank."""


@cache
def _outdented(indent: bytes) -> re.Pattern[bytes]:
    """A line start not indented at least `indent`, and not blank."""
    return re.compile(rb"\n(?!" + re.escape(indent) + rb"|[ \t]*\r?(?:\n|$))")


def _included(source: bytes, folds: list[tuple[int, int]]) -> list[ts.Range]:
    """The parser's ranges: everything but the inside of each fold."""
    ranges: list[ts.Range] = []
    row, counted = 0, 0  # newlines before `counted`

    def point(offset: int) -> ts.Point:
        nonlocal row, counted
        row += source.count(b"\n", counted, offset)
        counted = offset
        return ts.Point(row, offset - source.rfind(b"\n", 0, offset) - 1)

    start, start_point = 0, ts.Point(0, 0)
    for brace, close in folds:
        ranges.append(ts.Range(start_point, point(brace + 1), start, brace + 1))
        start, start_point = close, point(close)
    ranges.append(ts.Range(start_point, ts.Point(0xFFFFFFFF, 0xFFFFFFFF), start, 0xFFFFFFFF))
    return ranges


def _misfolded(
    tree: ts.Tree, folds: list[tuple[int, int]], blocks: frozenset[str]
) -> list[tuple[int, int]] | None:
    """The folds that are not the inside of one of `blocks` in `tree`; None
    when the tree has a syntax error (the text fooled `_folds`, or the file
    has one anyway)."""
    root = tree.root_node
    if root.has_error:
        return None
    wrong: list[tuple[int, int]] = []
    for brace, close in folds:
        token = root.descendant_for_byte_range(brace, brace + 1)
        block = token.parent if token is not None and token.type == "{" else None
        if block is None or block.type not in blocks or block.end_byte != close + 1:
            wrong.append((brace, close))
    return wrong


def _parse(source: bytes, spec: LanguageSpec, hits: list[int]) -> ts.Tree:
    """The file's tree, parsed without the inside of blocks that cannot hold
    a definition where the skim allows it (`Skim.blocks`).

    A folded tree is used only when the parse confirms every fold: it has no
    syntax error, and each fold is the inside of a block of an allowed kind
    ending at the chosen brace. Folds it does not confirm are dropped and
    the parse is tried once more; then the whole file is parsed. Positions in
    a folded tree are the file's own, so extraction reads it as usual.
    """
    skim = spec.skim
    if skim is not None and skim.blocks:
        folds = _folds(source, hits, skim.raw_quote)
        for _ in range(2):
            if not folds:
                break
            parser = _parser(spec, folding=True)
            parser.included_ranges = _included(source, folds)
            tree = parser.parse(source)
            wrong = _misfolded(tree, folds, skim.blocks)
            if wrong == []:
                return tree
            if wrong is None:
                break
            refused = set(wrong)
            folds = [f for f in folds if f not in refused]
    return _parser(spec).parse(source)


def _definitions(source: bytes, spec: LanguageSpec) -> list[_Definition]:
    grammar = load_grammar(spec)
    hits = _spelled(source, grammar.inner) if spec.skim is not None else []
    tree = _parse(source, spec, hits)

    chosen: dict[tuple[int, int], tuple[int, _Definition]] = {}
    holders: list[_Definition] = []
    for pattern, captures in _matches(spec, grammar, tree.root_node, hits):
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
