"""The core: plain values and pure functions, no I/O.

Owns the model (`Symbol`, `Kind`, `Span`), one file's definitions as
columns (`FileDefs`), the query parsed once (`query.Query`), the words of
an identifier (`words`: separators, word starts, query words), the name
matcher (`align`: the one alignment of a query in many names; `match`: the
name score built on it), directory distance, and the rank rules
(`fetch_limit`, `pool_width`, rerank_groups, explain) and the names of
its sort keys (`sortkey`).

May import: the standard library and numpy. Never pygls, lsprotocol,
tree-sitter, sqlite3 or multiprocessing, and it reads no files
(`tests/unit/test_layers.py` walks the import graph to check).
"""
