"""Grammars and parsers: loading a language's tree-sitter grammar and its
definitions query, and one parser per thread and language.

Tree-sitter parsers are not shared between threads; a grammar and its
compiled query are, and are loaded once per process.
"""

from __future__ import annotations

import importlib
import re
import threading
from dataclasses import dataclass
from functools import cache

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


def node_text(node: ts.Node) -> str:
    """A name node's text, without quotes around it or a leading `:`."""
    raw = node.text or b""
    return raw.decode("utf-8", "replace").strip("\"'`").lstrip(":")
