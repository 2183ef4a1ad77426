"""Java's comments on lines of their own, left out of the parse as the
folds are (`folds.parse`, where `Skim.quiet_lines`): the JDK's licences
and Javadoc were half the text its folded parse still read. See the
design note in `folds`, and the figures in `docs/performance.md`."""

from __future__ import annotations

import re

from nearsym.extract import native
from nearsym.extract.grammar import load_grammar
from nearsym.extract.languages import LanguageSpec


def quiet_folds(
    source: bytes, spec: LanguageSpec, folds: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """`folds` and the runs of whole-line comments outside them, which the
    parse leaves out too where the skim says so (`Skim.quiet_lines`):
    `quiet_folds_in_python`, in C where it was built and knows the skim's
    `quiet`."""
    skim = spec.skim
    if skim is None or not skim.quiet_lines:
        return folds
    number = native.QUIET.get(skim.quiet)
    if number is not None and native.quiet_folds is not None:
        return native.quiet_folds(source, number, folds)
    quiet = load_grammar(spec).quiet
    return folds if quiet is None else quiet_folds_in_python(source, quiet, folds)


_MARKER = re.compile(rb"(?i)deprecat|obsolete")


def quiet_folds_in_python(
    source: bytes, quiet: re.Pattern[bytes], folds: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """`folds` (sorted, apart) with each run of whole-line comments outside
    them added as the fold (run start - 1, run end), in order. A comment
    is whole-line when only spaces and tabs stand before it on its first
    line and after it on its last (a carriage return before the newline),
    and a line comment does not end in a backslash (C's continue on the
    next line); a run is such comments with only blanks between them. The
    comments and literals are `quiet`'s, found left to right, and none
    from inside a fold: the scan goes on from its close. A run that spells
    `deprecat` or `obsolete` in any case stays in the parse: the marks
    above a definition are read from the comments in its tree
    (`deprecation.is_deprecated`)."""
    out: list[tuple[int, int]] = []
    run: list[int] = []  # [start, end] of the open run
    n, i, next_fold = len(source), 0, 0

    def flush() -> None:
        if run and not _MARKER.search(source, run[0], run[1]):
            out.append((run[0] - 1, run[1]))
        run.clear()

    while i < n:
        while next_fold < len(folds) and folds[next_fold][1] <= i:
            flush()
            out.append(folds[next_fold])
            next_fold += 1
        brace = folds[next_fold][0] if next_fold < len(folds) else n
        if i > brace:  # inside a fold: on from its close
            flush()
            i = folds[next_fold][1]
            continue
        found = quiet.search(source, i)
        if found is None or found.start() > brace:
            i = brace + 1
            continue
        start, end = found.span()
        if source[start] == 0x2F and end <= brace and _whole_lines(source, start, end):
            if run and not source[run[1] : start].strip(b" \t\r\n"):
                run[1] = end
            else:
                flush()
                run[:] = [start, end]
        else:
            flush()
        i = end
    flush()
    out.extend(folds[next_fold:])
    return out


def _whole_lines(source: bytes, start: int, end: int) -> bool:
    """See `quiet_folds_in_python`."""
    before = source.rfind(b"\n", 0, start) + 1
    if source[before:start].strip(b" \t"):
        return False
    if source[start + 1] == 0x2F and source[start:end].rstrip(b"\r").endswith(b"\\"):
        return False
    after = source.find(b"\n", end)
    return not source[end : after if after != -1 else len(source)].strip(b" \t\r")
