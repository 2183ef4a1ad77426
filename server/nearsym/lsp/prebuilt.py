"""lsprotocol's classes, and cattrs' functions for them, built from code
compiled once per installation.

`lsprotocol.types` defines about 570 attrs classes. attrs writes the
methods of each class (`__init__`, `__eq__`, `__repr__`, ...) as Python
source and compiles it when the class is made: compiling that source is
about 40% of the module's import, and the module is the largest single
cost of starting the server (measured with cProfile on a restarted server,
Go standard library open: 0.22 of 0.52 s; `python -X importtime` gives
the same share). The source attrs writes for a class depends only on the
class, so the code objects it compiles to are the same at every start;
`lsprotocol_types()` keeps them in a file beside the index caches
(`marshal`, keyed by the source text and the file name attrs gives it)
and hands attrs the stored code instead of compiling again.

What it relies on: attrs' private `_make._compile_and_eval(script, globs,
locs, filename)`, the one place attrs compiles. Where that function is
missing or has other parameters (another attrs), nothing is replaced and
the import runs as it always did. A stored entry is found only by the
exact source text and file name, so a stale or foreign entry is never
used in place of other code; the file is named by the interpreter's
bytecode magic, so code of another Python is never loaded. An unreadable
or damaged file is ignored and rewritten. The file sits in the user's
own cache folder, never in a workspace: opening a folder cannot put code
there.

cattrs does the same at run time: it writes a function to structure or
unstructure each class the first time it meets one, and compiles it.
`cattrs_code()` serves those from a second file, written when the server
exits with what the session compiled that the file did not hold.
"""

from __future__ import annotations
import __future__

import builtins
import hashlib
import importlib.util
import inspect
import logging
import marshal
import os
import tempfile
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)

Compiler = Callable[..., None]
PARAMETERS = ["script", "globs", "locs", "filename"]
"""`attr._make._compile_and_eval`'s parameters (attrs 26.1, and attrs 23.2 before it)."""


def lsprotocol_types(cache_dir: str) -> types.ModuleType:
    """`lsprotocol.types`, imported with attrs' compiled code read from
    (and, when new code was compiled, written to) a file in `cache_dir`."""
    import attr._make as make

    original = getattr(make, "_compile_and_eval", None)
    if original is None or list(inspect.signature(original).parameters) != PARAMETERS:
        log.debug("this attrs compiles elsewhere: no stored code")
        import lsprotocol.types

        return lsprotocol.types
    path = os.path.join(cache_dir, f"attrs-code-{importlib.util.MAGIC_NUMBER.hex()}.marshal")
    with _stored_code(make, original, path):
        import lsprotocol.types
    return lsprotocol.types


class _Store:
    """Code objects kept in a file (`marshal`), each keyed by the source
    text, file name and compiler flags it was compiled from."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.stored = _read(path)
        self.used: dict[bytes, types.CodeType] = {}
        self.compiled = 0
        """Sources compiled here, not found in the file."""

    def code(self, script: str, filename: str, flags: int) -> types.CodeType:
        """`script` compiled as its generator's module would (`flags`: its
        `__future__` features, nothing inherited from this one)."""
        text = f"{flags}\0{filename}\0{script}"
        key = hashlib.blake2b(text.encode(), digest_size=16).digest()
        code = self.stored.get(key)
        if code is None:
            code = compile(script, filename, "exec", flags=flags, dont_inherit=True)
            self.compiled += 1
        self.used[key] = code
        return code


@contextmanager
def _stored_code(make: types.ModuleType, original: Compiler, path: str) -> Iterator[None]:
    store = _Store(path)
    flags = _future_flags(make)

    def compile_and_eval(
        script: str,
        globs: dict[str, Any] | None,
        locs: Any = None,
        filename: str = "",
    ) -> None:
        eval(store.code(script, filename, flags), globs, locs)

    make._compile_and_eval = compile_and_eval  # type: ignore[attr-defined]
    try:
        yield
    finally:
        make._compile_and_eval = original  # type: ignore[attr-defined]
    if store.used and store.used.keys() != store.stored.keys():
        _write(path, store.used)  # new code, or another lsprotocol's entries


CATTRS_GENERATORS = ("cattrs.gen", "cattrs.gen.typeddicts")
"""The modules where cattrs compiles the functions it generates, each with
`eval(compile(script, filename, "exec"), globs)`."""


def cattrs_code(cache_dir: str) -> Callable[[], None]:
    """Let cattrs' generated (un)structuring functions come from code stored
    in a file in `cache_dir`; returns what writes the code compiled since to
    that file (at the server's exit).

    cattrs writes a function for each class the first time it structures
    or unstructures one, as Python source, and compiles it. An editor's
    `initialize` holds its client capabilities, 80-110 classes deep: with
    VS Code's, structuring them took 38 ms at a start, most of it compiling
    (Neovim 0.11's 30 ms, Emacs' 21 ms). The source of each function depends
    only on the class, so the code stored at one session serves the next.

    How: the name `compile` in the generator modules' globals, which Python
    looks up before the built-in one, compiles through the store; only
    `compile(str, filename, "exec")`, the one call they make, and anything
    else as the built-in would."""
    import importlib

    store = _Store(
        os.path.join(cache_dir, f"cattrs-code-{importlib.util.MAGIC_NUMBER.hex()}.marshal")
    )
    for name in CATTRS_GENERATORS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        _compile_through(module, store)

    def save() -> None:
        used = dict(store.used)  # a copy: the loop may generate meanwhile
        if used.keys() - store.stored.keys():
            merged = {**store.stored, **used}
            _write(store.path, merged)
            store.stored = merged

    return save


def _compile_through(module: types.ModuleType, store: _Store) -> None:
    flags = _future_flags(module)

    def compile(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            return builtins.compile(source, filename, mode, *args, **kwargs)
        if isinstance(source, str) and isinstance(filename, str) and mode == "exec":
            return store.code(source, filename, flags)
        # As the generator's own call would: its features, not this module's.
        return builtins.compile(source, filename, mode, flags=flags, dont_inherit=True)

    module.compile = compile  # type: ignore[attr-defined]


def _future_flags(module: types.ModuleType) -> int:
    """The compiler flags of the `from __future__` imports in `module`."""
    flags = 0
    for name in __future__.all_feature_names:
        feature: __future__._Feature = getattr(__future__, name)
        if module.__dict__.get(name) is feature:
            flags |= feature.compiler_flag
    return flags


def _read(path: str) -> dict[bytes, types.CodeType]:
    try:
        with open(path, "rb") as f:
            loaded = marshal.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, EOFError, ValueError, TypeError) as error:
        log.info("stored attrs code unreadable (%s): compiling", error)
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {
        k: v for k, v in loaded.items() if isinstance(k, bytes) and isinstance(v, types.CodeType)
    }


def _write(path: str, code: dict[bytes, types.CodeType]) -> None:
    """Atomically: a reader sees the old file or the new one."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".attrs-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                marshal.dump(code, f)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as error:
        log.info("cannot store attrs code in %s: %s", folder, error)
