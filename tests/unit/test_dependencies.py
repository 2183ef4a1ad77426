"""Which folders are the project's dependencies, and what of them is read
(`workspace.dependencies`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from nearsym.workspace.config import Config
from nearsym.workspace.dependencies import (
    dependency_folders,
    go_requires,
    walk_dependency,
)
from nearsym.workspace.ignore import WalkReport


def touch(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def walked(root: Path) -> list[str]:
    return sorted(sf.rel for sf in walk_dependency(str(root), Config(), WalkReport()))


def test_site_packages_keeps_sources_only(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    touch(site / "six.py", "def f(): pass\n")
    touch(site / "pkg" / "__init__.py")
    touch(site / "pkg" / "__pycache__" / "x.cpython-311.py")
    touch(site / "pkg-1.0.dist-info" / "record.py")
    touch(site / "pkg" / "data.json", "{}")
    assert walked(site) == ["pkg/__init__.py", "six.py"]


def test_node_modules_keeps_scripts_and_declarations(tmp_path: Path) -> None:
    modules = tmp_path / "node_modules"
    touch(modules / "lib" / "index.d.ts", "export declare function f(): void;\n")
    touch(modules / "lib" / "index.js", "function f() {}\n")
    touch(modules / "lib" / "package.json", "{}")
    touch(modules / "lib" / "tool.py", "def f(): pass\n")
    touch(modules / "lib" / "node_modules" / "old" / "index.js", "function g() {}\n")
    touch(modules / ".bin" / "tool.js", "")
    assert walked(modules) == ["lib/index.d.ts", "lib/index.js"]


def test_on_finds_venvs_and_node_modules(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    touch(root / ".venv" / "pyvenv.cfg")
    touch(root / ".venv" / "lib" / "python3.12" / "site-packages" / "a.py")
    touch(root / "env2" / "pyvenv.cfg")
    touch(root / "env2" / "lib" / "python3.11" / "site-packages" / "b.py")
    touch(root / "node_modules" / "x" / "index.js")
    touch(root / "src" / "main.py")
    assert dependency_folders([str(root)], "on") == [
        str(root / ".venv" / "lib" / "python3.12" / "site-packages"),
        str(root / "env2" / "lib" / "python3.11" / "site-packages"),
        str(root / "node_modules"),
    ]


def test_a_list_is_exactly_its_existing_folders(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "vendor").mkdir(parents=True)
    (root / "node_modules").mkdir()
    elsewhere = tmp_path / "libs"
    elsewhere.mkdir()
    setting = ("vendor", str(elsewhere), "missing")
    assert dependency_folders([str(root)], setting) == [str(root / "vendor"), str(elsewhere)]


def test_go_mod_requires_are_read() -> None:
    text = textwrap.dedent(
        """
        module example.com/app

        go 1.22

        require github.com/BurntSushi/toml v1.3.2

        require (
            golang.org/x/sync v0.7.0 // indirect
            gopkg.in/yaml.v3 v3.0.1
        )
        """
    )
    assert go_requires(text) == [
        ("github.com/BurntSushi/toml", "v1.3.2"),
        ("golang.org/x/sync", "v0.7.0"),
        ("gopkg.in/yaml.v3", "v3.0.1"),
    ]


def test_go_and_cargo_caches_hold_the_required_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    touch(root / "go.mod", "module m\n\nrequire github.com/BurntSushi/toml v1.3.2\n")
    touch(
        root / "Cargo.lock",
        'version = 3\n\n[[package]]\nname = "app"\nversion = "0.1.0"\n\n'
        '[[package]]\nname = "memchr"\nversion = "2.7.1"\n'
        'source = "registry+https://example.invalid/index"\n',
    )
    mod = tmp_path / "gomod"
    toml = mod / "github.com" / "!burnt!sushi" / "toml@v1.3.2"
    toml.mkdir(parents=True)
    (mod / "github.com" / "!burnt!sushi" / "toml@v1.2.0").mkdir()
    cargo = tmp_path / "cargo"
    memchr = cargo / "registry" / "src" / "index-abc" / "memchr-2.7.1"
    memchr.mkdir(parents=True)
    (cargo / "registry" / "src" / "index-abc" / "memchr-2.6.0").mkdir()
    monkeypatch.setenv("GOMODCACHE", str(mod))
    monkeypatch.setenv("CARGO_HOME", str(cargo))
    assert dependency_folders([str(root)], "on") == [str(toml), str(memchr)]
