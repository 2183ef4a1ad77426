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
- Names declared together (`int x, y;`) share their declaration's node;
  each is placed as if it had its own.
- A function whose nearest enclosing definition is a class-like one is a
  method; a definition inside a function (at any depth) is local; a method
  named `constructor` (JS/TS) is a constructor; an ALL_CAPS module
  variable is a constant.
- Name ranges are converted from tree-sitter's byte columns to UTF-16 code
  units, as LSP requires.

The tree is parsed, and the query run, without the bodies a language's
skim shows cannot hold a definition (`folds`).

A file with syntax errors still yields whatever definitions tree-sitter
recovered.
"""

from __future__ import annotations

import itertools
import logging
import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter, itemgetter

import tree_sitter as ts

from nearsym.core.filedefs import FileDefs, kind_byte
from nearsym.core.model import Kind, Symbol
from nearsym.extract.consts import ConstBlock
from nearsym.extract.deprecation import is_deprecated, marks_deprecation
from nearsym.extract.folds import skim_matches, skimmed_with_consts
from nearsym.extract.grammar import TooBroken, load_grammar, node_text
from nearsym.extract.languages import LanguageSpec
from nearsym.extract.mentions import mention_keys

log = logging.getLogger(__name__)

_CLASS_LIKE = frozenset({Kind.CLASS, Kind.INTERFACE, Kind.STRUCT, Kind.ENUM})
_CALLABLE = frozenset({Kind.FUNCTION, Kind.METHOD})
_CONSTANT_NAME = re.compile(r"^_*[A-Z][A-Z0-9_]+$")
_DATA_KINDS = frozenset({Kind.VARIABLE, Kind.FIELD, Kind.PROPERTY})
_AT = attrgetter("at")
_NODE_ID = attrgetter("node.id")
_FIRST = itemgetter(0)
_LOW = 0xFFFFFFFF


def utf16_column(source: bytes, byte_offset: int, byte_column: int) -> int:
    """The UTF-16 column of a byte offset, given its byte column in its line."""
    line_start = byte_offset - byte_column
    prefix = source[line_start:byte_offset]
    if prefix.isascii():
        return byte_column
    return len(prefix.decode("utf-8", "replace").encode("utf-16-le")) // 2


def _receiver_type(source: bytes, method: ts.Node) -> str:
    """`func (s *Server[T]) Run()` -> `Server`."""
    receiver = method.child_by_field_name("receiver")
    if receiver is None:
        return ""
    stack = [receiver]
    while stack:
        node = stack.pop()
        if node.type == "type_identifier":
            return node_text(source, node)
        stack.extend(reversed(node.children))
    return ""


@dataclass(slots=True)
class _Definition:
    node: ts.Node
    name_node: ts.Node
    kind: Kind
    name: str
    at: int = 0
    """Where the name starts (bytes): read once, as each read of a node's
    field is a call into tree-sitter."""
    stop: int = 0
    """Where the name ends (bytes)."""
    container: str = ""
    local: bool = False
    emit: bool = True
    scope: str = ""


def extract_symbols(source: bytes, spec: LanguageSpec, root: str, path: str) -> list[Symbol]:
    """Every definition in `source`, in file order.

    `root` and `path` (relative, `/`-separated) are stored on each symbol.
    Never raises on bad source: invalid UTF-8 is replaced, syntax errors yield
    what tree-sitter recovered; a file too broken to query (`TooBroken`)
    yields nothing, with a log line.
    """
    try:
        return extract_defs(source, spec).symbols(root, path)
    except TooBroken as why:
        log.warning("skipped %s: %s", path, why)
        return []


def extract_defs(source: bytes, spec: LanguageSpec, mentions: bool = True) -> FileDefs:
    """Every definition in `source`, in file order, as columns (what an
    indexing worker sends back and the cache stores). Raises TooBroken.
    Without `mentions`, the caller finds them (`mentions_of` a task's
    files at once)."""
    parsed, definitions, consts = _definitions(source, spec)
    names: list[str] = []
    containers: list[str] = []
    kinds = bytearray()
    spans = array("I")
    ascii = source.isascii()  # then byte columns are UTF-16 columns
    marks = marks_deprecation(source)
    # The const blocks' names (`consts`), which the tree does not hold, go
    # in between by offset, a block at a time: top-level constants, none
    # deprecated.
    taken = 0
    next_block = consts[0][0] if consts else _LOW
    for d in definitions:
        if not d.name:
            continue
        if d.at > next_block:
            taken = _add_constants(consts, taken, d.at, names, containers, kinds, spans)
            next_block = consts[taken][0] if taken < len(consts) else _LOW
        names.append(d.name)
        containers.append(d.container)
        kinds.append(kind_byte(int(d.kind), d.local, marks and is_deprecated(parsed, d.node)))
        node = d.name_node
        row, column = node.start_point
        if source.find(b"\n", d.at, d.stop) == -1:  # a name on one line (all but a few)
            end_row, end_column = row, column + d.stop - d.at
        else:
            end_row, end_column = node.end_point
        if ascii:
            spans.extend((row, column, end_row, end_column))
        else:
            spans.extend(
                (
                    row,
                    utf16_column(source, d.at, column),
                    end_row,
                    utf16_column(source, d.stop, end_column),
                )
            )
    _add_constants(consts, taken, _LOW, names, containers, kinds, spans)
    return FileDefs(
        spec.name,
        tuple(names),
        tuple(containers),
        bytes(kinds),
        spans,
        mention_keys(source) if mentions else b"",
    )


_CONSTANT = bytes([kind_byte(int(Kind.CONSTANT), False, False)])


def _add_constants(
    blocks: list[ConstBlock],
    taken: int,
    until: int,
    names: list[str],
    containers: list[str],
    kinds: bytearray,
    spans: array[int],
) -> int:
    """Append the names of the const blocks from `taken` on that start
    before `until`; how many blocks are taken then."""
    while taken < len(blocks):
        paren, _, block_names, block_spans = blocks[taken]
        if paren >= until:
            break
        names.extend(block_names)
        containers.extend(itertools.repeat("", len(block_names)))
        kinds.extend(_CONSTANT * len(block_names))
        spans.extend(block_spans)
        taken += 1
    return taken


MAX_CONTAINER_CHARS = 256
"""A container longer than this keeps only its innermost parts: 20,000
nested JavaScript functions would otherwise each hold the names of all
their parents (4 GB of strings; the deepest hand-written nesting in the
kernel, the JDK and CPython qualifies in under 100 characters)."""
MAX_STRAY_NODES = 10_000
"""A tree whose top-level syntax errors hold more nodes than this is not
queried: tree-sitter's query time grows with their square (100,000
unclosed `[` in Python: 150 s, and no definition after them recovered;
20,000: 3.5 s). A guess at what no real source reaches; `nearsym index
--stats` on the kernel counts the files it skips."""


def _qualified(container: str, name: str) -> str:
    """`container.name`, cut to its innermost `MAX_CONTAINER_CHARS`."""
    joined = f"{container}.{name}" if container else name
    if len(joined) <= MAX_CONTAINER_CHARS:
        return joined
    tail = joined[-MAX_CONTAINER_CHARS:]
    return tail[tail.find(".") + 1 :] if "." in tail else tail


def _definitions(
    source: bytes, spec: LanguageSpec
) -> tuple[bytes, list[_Definition], list[ConstBlock]]:
    """The text as parsed (`skimmed_with_consts`), the definitions of its
    tree and the const blocks read beside it."""
    grammar = load_grammar(spec)
    source, hits, tree, consts = skimmed_with_consts(source, spec)
    root = tree.root_node
    if root.has_error:
        tops = [root] if root.is_error else [c for c in root.children if c.is_error]
        stray = sum(node.child_count for node in tops)
        if stray > MAX_STRAY_NODES:
            raise TooBroken(f"{stray} nodes in syntax errors at the top level; not extracted")

    chosen: dict[tuple[int, int], tuple[int, _Definition]] = {}
    holders: list[_Definition] = []
    plans, holding = grammar.definitions, grammar.holders
    for pattern, captures in skim_matches(spec, grammar.query, source, tree.root_node, hits):
        if pattern in holding and "container" in captures and "container.name" in captures:
            holder = captures["container"][0]
            label = _type_name(source, captures["container.name"][0])
            holders.append(_Definition(holder, holder, Kind.CLASS, label, emit=False))
            continue
        plan = plans[pattern]
        names = captures.get("name")
        if plan is None or not names:
            continue
        capture, kind = plan
        nodes = captures.get(capture)
        if not nodes:
            continue
        name_node = names[0]
        key = (at, stop) = (name_node.start_byte, name_node.end_byte)
        seen = chosen.get(key)
        if seen is not None and seen[0] <= pattern:
            continue
        text = source[at:stop].decode("utf-8", "replace").strip("\"'`").lstrip(":")  # node_text
        if kind is Kind.OPERATOR and not text.startswith("operator"):
            text = f"operator {text}"  # C#: `operator +`, `operator int`
        d = _Definition(nodes[0], name_node, kind, text, at, stop)
        scope = captures.get("scope")
        if scope:
            d.scope = node_text(source, scope[0])
        chosen[key] = (pattern, d)

    definitions = [d for _, d in chosen.values()]
    definitions.sort(key=_AT)
    by_node = {d.node.id: d for d in holders}
    by_node.update(zip(map(_NODE_ID, definitions), definitions, strict=True))
    # Parents first: a definition's container is already qualified when its
    # children look it up (Go receivers are resolved by name, not nesting).
    # The nearest enclosing definition comes off a stack of the open ones
    # (tree nodes nest by byte range), not from walking each node's parents;
    # two nodes with the same range fall back to the walk. Sorted by start,
    # then the longer first: one number, `start << 32 | ~end`. Names
    # declared together (`int x, y;`, Go's `A, B int`) share a node, which
    # `by_node` holds once: each is ranked, the earlier names first.
    ranked = [
        (
            (start := (node := d.node).start_byte) << 32 | (_LOW - (end := node.end_byte)),
            start,
            end,
            d,
        )
        for d in _with_names_declared_together(by_node, definitions, holders)
    ]
    ranked.sort(key=_FIRST)
    stack: list[tuple[int, int, int, _Definition]] = []
    go = spec.name == "go"
    method, function, constructor = Kind.METHOD, Kind.FUNCTION, Kind.CONSTRUCTOR
    named_constructor = spec.name != "python"
    for item in ranked:
        _, start, end, d = item
        while stack and stack[-1][2] < end:
            stack.pop()
        kind = d.kind
        if go and kind is method and d.node.type == "method_declaration":
            d.container = _receiver_type(source, d.node)
        else:
            if not stack:
                parent = None
            elif stack[-1][1] == start and stack[-1][2] == end:
                parent = _enclosing(d.node, by_node)
            else:
                parent = stack[-1][3]
            if parent is not None:
                d.container = _qualified(parent.container, parent.name)
                if kind is function and parent.kind in _CLASS_LIKE:
                    d.kind = kind = method
                d.local = parent.local or parent.kind in _CALLABLE
        if d.scope:
            d.container = f"{d.container}.{d.scope}" if d.container else d.scope
        name = d.name
        if "." in name or ":" in name or "\\" in name:  # `_QUALIFIER`: few names
            _split_qualified(d)
            name = d.name
        if kind is method:
            if name == "constructor" and named_constructor:
                d.kind = constructor
            elif d.container.rsplit(".", 1)[-1] == name:
                d.kind = constructor  # C++, C#, Java: the class's own name
        elif kind in _DATA_KINDS and _CONSTANT_NAME.match(name):
            d.kind = Kind.CONSTANT
        stack.append(item)

    return source, definitions, consts


def _with_names_declared_together(
    by_node: dict[int, _Definition], definitions: list[_Definition], holders: list[_Definition]
) -> Iterable[_Definition]:
    """`by_node`'s definitions, each preceded by the others of its node (in
    file order), which `by_node` does not hold."""
    if not holders and len(by_node) == len(definitions):
        return by_node.values()  # one definition per node: most files
    together: dict[int, list[_Definition]] = {}
    for d in definitions:
        key = d.node.id
        if by_node[key] is not d:
            together.setdefault(key, []).append(d)
    if not together:
        return by_node.values()
    every: list[_Definition] = []
    for d in by_node.values():
        every.extend(together.get(d.node.id, ()))
        every.append(d)
    return every


_QUALIFIER = re.compile(r"::|\.|\\")


def _split_qualified(d: _Definition) -> None:
    """`ns::Cart::add` (C++ out of line), `Foo::Bar` (Ruby), `Shop.Cart`
    (Elixir), `Shop\\Model` (PHP): the last part is the name a person types,
    the rest joins the container."""
    name = d.name
    if not _QUALIFIER.search(name) or name.startswith(("operator", ".")):
        return
    parts = [p for p in _QUALIFIER.split(d.name) if p]
    if len(parts) < 2:
        return
    owner = ".".join(parts[:-1])
    d.name = parts[-1]
    d.container = f"{d.container}.{owner}" if d.container else owner


def _type_name(source: bytes, node: ts.Node) -> str:
    """The bare type a container names: `Store<V>` -> `Store`,
    `&mut a::Store` -> `Store`."""
    text = node_text(source, node)
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
