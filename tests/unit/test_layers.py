"""The package's layers, read from its own source: what imports what.

Every `import` in `server/nearsym/` is read with `ast` (function-level ones
included), so the checks hold for the code as it is, not as documented:
the layers only import downwards, there is no import cycle, the core does
no I/O, and no module grows past what one person can read at a sitting."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "nearsym"

LAYERS = ("core", "extract", "index", "workspace", "lsp", "tools")
"""Bottom to top: a module may import its own layer and those before it."""

FORBIDDEN_IN_CORE = (
    "pygls",
    "lsprotocol",
    "tree_sitter",
    "sqlite3",
    "multiprocessing",
    "psycopg",
    "psycopg_pool",
)
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, name: str) -> Iterator[str]:
    """Every module `path` imports, absolute, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            # `from nearsym.core import match` imports the module nearsym.core.match
            yield from (f"{base}.{alias.name}" for alias in node.names)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: {m for m in imports_of(path, name) if m in known and m != name}
        for name, path in known.items()
    }


def layer_of(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm (recursive: the package has a few dozen modules;
    raising the recursion limit would trip CPython 3.11's AST validator in
    later compiles of the same process)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            found.append(component)

    for v in edges:
        if v not in index:
            visit(v)
    return found


def test_every_module_belongs_to_a_layer() -> None:
    loose = [
        n for n in modules() if layer_of(n) is None and n not in ("nearsym", "nearsym.__main__")
    ]
    assert loose == []


def test_layers_only_import_downwards() -> None:
    upward = []
    for name, targets in graph().items():
        mine = layer_of(name)
        for target in targets:
            theirs = layer_of(target)
            if mine is not None and theirs is not None and theirs > mine:
                upward.append(f"{name} -> {target}")
    assert upward == []


def test_no_import_cycle() -> None:
    edges = graph()
    # a package's __init__ importing nothing, its modules "importing" it is
    # how Python works, not a cycle of ours: only module-to-module edges count
    assert [c for c in strongly_connected(edges) if len(c) > 1] == []


def closure(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen = {start}
    todo = [start]
    while todo:
        for target in edges[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


@pytest.mark.parametrize("name", [n for n in modules() if layer_of(n) == 0])
def test_core_reaches_no_io_and_no_protocol(name: str) -> None:
    """Directly or through other nearsym modules, a core module imports
    none of the protocol, parser, database or process libraries, and calls
    neither `open()` nor `os.walk`."""
    every = modules()
    reached = closure(name, graph())
    outside = set()
    calls = []
    for module in reached:
        path = every[module]
        outside |= {m.split(".")[0] for m in imports_of(path, module)}
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Name) and f.id == "open":
                    calls.append(f"{module}: open()")
                if isinstance(f, ast.Attribute) and f.attr in (
                    "walk", "open", "read_text", "read_bytes", "scandir", "listdir",
                ):  # fmt: skip
                    calls.append(f"{module}: .{f.attr}()")
    assert sorted(outside & set(FORBIDDEN_IN_CORE)) == []
    assert calls == []
    assert {layer_of(m) for m in reached} <= {0, None}


def test_no_module_is_longer_than_one_sitting() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_checks_see_a_violation() -> None:
    """The graph reader itself: a function-level import is an edge."""
    source = "def f():\n    from nearsym.tools import cli\n"
    tree = ast.parse(source)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert found and found[0].module == "nearsym.tools"
    assert strongly_connected({"a": {"b"}, "b": {"a"}, "c": set()}) == [{"a", "b"}, {"c"}] or (
        sorted(map(sorted, strongly_connected({"a": {"b"}, "b": {"a"}, "c": set()})))
        == [["a", "b"], ["c"]]
    )


def test_helpers_put_the_package_parent_first_on_their_path() -> None:
    """The watcher helper starts isolated and imports `nearsym` from the
    folder holding the package (not from inside it, where `core` or
    `index` would become top-level modules)."""
    from nearsym.workspace.children import PACKAGE_PARENT, python_module_command

    assert (Path(PACKAGE_PARENT) / "nearsym" / "__init__.py").is_file()
    assert str(PACKAGE.parent) == PACKAGE_PARENT
    command = python_module_command("nearsym.workspace.watcher", "/root")
    assert command[1] == "-I" and repr(PACKAGE_PARENT) in command[3]
