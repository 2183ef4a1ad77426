"""Deprecated definitions, as each language marks them: exactly the marked
ones carry the flag, and nothing in a body, a note string or a name does."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from nearsym.core.filedefs import FileDefs
from nearsym.extract.definitions import extract_defs, extract_symbols
from nearsym.extract.languages import language_for_path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "deprecated"

EXPECTED = {
    "legacy.py": {"old_py", "old_method_py"},  # warnings.deprecated, typing_extensions
    "legacy.ts": {"oldTs", "oldMethodTs"},  # TSDoc @deprecated, on a method too
    "legacy.js": {"oldJs"},  # JSDoc
    "Legacy.java": {"oldJava", "oldJavaDoc"},  # @Deprecated, Javadoc @deprecated
    "Legacy.kt": {"oldKt"},  # @Deprecated(...)
    "Legacy.cs": {"OldCs", "OldNestedCs"},  # [Obsolete(...)], [A, System.Obsolete]
    "legacy.rs": {"old_rs"},  # #[deprecated(...)]
    "legacy.go": {"OldGo", "OldType"},  # a `Deprecated:` paragraph
    "legacy.php": {"old_php"},  # PHPDoc @deprecated
    "Legacy.swift": {"oldSwift"},  # @available(*, deprecated)
}


def symbols(name: str) -> list[tuple[str, bool]]:
    path = FIXTURES / name
    spec = language_for_path(str(path))
    assert spec is not None
    return [(s.name, s.deprecated) for s in extract_symbols(path.read_bytes(), spec, "/r", name)]


def test_every_fixture_is_checked() -> None:
    assert sorted(p.name for p in FIXTURES.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_only_marked_definitions_are_deprecated(name: str) -> None:
    found = symbols(name)
    assert {n for n, deprecated in found if deprecated} == EXPECTED[name]
    # every fixture also holds definitions that are not deprecated
    assert any(not deprecated for _, deprecated in found)


def test_the_flag_survives_the_worker_and_cache_format() -> None:
    path = FIXTURES / "legacy.go"
    spec = language_for_path(str(path))
    assert spec is not None
    defs = FileDefs.decode(extract_defs(path.read_bytes(), spec).encode())
    assert {s.name for s in defs.symbols("/r", "legacy.go") if s.deprecated} == {"OldGo", "OldType"}
    again = FileDefs.from_symbols("go", defs.symbols("/r", "legacy.go"))
    assert again == replace(defs, mentions=b"")  # symbols carry no mentions


def test_a_file_that_never_spells_the_marker_is_not_searched() -> None:
    source = b"def old():\n    pass\n"
    spec = language_for_path("x.py")
    assert spec is not None
    assert [s.deprecated for s in extract_symbols(source, spec, "/r", "x.py")] == [False]
