"""Go's top-level `const (...)` blocks of plain specs, read by a byte scan.

Go's library has 315,000 definitions, and 167,000 of them are constants of
its generated system tables (`zerrors_*.go`, `ztypes_*.go`): long blocks of
`NAME = value` lines, which took a third of the library's extraction to
parse, query and turn into definitions one Python object at a time. A
block whose every line is plain is read here instead, and the parse leaves
its inside out as it leaves out a function's body (`folds.parse`, which
also checks that the parse sees it as a top-level `const` declaration).

A line is plain when it is blank, a `//` comment, or a spec: names, then
optionally a type (a name, or `pkg.Name`) and `=` with values built of
numbers, names, `pkg.Name`, a call of one of those on a number or a name
(`syscall.Errno(0x7)`), one level of parentheses and the arithmetic and
bit operators; then optionally a `//` comment. Such a line is valid Go
that tree-sitter reads as one `const_spec`, whose names are its
`identifier` children, as the definitions query takes them. A block with
anything else (a string, a block comment, a bracket, a line continued on
the next, a keyword or `iota` as a name, a byte that is not ASCII) is left
to the parse whole; so is every block of a file that spells a deprecation
mark (the parse reads those: `deprecation.marks_deprecation`).

Once `_PLAIN` has taken a block, its names and their spans are read in C
where nearsym's extension was built (`native.const_names`, beside
`names_in_python`), and a block's names join the file's columns at once
(`definitions._add_constants`): one Python step per name cost Go's library
0.5 of a worker's 3.7 CPU seconds; the least of six alternated runs went
from 3.73 to 3.45 s, with the same blobs.
"""

from __future__ import annotations

import re
from array import array

from nearsym.extract import native

ConstBlock = tuple[int, int, list[str], "array[int]"]
"""A block's `(` and `)` offsets, its names in order, and their spans: a
(row, column, row, end column) each, in bytes (their lines are ASCII, so
these are UTF-16 columns too). No definition of the tree lies between a
block's first and last name: its inside is not parsed."""

_ID = rb"[A-Za-z_][A-Za-z0-9_]*"
_NUMBER = (
    rb"(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+"
    rb"|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?)"
)
_ATOM = (
    rb"(?:" + _NUMBER + rb"|" + _ID + rb"(?:\." + _ID + rb")?"
    rb"(?:\([ \t]*-?(?:" + _NUMBER + rb"|" + _ID + rb")[ \t]*\))?)"
)
_OPERATOR = rb"(?:<<|>>|&\^|[-+*/%&|^])"
_INNER = rb"[-^]?" + _ATOM + rb"(?:[ \t]*" + _OPERATOR + rb"[ \t]*[-^]?" + _ATOM + rb")*+"
_UNIT = rb"(?>[-^]?(?:\([ \t]*" + _INNER + rb"[ \t]*\)|" + _ATOM + rb"))"
_EXPRESSION = _UNIT + rb"(?:[ \t]*" + _OPERATOR + rb"[ \t]*" + _UNIT + rb")*+"
"""Units (a number, a name, `pkg.Name`, a call of one on a number or a
name, or such a run of them in parentheses) joined by operators. Each part
is taken whole (atomic): a line that fails is not tried again split
otherwise, which on a long run of `1 + ` ending in `+` grew with 2 to the
power of its length."""
_NAMES = _ID + rb"(?:[ \t]*,[ \t]*" + _ID + rb")*+"
_SPEC = (
    _NAMES + rb"(?:(?:[ \t]+" + _ID + rb"(?:\." + _ID + rb")?)?[ \t]*=[ \t]*"
    + _EXPRESSION + rb"(?:[ \t]*,[ \t]*" + _EXPRESSION + rb")*+)?"
)  # fmt: skip
_LINE = rb"[ \t]*(?>" + _SPEC + rb")?[ \t]*(?://[^\n]*)?"
_PLAIN = re.compile(rb"(?>" + _LINE + rb"\n)*+")
"""Every line of a block's inside; atomic, so that a line that fails is not
retried by splitting the lines before it otherwise."""
_SPEC_NAMES = re.compile(rb"(?m)^[ \t]*(" + _NAMES + rb")")
_NAME = re.compile(_ID)

NOT_NAMES = frozenset(
    b"break case chan const continue default defer else fallthrough for func go goto if "
    b"import interface map package range return select struct switch type var "
    b"true false nil iota".split()
)
"""Keywords, and the names tree-sitter-go reads as literals of their own."""

HEAD = b"\nconst (\n"


def const_blocks(source: bytes) -> list[ConstBlock]:
    """The top-level-looking `const (` blocks of `source` whose every line
    is plain, in file order: a `const (` line at the first column and the
    first `)` line at the first column after it."""
    if b"eprecat" in source or b"bsolete" in source:
        return []
    blocks: list[ConstBlock] = []
    row, counted = 0, 0  # newlines before `counted`
    head = 0 if source.startswith(HEAD[1:]) else _next_head(source, 0)
    while head != -1:
        paren = head + 6
        close = source.find(b"\n)", paren)  # the `\n` before the `)` line
        while close != -1 and close + 2 < len(source) and source[close + 2] != 0x0A:
            close = source.find(b"\n)", close + 2)
        if close == -1:
            break
        inside = paren + 2
        row += source.count(b"\n", counted, inside)
        counted = inside
        found = _plain_names(source[inside : close + 1], row)
        if found is not None and found[0]:
            blocks.append((paren, close + 1, *found))
        head = _next_head(source, close)
    return blocks


def _next_head(source: bytes, start: int) -> int:
    """Where the next `const (` line from `start` begins, or -1."""
    at = source.find(HEAD, start)
    return -1 if at == -1 else at + 1


def _plain_names(body: bytes, row: int) -> tuple[list[str], array[int]] | None:
    """The names of a block's inside `body` (its first line on `row`) and
    their spans, when every line of it is plain (`names_in_python`; in C
    where nearsym's extension was built: `native.const_names`)."""
    if not body.isascii() or b"/*" in body or b"\r" in body or not _PLAIN.fullmatch(body):
        return None
    if native.const_names is None:
        return names_in_python(body, row)
    found = native.const_names(body, row)
    if found is None:
        return None
    spans = array("I")
    spans.frombytes(found[1])
    return found[0], spans


def names_in_python(body: bytes, row: int) -> tuple[list[str], array[int]] | None:
    """`_plain_names` of a body `_PLAIN` takes. Each line is blank, a
    comment or a spec, the specs' names in the order `_SPEC_NAMES` finds
    them; none of them may be a keyword (`NOT_NAMES`)."""
    found = iter(_SPEC_NAMES.findall(body))
    names: list[str] = []
    spans = array("I")
    for line in body.split(b"\n")[:-1]:  # the inside ends with its last line's `\n`
        spec = line.lstrip(b" \t")
        if spec and not spec.startswith(b"//"):
            column = len(line) - len(spec)
            listed = next(found)
            for name in _NAME.finditer(listed) if b"," in listed else (None,):
                text = listed if name is None else name.group()
                if text in NOT_NAMES:
                    return None
                start = column + (0 if name is None else name.start())
                names.append(text.decode())
                spans.extend((row, start, row, start + len(text)))
        row += 1
    return names, spans
