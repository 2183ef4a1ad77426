"""Extraction: source bytes to definitions, with tree-sitter.

Owns the language registry and its `.scm` definitions queries
(`languages`), the grammars and parsers (`grammar`), the parse with its
folds and skim (`folds`), the definitions (`definitions`), the import
statements a file makes (`imports`), the base types its classes name
(`bases`), the identifiers it mentions (`mentions`) and deprecation marks
(`deprecation`).

May import: `nearsym.core`. The only layer that imports tree-sitter.
"""
