"""The index: definitions in memory, candidate retrieval, the on-disk cache.

Owns segments (immutable columnar blocks of definitions) and the
`SymbolIndex` that layers them, candidate retrieval by match tier
(`retrieval`, on a segment's few entries a query's owners or places allow:
`subset`), the
`Namespace` (one workspace folder and its index, `namespace`), the single
query path over namespaces (`search`), where-queries and modifiers
(`where`), mention counts (`mentions`), the one reader of workspace files
(`files`), the SQLite warm-start cache and the allocator tuning around
large builds.

May import: `nearsym.core`, `nearsym.extract` (the language registry, for
the cache's key).
"""
