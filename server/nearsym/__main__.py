"""`python -m nearsym` is the `nearsym` command (and its console script's
entry point, `nearsym.__main__:main`)."""

# Start-up allocates many objects (lsprotocol's 570 classes, numpy) and
# frees few: the cyclic collector's passes over them are wasted. It is
# paused until the command has what it imports (`cli.main` resumes it):
# 0.1 s of CPU of a server's start, measured on this machine (8 starts
# each way, alternated, 570 against 461 ms to the server's imports).
import gc
import os

gc.disable()

# numpy's OpenBLAS starts a thread per core when numpy is imported; nearsym
# does no linear algebra. One thread: numpy imports in about 65 ms of CPU
# instead of 105 (and 95 ms of wall time instead of 150-230), here, 5
# alternated imports each way. Workers and helpers inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Before anything else is imported: `-m` put the current folder (usually the
# workspace) first on sys.path, and a `json.py` there must never be imported.
from nearsym.workspace.children import isolate  # noqa: E402

isolate()

from nearsym.tools.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
