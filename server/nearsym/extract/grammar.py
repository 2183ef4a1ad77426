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

from nearsym.extract.languages import LanguageSpec


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
