"""The protocol: the pygls server and lsprotocol conversions.

Owns the handlers (named after the LSP methods), focus inference,
indexing with work-done progress, and settings from the client.

May import: every layer below (`core`, `extract`, `index`, `workspace`).
The only layer that imports pygls and lsprotocol.
"""
