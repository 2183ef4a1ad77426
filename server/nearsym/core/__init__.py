"""The core: plain values and pure functions, no I/O.

Owns the model (`Symbol`, `Kind`, `Span`), one file's definitions as
columns (`FileDefs`), the name matcher, directory distance, and the rank
rules (`fetch_limit`, `pool_width`, rerank, rerank_groups, explain).

May import: the standard library and numpy. Never pygls, lsprotocol,
tree-sitter, sqlite3 or multiprocessing, and it reads no files
(`tests/unit/test_layers.py` walks the import graph to check).
"""
