"""nearsym: a workspace/symbol language server ranked by name, then by closeness."""

__version__ = "0.1.0"
