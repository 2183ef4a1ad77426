"""What `nearsym publish` hands the writer (`nearsym.tools.publish`): the
files of an index that hold definitions, in path order, each file's
definitions built when it is read."""

from __future__ import annotations

from array import array
from pathlib import Path

from nearsym.core.model import Kind, Span, Symbol
from nearsym.index.store import FileDefs, SymbolIndex
from nearsym.tools.publish import definitions_by_file


def symbol(root: Path, path: str, name: str) -> Symbol:
    return Symbol(name, Kind.FUNCTION, "", str(root), path, Span(0, 0, 0, 1), "python")


def test_files_with_definitions_in_path_order(tmp_path: Path) -> None:
    index = SymbolIndex(str(tmp_path))
    index.replace_file(
        "b.py", [symbol(tmp_path, "b.py", "beta"), symbol(tmp_path, "b.py", "gamma")]
    )
    index.replace_file("a.py", [symbol(tmp_path, "a.py", "alpha")])
    index.replace_file("empty.py", FileDefs("python", (), (), b"", array("I")))
    files = definitions_by_file(index)
    assert len(files) == 2
    assert [(path, [s.name for s in symbols]) for path, symbols in files] == [
        ("a.py", ["alpha"]),
        ("b.py", ["beta", "gamma"]),
    ]
    assert files[1][0] == "b.py"
    assert [path for path, _ in files[0:1]] == ["a.py"]
    assert index.definition_count("b.py") == 2
    assert index.definition_count("missing.py") == 0
