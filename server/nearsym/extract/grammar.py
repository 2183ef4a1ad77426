"""Grammars and parsers: loading a language's tree-sitter grammar and its
definitions query, one parser per thread and language, and the parse
itself, within a budget (`parse_bounded`).

Tree-sitter parsers are not shared between threads; a grammar and its
compiled query are, and are loaded once per process.
"""

from __future__ import annotations

import importlib
import re
import threading
import time
from dataclasses import dataclass
from functools import cache
from typing import Literal

import tree_sitter as ts

from nearsym.core.model import Kind
from nearsym.extract.languages import CAPTURE_KINDS, LanguageSpec


@dataclass(frozen=True, slots=True)
class Grammar:
    """A loaded grammar and its compiled definitions query."""

    language: ts.Language
    query: ts.Query
    inner: tuple[tuple[bytes, re.Pattern[bytes]], ...] = ()
    """`Skim.inner`, compiled."""
    quiet: re.Pattern[bytes] | None = None
    """`Skim.quiet`, compiled (None without one)."""
    definitions: tuple[tuple[str, Kind] | None, ...] = ()
    """Per pattern of the query, its `@definition.<kind>` capture and kind
    (None where it has none, or its kind is not one of `CAPTURE_KINDS`): a
    pattern captures one kind, however many alternatives it has."""
    holders: frozenset[int] = frozenset()
    """The patterns that capture a `@container` (an `impl` block) rather
    than a definition."""


@cache
def load_grammar(spec: LanguageSpec) -> Grammar:
    """Load a language's grammar from its wheel and compile its query.

    Raises ImportError when the grammar wheel is missing, and
    tree_sitter.QueryError when a query does not fit the grammar.
    """
    module = importlib.import_module(spec.grammar_module)
    language = ts.Language(getattr(module, spec.grammar_function)())
    inner = tuple((w, re.compile(p)) for w, p in spec.skim.inner) if spec.skim else ()
    quiet = re.compile(spec.skim.quiet) if spec.skim and spec.skim.quiet else None
    source = spec.query_source()
    query = ts.Query(language, source)
    encoded = source.encode("utf-8")
    definitions: list[tuple[str, Kind] | None] = []
    holders: set[int] = set()
    for pattern in range(query.pattern_count):
        text = encoded[query.start_byte_for_pattern(pattern) : query.end_byte_for_pattern(pattern)]
        found = _DEFINITION_CAPTURE.search(text)
        kind = CAPTURE_KINDS.get(found[1].decode()) if found else None
        definitions.append((f"definition.{found[1].decode()}", kind) if found and kind else None)
        if b"@container.name" in text:
            holders.add(pattern)
    return Grammar(language, query, inner, quiet, tuple(definitions), frozenset(holders))


_DEFINITION_CAPTURE = re.compile(rb"@definition\.(\w+)")


_parsers = threading.local()


def parser(spec: LanguageSpec, *, folding: bool = False) -> ts.Parser:
    """A parser per thread and language: tree-sitter parsers are not shared.
    The `folding` one has its included ranges set by each parse
    (`folds.parse`); the other always reads whole files."""
    cache_: dict[tuple[str, bool], ts.Parser] | None = getattr(_parsers, "by_language", None)
    if cache_ is None:
        cache_ = {}
        _parsers.by_language = cache_
    found = cache_.get((spec.name, folding))
    if found is None:
        found = ts.Parser(load_grammar(spec).language)
        cache_[(spec.name, folding)] = found
    return found


class TooBroken(ValueError):
    """A file whose text cannot be parsed or queried in bounded time."""


PARSE_CPU_SECONDS = 2.0
PARSE_CPU_SECONDS_PER_MB = 2.0
"""A parse's budget of its thread's CPU time: this, plus so much per
megabyte. Real sources parse at 0.02 to 0.7 s per megabyte (the slowest
of the kernel, the JDK, Go, CPython and TypeScript's own: 0.63 s/MB, in
perf's x86 instruction tables); tree-sitter's error recovery on some
made-up texts grows with the square of their length (40 KB of Lua `[`:
6.6 s, a megabyte: about an hour)."""


CLOCK_SECONDS = 0.01
"""How often a parse reads its CPU clock. Tree-sitter calls back each 100
steps of its parser: every 17 us on Go's library, but on some made-up
texts only every 400 ms (a step that lexes to the end of the file)."""


class Budget:
    """The CPU time of its thread that a parse of `size` bytes may spend
    (`PARSE_CPU_SECONDS`): `over` is tree-sitter's progress callback, true
    once it is spent (the parse then ends). Each call back runs
    Python, where other threads can take the interpreter lock: a long parse
    on a server's thread does not hold up its event loop.

    A query is not given one: py-tree-sitter 0.26.1 hands tree-sitter a
    pointer to query options that live in a block already left
    (`query_cursor.c`), and a query long enough to call back jumps to
    garbage (a crash on a Python file of 189 lines)."""

    __slots__ = ("glance", "limit", "seconds", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.seconds = PARSE_CPU_SECONDS + PARSE_CPU_SECONDS_PER_MB * size / 1e6
        self.limit = time.thread_time() + self.seconds
        self.glance = time.monotonic() + CLOCK_SECONDS

    def over(self, *_progress: object) -> bool:
        now = time.monotonic()  # 40 ns; the thread's CPU clock, 200 ns
        if now < self.glance:
            return False
        self.glance = now + CLOCK_SECONDS
        return time.thread_time() > self.limit

    def given_up(self) -> TooBroken:
        return TooBroken(
            f"tree-sitter's parse gave up after {self.seconds:.1f} s of CPU on "
            f"{self.size:,} bytes: it does not end in useful time on this text"
        )


def parse_bounded(parser: ts.Parser, source: bytes) -> ts.Tree:
    """`parser`'s tree of `source`; raises TooBroken when the parse spends
    its `Budget`.

    The parse reads `source` through a callback, which is what lets
    py-tree-sitter call back on the parse's progress. Such a tree holds no
    source of its own: read a node's text from `source` (`node_text`).
    `Node.text` on it, and the built-in text predicates of queries
    (`#eq?`), crash py-tree-sitter 0.26.1, so the queries spell their own
    (`text_predicate`).
    """
    budget = Budget(len(source))
    buffer = _buffer()
    buffer[:] = source
    seeks: list[memoryview] = []

    def read(offset: int, _point: ts.Point) -> bytearray | bytes | memoryview:
        if offset == 0:
            return buffer
        if offset >= len(source) - 1:  # the lexer's look back at the end
            return source[offset : offset + 1]  # b"" or a one-byte object Python keeps
        seek = memoryview(buffer)[offset:]  # a seek back: rare
        seeks.append(seek)
        return seek

    try:
        return parser.parse(read, progress_callback=budget.over)
    except ValueError:  # the parse was given up
        parser.reset()
        raise budget.given_up() from None
    finally:
        for seek in seeks:
            seek.release()
        buffer.clear()


_buffers = threading.local()


def _buffer() -> bytearray:
    """The thread's buffer that parses read their source from.

    py-tree-sitter 0.26.1 keeps two references to each object the read
    callback returns, forever. Returned as they came (the source, or a view
    of it), every parse kept its source alive: 33 MB after 300 parses of a
    114 KB file. So the callback returns this one buffer, which holds a
    copy of the source only during its parse; the end's one-byte reads get
    objects Python keeps anyway, and only a seek back elsewhere leaves a
    view's 184 bytes behind."""
    found: bytearray | None = getattr(_buffers, "buffer", None)
    if found is None:
        found = _buffers.buffer = bytearray()
    return found


def node_bytes(source: bytes, node: ts.Node) -> bytes:
    """A node's text in `source`, the text its tree was parsed from."""
    return source[node.start_byte : node.end_byte]


def node_text(source: bytes, node: ts.Node) -> str:
    """A name node's text, without quotes around it or a leading `:`."""
    return node_bytes(source, node).decode("utf-8", "replace").strip("\"'`").lstrip(":")


def text_predicate(source: bytes) -> ts.QueryPredicate:
    """The queries' text predicates, read from `source`: `#text-eq?`,
    `#text-any-of?` and `#text-match?` (a regular expression searched),
    each of a capture and strings, and true when every node captured
    passes. tree-sitter's own (`#eq?`) read `Node.text`, which a tree
    parsed within a budget does not hold (`parse_bounded`)."""

    def holds(
        predicate: str,
        args: list[tuple[str, Literal["capture", "string"]]],
        pattern_index: int,
        captures: dict[str, list[ts.Node]],
    ) -> bool:
        nodes = captures.get(args[0][0], []) if args else []
        values = [value for value, _ in args[1:]]
        texts = [node_bytes(source, node).decode("utf-8", "replace") for node in nodes]
        if predicate == "text-eq?":
            return all(text == values[0] for text in texts)
        if predicate == "text-any-of?":
            return all(text in values for text in texts)
        if predicate == "text-match?":
            return all(_regex(values[0]).search(text) for text in texts)
        raise ValueError(f"unknown query predicate #{predicate} (pattern {pattern_index})")

    return holds


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)
