"""Definitions per language: data-driven, (kind, container, name, line) tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from nearsym.extract.definitions import extract_symbols, utf16_column
from nearsym.extract.languages import language_for_path

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "polyglot"


def table(path: str, source: bytes) -> list[tuple[str, str, str, int]]:
    spec = language_for_path(path)
    assert spec is not None
    return [
        (s.kind.name, s.container, s.name, s.span.line + 1)
        for s in extract_symbols(source, spec, "/ws", path)
    ]


def check(path: str, expected: list[tuple[str, str, str, int]]) -> None:
    assert table(path, (FIXTURE / path).read_bytes()) == expected


def test_python() -> None:
    check(
        "app/models.py",
        [
            ("CONSTANT", "", "MAX_USERS", 3),
            ("CLASS", "", "User", 6),
            ("FIELD", "User", "role", 7),
            ("METHOD", "User", "__init__", 9),
            ("METHOD", "User", "display_name", 12),
            ("FUNCTION", "", "load_users", 16),
        ],
    )


def test_typescript() -> None:
    check(
        "web/src/client.ts",
        [
            ("INTERFACE", "", "UserDto", 1),
            ("PROPERTY", "UserDto", "id", 2),
            ("PROPERTY", "UserDto", "name", 3),
            ("CLASS", "", "ApiClient", 6),
            ("CONSTRUCTOR", "ApiClient", "constructor", 7),
            ("METHOD", "ApiClient", "fetchUser", 9),
            ("CLASS", "", "UserId", 15),
        ],
    )


def test_javascript() -> None:
    check(
        "web/src/util.js",
        [("CONSTANT", "", "DEFAULT_TIMEOUT", 1), ("FUNCTION", "", "debounce", 3)],
    )


def test_go() -> None:
    check(
        "server/main.go",
        [
            ("CONSTANT", "", "DefaultPort", 5),
            ("STRUCT", "", "HTTPServer", 7),
            ("FIELD", "HTTPServer", "Addr", 8),
            ("FIELD", "HTTPServer", "Handler", 9),
            ("FUNCTION", "", "NewHTTPServer", 12),
            ("METHOD", "HTTPServer", "ListenAndServe", 16),
        ],
    )


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        (
            "nested.py",
            b"class A:\n    class B:\n        def m(self):\n            def local(): pass\n",
            [("CLASS", "", "A", 1), ("CLASS", "A", "B", 2), ("METHOD", "A.B", "m", 3),
             ("FUNCTION", "A.B.m", "local", 4)],
        ),
        (
            "decorated.py",
            b"@dataclass\nclass P:\n    x: int = 0\n    @property\n    def y(self): ...\n",
            [("CLASS", "", "P", 2), ("FIELD", "P", "x", 3), ("METHOD", "P", "y", 5)],
        ),
        (
            "generic.go",
            b"package p\ntype S[T any] struct{}\nfunc (s *S[T]) Get() T { var local T; return local }\n",
            [("STRUCT", "", "S", 2), ("METHOD", "S", "Get", 3)],
        ),
        (
            "types.ts",
            b"enum Color { Red, Green = 2 }\nnamespace NS { export function f() {} }\n",
            [("ENUM", "", "Color", 1), ("ENUM_MEMBER", "Color", "Red", 1),
             ("ENUM_MEMBER", "Color", "Green", 1), ("NAMESPACE", "", "NS", 2),
             ("FUNCTION", "NS", "f", 2)],
        ),
        (
            "view.tsx",
            b"export const App = () => <div/>;\nexport function Button() { return <b/>; }\n",
            [("FUNCTION", "", "App", 1), ("FUNCTION", "", "Button", 2)],
        ),
        (
            "oneline.kt",  # the grammar reads this body as an enum's, holding an error
            b"class K { fun f() {} }\n\nenum class E { A }\n",
            [("CLASS", "", "K", 1), ("METHOD", "K", "f", 1), ("ENUM", "", "E", 3),
             ("ENUM_MEMBER", "E", "A", 3)],
        ),
        (
            "broken.py",
            b"def ok():\n    pass\n\ndef broken(:\n\nclass Fine:\n    pass\n",
            [("FUNCTION", "", "ok", 1), ("FUNCTION", "", "broken", 4), ("CLASS", "", "Fine", 6)],
        ),
    ],
)  # fmt: skip
def test_snippets(path: str, source: bytes, expected: list[tuple[str, str, str, int]]) -> None:
    assert table(path, source) == expected


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        (
            "together.c",
            b"struct s { int x, y; char *p, *q; };\n",
            [("STRUCT", "", "s", 1), ("FIELD", "s", "x", 1), ("FIELD", "s", "y", 1),
             ("FIELD", "s", "p", 1), ("FIELD", "s", "q", 1)],
        ),
        (
            "together.go",
            b"package p\ntype T struct {\n\tA, B int\n}\nfunc F() {\n\ttype u struct{ c, d int }\n}\n",
            [("STRUCT", "", "T", 2), ("FIELD", "T", "A", 3), ("FIELD", "T", "B", 3),
             ("FUNCTION", "", "F", 5), ("STRUCT", "F", "u", 6), ("FIELD", "F.u", "c", 6),
             ("FIELD", "F.u", "d", 6)],
        ),
        (
            "Together.java",
            b"class K {\n  int a, b;\n  static final int MAX_A = 1, MAX_B = 2;\n}\n",
            [("CLASS", "", "K", 1), ("FIELD", "K", "a", 2), ("FIELD", "K", "b", 2),
             ("CONSTANT", "K", "MAX_A", 3), ("CONSTANT", "K", "MAX_B", 3)],
        ),
        (
            "together.py",
            b"RED, GREEN = range(2)\n",
            [("CONSTANT", "", "RED", 1), ("CONSTANT", "", "GREEN", 1)],
        ),
    ],
)  # fmt: skip
def test_names_declared_together_each_have_their_container(
    path: str, source: bytes, expected: list[tuple[str, str, str, int]]
) -> None:
    """They share one declaration node. All but the last were left without
    their container, without the constant kind of an ALL_CAPS name, and not
    local inside a function."""
    assert table(path, source) == expected
    spec = language_for_path(path)
    assert spec is not None
    local = {s.name for s in extract_symbols(source, spec, "/ws", path) if s.local}
    assert local == ({"u", "c", "d"} if path.endswith(".go") else set())


def test_imports_are_not_definitions() -> None:
    assert table("reexport.py", b"from .x import Name\nimport os\n") == []


def test_name_range_is_in_utf16_columns() -> None:
    spec = language_for_path("u.py")
    assert spec is not None
    source = "x = '😀é'; y = 1\ndef café_𝔘(): pass\n".encode()
    (fn,) = [s for s in extract_symbols(source, spec, "/ws", "u.py") if s.name.startswith("caf")]
    assert (fn.span.line, fn.span.col, fn.span.end_col) == (1, 4, 4 + len("café_") + 2)


def test_invalid_utf8_does_not_raise() -> None:
    spec = language_for_path("bad.py")
    assert spec is not None
    symbols = extract_symbols(b"def good():\n    x = '\xff\xfe'\n", spec, "/ws", "bad.py")
    assert [s.name for s in symbols] == ["good"]


def test_utf16_column_counts_surrogate_pairs() -> None:
    line = "a😀b".encode()
    assert utf16_column(line, len(line) - 1, len(line) - 1) == 3


def test_definitions_inside_functions_are_local() -> None:
    spec = language_for_path("l.py")
    assert spec is not None
    source = (
        b"class A:\n    def m(self):\n        class Helper: pass\ndef f():\n    def g(): pass\n"
    )
    local = {s.name: s.local for s in extract_symbols(source, spec, "/ws", "l.py")}
    assert local == {"A": False, "m": False, "Helper": True, "f": False, "g": True}


def test_a_symbols_file_is_its_root_joined_with_its_path(tmp_path: Path) -> None:
    """`Symbol.file`: the folder it was found under, then its `/`-separated
    relative path, as one OS path (what a client is sent as a URI)."""
    spec = language_for_path("mod.py")
    assert spec is not None
    (found,) = extract_symbols(b"def f():\n    pass\n", spec, str(tmp_path), "pkg/sub/mod.py")
    assert found.file == str(tmp_path / "pkg" / "sub" / "mod.py")
