"""`python -m nearsym` is the `nearsym` command."""

# Before anything else is imported: `-m` put the current folder (usually the
# workspace) first on sys.path, and a `json.py` there must never be imported.
from nearsym.workspace.children import isolate

isolate()

from nearsym.tools.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
