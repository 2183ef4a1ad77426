"""Files built to hurt the parser: recursion and memory stay bounded per
file, a file too broken to query is skipped with its reason, and the
definitions the grammar does give are kept."""

from __future__ import annotations

import threading

import pytest

from nearsym.extract.definitions import (
    MAX_CONTAINER_CHARS,
    extract_defs,
    extract_symbols,
)
from nearsym.extract.grammar import TooBroken
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


MADE_UP_LUA = b"[" * 40_000
"""Tree-sitter's error recovery on this grows with the square of its
length: 6.6 s of parse here, about an hour for a megabyte."""


def test_a_parse_past_its_budget_is_given_up_and_the_parser_parses_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nearsym.extract import grammar

    monkeypatch.setattr(grammar, "PARSE_CPU_SECONDS", 0.2)
    lua = spec("lua")
    with pytest.raises(TooBroken, match=r"gave up after 0\.3 s of CPU on 40,000 bytes"):
        bounded(lambda: extract_defs(MADE_UP_LUA, lua))
    assert extract_symbols(MADE_UP_LUA, lua, "/ws", "made_up.lua") == []
    # The same thread's parser, given up twice, reads the next file whole.
    defs = extract_defs(b"local function after() end\nfunction M.kept() end\n", lua)
    assert list(defs.names) == ["after", "kept"]


def test_other_threads_run_while_a_long_parse_holds_the_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tree-sitter holds the interpreter lock for a whole parse, but its
    progress calls back into Python, where other threads get their turn: a
    thread that counts while the parse runs counts many times (with the
    parse read from bytes at once, it counted 0 or 1)."""
    from nearsym.extract import grammar

    monkeypatch.setattr(grammar, "PARSE_CPU_SECONDS", 0.5)
    parsing = threading.Event()
    done = threading.Event()
    turns = 0

    def count() -> None:
        nonlocal turns
        while not done.is_set():
            if parsing.is_set():
                turns += 1
            done.wait(0.001)

    counter = threading.Thread(target=count, daemon=True)
    counter.start()
    parsing.set()
    with pytest.raises(TooBroken):
        grammar.parse_bounded(grammar.parser(spec("lua")), MADE_UP_LUA)
    parsing.clear()
    done.set()
    counter.join()
    assert turns >= 20


def test_a_worker_skips_a_file_whose_parse_was_given_up_and_reads_the_rest(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from nearsym.extract import grammar
    from nearsym.workspace.pool import OK, SKIPPED, parse_many

    monkeypatch.setattr(grammar, "PARSE_CPU_SECONDS", 0.2)
    (tmp_path / "made_up.lua").write_bytes(MADE_UP_LUA)
    (tmp_path / "real.lua").write_bytes(b"function real() end\n")
    jobs = [(str(tmp_path / n), n, "lua") for n in ("made_up.lua", "real.lua")]
    made_up, real = parse_many(jobs, 1 << 20)
    assert made_up[:2] == ("made_up.lua", SKIPPED)
    assert b"tree-sitter's parse gave up" in made_up[4]
    assert real[:2] == ("real.lua", OK)


def test_the_queries_own_text_predicates_read_the_source() -> None:
    """The text predicates tree-sitter would read from `Node.text`, which
    a tree parsed within a budget does not hold (`grammar.text_predicate`)."""
    ruby = b"class A\n  attr_reader :kept\n  private :not_a_property\nend\n"
    assert "kept" in extract_defs(ruby, spec("ruby")).names
    assert "not_a_property" not in extract_defs(ruby, spec("ruby")).names
    elixir = b"defmodule Shop do\n  def add(x), do: x\n  import Other\nend\n"
    assert list(extract_defs(elixir, spec("elixir")).names) == ["Shop", "add"]
    julia = b"f(x) = x + 1\nf(2) == 3\n"
    assert list(extract_defs(julia, spec("julia")).names) == ["f"]


def test_every_parse_is_bounded_and_no_reader_asks_a_node_for_its_text() -> None:
    """Only `grammar.parse_bounded` calls a parser's `parse`, and `Node.text`
    on a tree parsed from a callback crashes py-tree-sitter 0.26.1: readers
    slice the source (`node_text`). Only `extract` imports tree-sitter
    (`test_layers`)."""
    import ast
    import pathlib

    import nearsym.extract

    package = pathlib.Path(nearsym.extract.__file__).parent
    found = [
        f"{path.name}:{node.lineno}:{node.attr}"
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute)
        and (node.attr == "text" or (node.attr == "parse" and path.name != "grammar.py"))
    ]
    assert found == []


def test_a_parse_keeps_no_reference_to_its_source() -> None:
    """py-tree-sitter keeps what the read callback returns: a parse that
    handed it the source (or a view of it) kept every source parsed alive
    (33 MB after 300 parses of a 114 KB file, in the server on each edit)."""
    import sys

    from nearsym.extract import grammar

    source = b"package p\n\nfunc F() {}\n" * 2000
    before = sys.getrefcount(source)
    for _ in range(5):
        grammar.parse_bounded(grammar.parser(spec("go")), source)
        grammar.parse_bounded(grammar.parser(spec("go"), folding=True), source)
    assert sys.getrefcount(source) == before
