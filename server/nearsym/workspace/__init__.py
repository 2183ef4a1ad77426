"""The workspace: which files there are, and keeping the index in step.

Owns settings and their validation, discovery (ignore rules, links, size
and binary checks), cold indexing (neighbourhood first, a process pool),
the live workspace (buffers, disk events, folders), the open file's imports,
our own file watcher and how helper processes are started.

May import: `nearsym.core`, `nearsym.extract`, `nearsym.index`.
Invariant: this package's `__init__` imports nothing (`python -m nearsym`
imports `workspace.children` before any other module).
"""
