"""The skim: parsing and querying a file without the bodies that cannot
hold a definition.

Design note
-----------
Parsing is most of the cost, and function bodies are half of a file's bytes
and hold almost none of its definitions. Where a language's `Skim` names its
blocks, a block whose text spells no token a definition needs (a Go `type`,
a Java `class` or `new T() {`) is left out of the parse itself: the parser
reads only the ranges around such insides (`find_folds`), so the tree has an
empty body there. The blocks are found in the text (a line ending in `{`,
closed by a `}` at the same indent; or, under a wrapped head, by the first
line less deep than the body: `_wrapped_fold_at`) and confirmed by the
parse; anything it does not confirm is parsed whole. On Go 1.19's library
this cut parsing from 7.0 to 2.9 CPU seconds, on the JDK's Java from 11.7
to 7.8, with the same definitions in every file
(`tests/bench/skim_walk.py`). Wrapped heads
(`throws X {` on a line of its own, a `{` alone under a wrapped signature)
left 14 MB of the JDK's method bodies in the parse; folding them too cut a
worker's CPU on the JDK from 9.81 to 9.15 seconds, with the same blobs.

Java's comments on lines of their own, outside the folds, are left out of
the parse the same way (`comments.quiet_folds`, `Skim.quiet_lines`): the JDK's
Javadoc and licences are half the text its folded parse still read (54 of
113 MB). A run of them that spells a deprecation mark stays, as the marks
above a definition are read from its tree's comments. Per file, old and
new code in turn (`tests/bench/extract_ab.py`), the JDK's extraction took
5 to 8% less CPU (four runs: 0.939, 0.940, 0.954, 0.922 of the old), with
the same blobs. Go's took the same; the Linux kernel's 13% more, and some
of its files gave other definitions (see `Skim.quiet_lines`).

The definitions query is kept out of the same bodies: `skim_matches` runs
it on the outline of the file (see `Skim`) and walks a guarded node only
when its text spells an inner token (`spelled_tokens`). A token inside a
comment or a literal (`Skim.quiet`) counts for neither: the JDK's method
bodies say `class` in their comments, and leaving those out of the hits
cut a worker's CPU on the JDK from 9.1 to 8.5 seconds, on Go's library
from 4.12 to 3.94, with the same definitions; in the kernel one file
gained seven (a body no longer parsed whole, whose macros' syntax errors
had taken in the definitions around it).

`find_folds` runs in C where nearsym's extension was built (`_scan.c`),
with the same rules and the same folds: on Go's library 0.15 CPU seconds
where Python took 0.47. The C scan knows the skims' `flush` lines by
their pattern (`NATIVE_FLUSH`); a skim with another falls back to Python.
So does `spelled_tokens` (`inner_hits`): the C scan holds the regexes its
matchers and its comment and literal scan were written from, and a skim
whose tokens or `quiet` differ from them by a byte is scanned in Python.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable
from functools import cache

import tree_sitter as ts

from nearsym.extract import native
from nearsym.extract.comments import quiet_folds
from nearsym.extract.consts import ConstBlock, const_blocks
from nearsym.extract.grammar import load_grammar, parse_bounded, parser, text_predicate
from nearsym.extract.languages import C_FLUSH, LanguageSpec, Skim

Match = tuple[int, dict[str, list[ts.Node]]]
Token = tuple[bytes, re.Pattern[bytes]]


def skim_matches(
    spec: LanguageSpec, query: ts.Query, source: bytes, root: ts.Node, hits: list[int]
) -> list[Match]:
    """`query`'s matches, walking only where definitions can be: for the
    definitions query, or one whose matches lie at definitions (a class's
    bases).

    Without a skim this is one walk of the whole tree. With one, see
    `Skim`; `hits` are where its inner tokens are spelled
    (`spelled_tokens`). A match can be seen twice; callers keep one per
    name. `source` is the text `root` was parsed from, which the query's
    text predicates read (`text_predicate`).
    """
    cursor = ts.QueryCursor(query)
    holds = text_predicate(source)
    skim = spec.skim
    if skim is None:
        return cursor.matches(root, holds)
    shallow = ts.QueryCursor(query)
    shallow.set_max_start_depth(1)
    found: list[Match] = []
    stack = [root]
    while stack:
        node = stack.pop()
        found.extend(shallow.matches(node, holds))
        for child in node.named_children:
            kind = child.type
            if kind in skim.outline:
                stack.append(child)
            elif kind in skim.guarded:
                at = bisect_left(hits, child.start_byte)
                if at < len(hits) and hits[at] < child.end_byte:
                    found.extend(cursor.matches(child, holds))
            elif "comment" not in kind and kind not in skim.flat:
                found.extend(cursor.matches(child, holds))
    return found


def spelled_tokens(
    source: bytes, tokens: Iterable[Token], quiet: re.Pattern[bytes] | None = None
) -> list[int]:
    """The sorted offsets where one of `tokens` (a word, and the pattern that
    must match where it occurs) occurs in `source`, but inside what
    `quiet` finds (`Skim.quiet`: its comments and literals)."""
    hits: list[int] = []
    for word, pattern in tokens:
        at = source.find(word)
        while at != -1:
            if pattern.match(source, at):
                hits.append(at)
            at = source.find(word, at + 1)
    hits.sort()
    if quiet is None or not hits:
        return hits
    kept: list[int] = []
    k = 0
    for span in quiet.finditer(source):
        start, end = span.span()
        while k < len(hits) and hits[k] < start:
            kept.append(hits[k])
            k += 1
        while k < len(hits) and hits[k] < end:
            k += 1  # in a comment or a literal
        if k == len(hits):
            break
    kept.extend(hits[k:])
    return kept


NATIVE_FLUSH: dict[bytes, int] = (
    {b"": 0, C_FLUSH: native.FLUSH_HASH | native.FLUSH_LABEL}
    if native.find_folds is not None
    else {}
)
"""The skims' `flush` patterns the C scan knows, as its flags."""


def find_folds(source: bytes, hits: list[int], skim: Skim) -> list[tuple[int, int]]:
    """`folds_in_python`, in C where it was built and knows the skim's
    `flush` lines."""
    flush = NATIVE_FLUSH.get(skim.flush)
    if flush is not None and native.find_folds is not None:
        return native.find_folds(source, hits, skim.lone_brace, flush, skim.raw_quote)
    return folds_in_python(source, hits, skim)


def folds_in_python(source: bytes, hits: list[int], skim: Skim) -> list[tuple[int, int]]:
    """(open brace, close brace) of the blocks whose inside the parse may
    leave out: a line ending in `{` whose block, closed by a `}` at the
    start of a line with the same indent, spells no inner token.

    Only what is cheap to see in the text is trusted, and the parse checks
    the rest (`_misfolded`). The first line inside must be indented deeper
    than the head, and every other line at least as deep, or be blank (or,
    where the skim allows it, a line it names `flush`: C's labels and
    preprocessor lines): a block closed early (`{ ...}` ending a line, a
    `}` indented one space off) or a head indented unlike its close (a
    wrapped `throws X {`) would otherwise reach to some later `}` and
    swallow what lies between; such a head is tried by its own rule
    (`_wrapped_fold_at`). The inside must also balance its braces,
    close every block comment it opens and hold an even count of the skim's
    `raw_quote` (Go's backtick, Java's text block), so that the chosen `}`
    is not in a comment or a string that the text around it would end
    elsewhere. A head that spells a token itself (`type T struct {`,
    `class A {`), opens a switch (whose braces are not a block) or starts
    like a comment is not folded, nor is a `{` alone on its line unless the
    skim allows it (`lone_brace`: then the line above is the head); blocks
    inside a kept one may still be.
    """
    folds: list[tuple[int, int]] = []
    found = _Found(source, skim.flush)
    at = source.find(b"{\n")
    while at != -1:
        close = _fold_at(source, at, hits, skim, found)
        if close:
            folds.append((at, close))
        at = source.find(b"{\n", close or at + 2)  # a fold's heads are inside it
    return folds


class _Found:
    """A file's searches for a close, each kept with where it began: a
    search from a later brace that the last result still answers is not
    run again. A file of many `{` lines at one indent, none closed, ran
    each search to its end: 115 CPU seconds for a megabyte of `\tx {`
    lines."""

    def __init__(self, source: bytes, flush: bytes) -> None:
        self.source, self.flush = source, flush
        self.closes: dict[bytes, tuple[int, int]] = {}
        self.outdents: dict[bytes, tuple[int, int]] = {}
        self.scanned = 0
        """The bytes the searches that ran went over (the others were
        answered)."""

    def close(self, indent: bytes, brace: int) -> int:
        """`source.find(b"\\n" + indent + b"}", brace)`."""
        known = self.closes.get(indent)
        if known is not None and known[0] <= brace and (known[1] == -1 or brace <= known[1]):
            return known[1]
        at = self.source.find(b"\n" + indent + b"}", brace)
        self.closes[indent] = (brace, at)
        self.scanned += (len(self.source) if at == -1 else at) - brace
        return at

    def outdented(self, deeper: bytes, start: int) -> int:
        """Where `_outdented(deeper)` first matches from `start`, or -1."""
        known = self.outdents.get(deeper)
        if known is not None and known[0] <= start and (known[1] == -1 or start <= known[1]):
            return known[1]
        out = _outdented(deeper, self.flush).search(self.source, start)
        at = out.start() if out is not None else -1
        self.outdents[deeper] = (start, at)
        self.scanned += (len(self.source) if at == -1 else at) - start
        return at


def _fold_at(source: bytes, brace: int, hits: list[int], skim: Skim, found: _Found) -> int:
    """The close brace of the block opened at `brace` if it may be folded
    (`find_folds`), else 0."""
    start = source.rfind(b"\n", 0, brace) + 1
    line = source[start:brace]
    body = line.lstrip(b" \t")
    head_start = start
    head = body
    if not body.rstrip(b"\r"):
        if not skim.lone_brace:
            return _wrapped_fold_at(source, brace, start, True, hits, skim, found)
        if start < 2:
            return 0  # `{` alone: what it opens is on lines above
        head_start = source.rfind(b"\n", 0, start - 1) + 1
        head = source[head_start : start - 1].lstrip(b" \t")
        if not head.rstrip(b"\r") or head.startswith(b"#"):
            return 0
    if head.startswith((b"*", b"/")) or b"switch" in head or b"select" in head:
        return 0  # in a comment, likely; or a switch's braces
    first = bisect_left(hits, head_start)
    hit = hits[first] if first < len(hits) else len(source)
    if hit < brace:
        return 0  # a token in the head
    indent = line[: len(line) - len(body)]
    close = found.close(indent, brace) + 1 + len(indent)
    if close <= len(indent):
        return _wrapped_fold_at(source, brace, start, False, hits, skim, found)
    if hit < close:
        return 0  # a token inside
    flush = skim.flush
    inner = _first_indent(flush).match(source, brace + 2, close)
    deeper = inner[1] if inner is not None else b""
    if len(deeper) <= len(indent) or not deeper.startswith(indent):
        return _wrapped_fold_at(source, brace, start, False, hits, skim, found)
    if _outdented(deeper, flush).search(source, brace + 1, close - len(indent) - 1):
        return 0
    return close if _closed_inside(source, brace, close, skim) else 0


def _closed_inside(source: bytes, brace: int, close: int, skim: Skim) -> bool:
    """Whether the inside of a block balances its braces, closes every
    block comment it opens and holds an even count of raw quotes."""
    inside = source[brace + 1 : close]
    return (
        inside.count(b"{") == inside.count(b"}")
        and inside.rfind(b"/*") <= inside.rfind(b"*/")
        and not inside.count(skim.raw_quote) % 2
    )


WRAPPED_HEAD_LINES = 16
"""How many lines up a wrapped head's first line is looked for."""


def _wrapped_fold_at(
    source: bytes, brace: int, start: int, lone: bool, hits: list[int], skim: Skim, found: _Found
) -> int:
    """The close brace of a block whose head is wrapped, if it may be
    folded, else 0: the `{` ends a continuation line indented deeper than
    the head's first line (`throws X {`, `int b) {`), or stands alone
    below the head where the skim has no `lone_brace` (Java's `{` under
    a wrapped signature).

    The close is the first line below that is indented less than the first
    line inside (blank and flush lines aside): it must be a `}` whose
    indent the inside's begins with. The head is the lines above up to the
    first one at the close's indent, every one between indented deeper;
    none may be blank or start like a comment, and the head and the
    inside spell no inner token and no `switch` or `select`. The inside
    balances (`_closed_inside`)."""
    flush = skim.flush
    inner = _first_indent(flush).match(source, brace + 2)
    if inner is None or not inner[1] or source[inner.end(1) : inner.end(1) + 1] in (b"}", b""):
        return 0  # an empty block, or none
    deeper = inner[1]
    out = found.outdented(deeper, inner.start(1))
    if out == -1:
        return 0
    line = out + 1
    edge = line
    while edge < len(source) and source[edge] in b" \t":
        edge += 1
    closing = source[line:edge]
    if edge == len(source) or source[edge] != 0x7D or not deeper.startswith(closing):
        return 0
    close = edge  # `}`, at an indent shorter than the inside's
    at = source.rfind(b"\n", 0, start - 1) + 1 if lone else start
    if lone and (start == 0 or not source.startswith(closing, start)):
        return 0  # a `{` alone must stand at least as deep as its close
    for _ in range(WRAPPED_HEAD_LINES):
        end = source.find(b"\n", at)
        text = source[at : brace if end == -1 or end > brace else end]
        words = text.lstrip(b" \t")
        depth = len(text) - len(words)
        if (
            not words.rstrip(b"\r")
            or words.startswith((b"*", b"/"))
            or b"switch" in words
            or b"select" in words
            or not text.startswith(closing)
            or depth < len(closing)
        ):
            return 0
        if depth == len(closing):
            break  # the head's first line
        if at == 0:
            return 0
        at = source.rfind(b"\n", 0, at - 1) + 1
    else:
        return 0
    first = bisect_left(hits, at)
    if first < len(hits) and hits[first] < close:
        return 0  # a token in the head or inside
    return close if _closed_inside(source, brace, close, skim) else 0


@cache
def _first_indent(flush: bytes) -> re.Pattern[bytes]:
    """The indent of the first line that is not blank (nor `flush`)."""
    skipped = rb"|" + flush + rb"[^\n]*" if flush else b""
    return re.compile(rb"(?:(?:[ \t]*\r?" + skipped + rb")\n)*([ \t]*)")


@cache
def _outdented(indent: bytes, flush: bytes) -> re.Pattern[bytes]:
    """A line start not indented at least `indent`, and not blank (nor
    `flush`)."""
    allowed = rb"|" + flush if flush else b""
    return re.compile(rb"\n(?!" + re.escape(indent) + rb"|[ \t]*\r?(?:\n|$)" + allowed + rb")")


def _included(source: bytes, folds: list[tuple[int, int]]) -> list[ts.Range]:
    """The parser's ranges: everything but the inside of each fold; their
    points counted in C where it was built (`native.fold_ranges`)."""
    if native.fold_ranges is not None:
        return [ts.Range(*args) for args in native.fold_ranges(source, folds)]
    return ranges_in_python(source, folds)


def ranges_in_python(source: bytes, folds: list[tuple[int, int]]) -> list[ts.Range]:
    """`_included`, its points counted here."""
    ranges: list[ts.Range] = []
    row, counted = 0, 0  # newlines before `counted`

    def point(offset: int) -> ts.Point:
        nonlocal row, counted
        row += source.count(b"\n", counted, offset)
        counted = offset
        return ts.Point(row, offset - source.rfind(b"\n", 0, offset) - 1)

    start, start_point = 0, ts.Point(0, 0)
    for brace, close in folds:
        if brace >= 0:  # -1: what is left out starts the file
            ranges.append(ts.Range(start_point, point(brace + 1), start, brace + 1))
        start, start_point = close, point(close)
    ranges.append(ts.Range(start_point, ts.Point(0xFFFFFFFF, 0xFFFFFFFF), start, 0xFFFFFFFF))
    return ranges


def _misfolded(
    tree: ts.Tree, folds: list[tuple[int, int]], skim: Skim
) -> list[tuple[int, int]] | None:
    """The folds that are not the inside of one of the skim's `blocks` in
    `tree`; None when the tree has a syntax error (the text fooled
    `find_folds`, or the file has one anyway). Where the skim keeps a tree
    `despite_errors`, the folds are wrong that lie, more than one, inside
    one node with a syntax error: there the parse without the bodies
    recovered unlike a whole one (a macro call read as a declaration
    running on over the next functions). One fold inside one (a function
    whose head holds a macro the grammar does not know) is kept."""
    root = tree.root_node
    errors: list[tuple[int, int]] = []
    if root.has_error:
        if not skim.despite_errors:
            return None
        errors = _error_spans(root, skim.outline)
    wrong: list[tuple[int, int]] = []
    inside: dict[int, list[tuple[int, int]]] = {}
    for brace, close in folds:
        token = root.descendant_for_byte_range(brace, brace + 1)
        opens = token.type if token is not None else ""
        block = token.parent if token is not None and opens in ("{", "(") else None
        if (
            block is None
            or block.end_byte != close + 1
            or (opens == "{" and block.type not in skim.blocks)
            or (opens == "(" and not _top_level_const(block, root))
        ):
            wrong.append((brace, close))
        elif errors:
            at = bisect_left(errors, (brace + 1,)) - 1
            if at >= 0 and errors[at][1] > close:
                inside.setdefault(at, []).append((brace, close))
    for group in inside.values():
        if len(group) > 1:
            wrong.extend(group)
    return wrong


def _top_level_const(block: ts.Node, root: ts.Node) -> bool:
    """Whether `block` is a `const (...)` declaration of the file itself
    (`consts.const_blocks`' folds)."""
    parent = block.parent
    return block.type == "const_declaration" and parent is not None and parent.id == root.id


def _error_spans(root: ts.Node, outline: frozenset[str]) -> list[tuple[int, int]]:
    """The sorted byte spans of the nodes with a syntax error below the
    outline (the file, its top-level conditionals)."""
    if root.is_error:
        return [(root.start_byte, root.end_byte)]
    spans: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        for child in stack.pop().children:
            if child.has_error:
                if child.type in outline:
                    stack.append(child)
                else:
                    spans.append((child.start_byte, child.end_byte))
    spans.sort()
    return spans


def parse(source: bytes, spec: LanguageSpec, hits: list[int]) -> tuple[ts.Tree, list[ConstBlock]]:
    """The file's tree, parsed without the inside of blocks that cannot hold
    a definition where the skim allows it (`Skim.blocks`), nor the inside
    of Go's plain `const` blocks (`Skim.const_blocks`); and those const
    blocks, whose definitions the tree does not hold.

    A folded tree is used only when the parse confirms every fold: it has no
    syntax error (unless the skim keeps it `despite_errors`), and each fold
    is the inside of a block of an allowed kind ending at the chosen brace
    (a const block's: a `const` declaration of the file itself).
    Folds it does not confirm are dropped and the parse is tried once more;
    then the whole file is parsed. Positions in
    a folded tree are the file's own, so extraction reads it as usual.
    Each parse has its budget (`parse_bounded`: raises TooBroken).
    """
    skim = spec.skim
    if skim is not None and skim.blocks:
        folds = find_folds(source, hits, skim)
        consts = const_blocks(source) if skim.const_blocks else []
        if consts:
            folds, consts = _with_consts(folds, consts)
        for _ in range(2):
            left_out = quiet_folds(source, spec, folds)
            if not left_out:
                break
            folding = parser(spec, folding=True)
            folding.included_ranges = _included(source, left_out)
            tree = parse_bounded(folding, source)
            wrong = _misfolded(tree, folds, skim)
            if wrong == []:
                return tree, consts
            if wrong is None:
                break
            refused = set(wrong)
            folds = [f for f in folds if f not in refused]
            consts = [c for c in consts if (c[0], c[1]) not in refused]
    return parse_bounded(parser(spec), source), []


def _with_consts(
    folds: list[tuple[int, int]], consts: list[ConstBlock]
) -> tuple[list[tuple[int, int]], list[ConstBlock]]:
    """The body folds and the const blocks' folds, in file order, and the
    const blocks kept: none inside a body fold (a `const (` line in a raw
    string there)."""
    kept = []
    for block in consts:
        at = bisect_left(folds, (block[0],)) - 1
        if at < 0 or folds[at][1] < block[0]:
            kept.append(block)
    merged = sorted([*folds, *((block[0], block[1]) for block in kept)])
    return merged, kept


def skimmed(source: bytes, spec: LanguageSpec) -> tuple[bytes, list[int], ts.Tree]:
    """`skimmed_with_consts` without the const blocks: for readers of trees
    that look for no constant (imports, bases)."""
    return skimmed_with_consts(source, spec)[:3]


def skimmed_with_consts(
    source: bytes, spec: LanguageSpec
) -> tuple[bytes, list[int], ts.Tree, list[ConstBlock]]:
    """The source as parsed, where its skim's inner tokens are spelled
    (`spelled_tokens`), its tree and the const blocks read beside it
    (`parse`): what every reader of definitions' trees starts from.

    Tree-sitter's lexers read a NUL byte as the end of the input, so what
    follows one would be lost; the source parsed has a space in its place,
    which keeps every offset."""
    if b"\0" in source:
        source = source.replace(b"\0", b" ")
    hits = inner_hits(source, spec)
    tree, consts = parse(source, spec, hits)
    return source, hits, tree, consts


def inner_hits(source: bytes, spec: LanguageSpec) -> list[int]:
    """`spelled_tokens` of the skim's inner tokens (none without a skim), in
    C where the scan was built and knows the skim's patterns
    (`native.SPELLED`)."""
    if spec.skim is None:
        return []
    number = native.SPELLED.get((spec.skim.inner, spec.skim.quiet))
    if number is not None and native.spelled is not None:
        return native.spelled(source, number)
    grammar = load_grammar(spec)
    return spelled_tokens(source, grammar.inner, grammar.quiet)
