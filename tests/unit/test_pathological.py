"""Files built to hurt the parser: recursion and memory stay bounded per
file, a file too broken to query is skipped with its reason, and the
definitions the grammar does give are kept."""

from __future__ import annotations

import threading

import pytest

from nearsym.extract.definitions import (
    MAX_CONTAINER_CHARS,
    TooBroken,
    extract_defs,
    extract_symbols,
)
from nearsym.extract.languages import language_named


def spec(name: str):  # type: ignore[no-untyped-def]
    found = language_named(name)
    assert found is not None
    return found


def bounded(task, seconds: float = 60):  # type: ignore[no-untyped-def]
    """Run `task` on a thread; its result, or a failure if it is still
    running after `seconds` (far beyond what any of these should take)."""
    result: list[object] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(task())
        except BaseException as error:  # handed to the test
            errors.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "still running"
    if errors:
        raise errors[0]
    return result[0]


def test_a_late_nul_byte_keeps_the_definitions_after_it() -> None:
    source = b"def before_nul():\n    pass\n" + b"x = 1\n" * 2000 + b"s = '\0'\n"
    source += b"def after_nul():\n    pass\n"
    names = {s.name for s in extract_symbols(source, spec("python"), "/ws", "n.py")}
    assert {"before_nul", "after_nul"} <= names


def test_twenty_thousand_nested_functions_keep_bounded_containers() -> None:
    depth = 20_000
    source = "".join(f"function f{i}() {{\n" for i in range(depth)) + "}\n" * depth
    source += "function after_nesting() {}\n"
    defs = bounded(lambda: extract_defs(source.encode(), spec("javascript")))
    assert len(defs) == depth + 1 and "after_nesting" in defs.names
    assert max(len(c) for c in defs.containers) <= MAX_CONTAINER_CHARS
    # The innermost parts are the ones kept.
    assert defs.containers[-2].endswith(f"f{depth - 3}.f{depth - 2}")


@pytest.mark.parametrize(
    "source",
    [
        "x = " + "[" * 100_000 + "\ndef after():\n    pass\n",
        "x = " + "(" * 100_000 + "\ndef after():\n    pass\n",
    ],
    ids=["brackets", "parentheses"],
)
def test_a_tree_too_broken_to_query_is_skipped_with_its_reason(source: str) -> None:
    with pytest.raises(TooBroken, match="syntax errors"):
        bounded(lambda: extract_defs(source.encode(), spec("python")))
    assert bounded(lambda: extract_symbols(source.encode(), spec("python"), "/ws", "b.py")) == []


def test_closed_deep_nesting_keeps_the_definitions_after_it() -> None:
    brackets = "x = " + "[" * 100_000 + "]" * 100_000 + "\ndef after_brackets():\n    pass\n"
    blocks = "def outer():\n" + "".join("    " * (i + 1) + "if x:\n" for i in range(1400))
    blocks += "    " * 1401 + "pass\n" + "def after_blocks():\n    pass\n"
    for source, name in ((brackets, "after_brackets"), (blocks, "after_blocks")):
        defs = bounded(lambda source=source: extract_defs(source.encode(), spec("python")))
        assert name in defs.names
