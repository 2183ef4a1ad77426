"""How nearsym starts its helper processes: never importing from the workspace.

A Python process puts a folder at the front of `sys.path` as it starts: the
current folder for `-c` and `-m`, the script's folder otherwise. The server's
current folder is usually the workspace (editors start it there), so a
repository holding `json.py`, `threading.py` or `select.py` would have that
file imported, and run, by any helper that takes the current folder: the
multiprocessing forkserver and resource tracker (started with `-c`), the
file watcher, and the server itself under `python -m nearsym`.

Invariant: no nearsym process has its current folder, or an empty entry, on
`sys.path`. `isolate()` is called once as the command line starts; it drops
such entries from this process's path (a forkserver is handed the parent's
path) and sets `PYTHONSAFEPATH` (Python 3.11+), which every child inherits,
so none adds its own. The watcher is started isolated (`-I`: no environment
variables, no user site, no unsafe path) with the package's own folder put
on its path explicitly, from the filesystem root.
"""

from __future__ import annotations

import os
import sys

import nearsym

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(nearsym.__file__)))
"""The folder the `nearsym` package was imported from (a checkout's
`server/`, or site-packages)."""


def isolate() -> None:
    """Keep this process and its future children from importing modules
    that sit in the current folder (the workspace)."""
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        here = os.getcwd()
    except OSError:  # the current folder was deleted
        here = None
    sys.path[:] = [p for p in sys.path if p and (here is None or _real(p) != _real(here))]


def python_module_command(module: str, *args: str) -> list[str]:
    """The command line that runs `module.helper_main(argv)` in an isolated
    interpreter that can import this package and nothing from the current
    folder, PYTHONPATH or the user's site-packages."""
    code = (
        "import sys; "
        f"sys.path.insert(0, {PACKAGE_PARENT!r}); "
        f"from {module} import helper_main; "
        "sys.exit(helper_main(sys.argv[1:]))"
    )
    return [sys.executable, "-I", "-c", code, *args]


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))
