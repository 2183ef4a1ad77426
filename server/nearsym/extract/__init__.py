"""Extraction: source bytes to definitions, with tree-sitter.

Owns the language registry and its `.scm` definitions queries
(`languages`), the grammars and parsers (`grammar`), the parse with its
folds and skim (`folds`), the definitions (`definitions`), and the import
statements a file makes (`imports`).

May import: `nearsym.core`. The only layer that imports tree-sitter.
"""
