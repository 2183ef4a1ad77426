"""Parsing one large text in a helper process.

tree-sitter holds the interpreter lock for the whole of a parse (a 10 MB
buffer: seconds in one stretch), so a large open buffer is parsed in a
process of its own, started for that parse: `python -I -c ...` (see
`children.python_module_command`) reads the language name and the text on
stdin and writes the `FileDefs` blob on stdout. A process per parse, not a
pool: nothing stays resident between edits, and killing it (a newer text
came, or the server exits) loses nothing.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading

from nearsym.core.filedefs import FileDefs
from nearsym.workspace.children import python_module_command

log = logging.getLogger(__name__)


class ParseHelper:
    """Runs parses in helper processes, one at a time per caller thread."""

    def __init__(self) -> None:
        self._running: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self.stopped = False

    def parse(self, text: bytes, language: str) -> FileDefs:
        """The definitions of `text`; raises OSError or ValueError when the
        helper fails (or was killed)."""
        command = python_module_command("nearsym.workspace.parsehelper", language)
        with self._lock:
            if self.stopped:
                raise OSError("stopped")
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd="/",
            )  # fmt: skip
            self._running.add(process)
        try:
            blob, err = process.communicate(text)
        finally:
            with self._lock:
                self._running.discard(process)
        if process.returncode != 0:
            raise OSError(f"parse helper exited {process.returncode}: {err.decode()[-300:]}")
        return FileDefs.decode(blob)

    def kill(self) -> None:
        """Kill every helper now (exit); later parses fail."""
        with self._lock:
            self.stopped = True
            running = list(self._running)
        for process in running:
            process.kill()


def helper_main(argv: list[str]) -> int:
    """The helper process: `argv[0]` names the language; text on stdin."""
    from nearsym.extract.definitions import extract_defs
    from nearsym.extract.grammar import TooBroken
    from nearsym.extract.languages import language_named

    spec = language_named(argv[0]) if argv else None
    if spec is None:
        print(f"unknown language {argv[:1]}", file=sys.stderr)
        return 2
    try:
        blob = extract_defs(sys.stdin.buffer.read(), spec).encode()
    except TooBroken as why:
        print(why, file=sys.stderr)
        return 3
    sys.stdout.buffer.write(blob)
    sys.stdout.buffer.flush()
    return 0
