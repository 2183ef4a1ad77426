"""Extraction: source bytes to definitions, with tree-sitter.

Owns the language registry and its `.scm` definitions queries, the parse
(with its folds and skim), and the import statements a file makes.

May import: `nearsym.core`. The only layer that imports tree-sitter.
"""
