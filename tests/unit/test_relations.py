"""The open file's imports, resolved to workspace files."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import pytest

from nearsym.core.rank import RankContext
from nearsym.index.cache import Cache
from nearsym.index.namespace import Namespace
from nearsym.index.store import SymbolIndex
from nearsym.workspace import imports as relations_module
from nearsym.workspace.config import Config, index_key
from nearsym.workspace.imports import Relations
from nearsym.workspace.indexer import index_into, save_snapshot

from .helpers import rerank, sym

T = TypeVar("T")


def workspace(tmp_path: Path, files: dict[str, str]) -> list[Namespace]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    index = SymbolIndex(str(tmp_path))
    index_into(index, Config())
    return [Namespace(str(tmp_path), index)]


def related(tmp_path: Path, ns: list[Namespace], open_rel: str) -> set[str]:
    found = Relations().related_files(str(tmp_path / open_rel), ns)
    return {str(Path(p).relative_to(tmp_path)) for p in found}


def test_python_absolute_relative_and_reexports(tmp_path: Path) -> None:
    ns = workspace(
        tmp_path,
        {
            "src/pkg/__init__.py": "from .app import App\n",
            "src/pkg/app.py": "class App: pass\n",
            "src/pkg/util/__init__.py": "",
            "src/pkg/util/text.py": "def slug(): pass\n",
            "src/pkg/other.py": "def unrelated(): pass\n",
            "tests/test_app.py": "from pkg import App\nfrom pkg.util import text\n",
            "src/pkg/views.py": "from .util.text import slug\nfrom . import app\n",
        },
    )
    assert related(tmp_path, ns, "tests/test_app.py") == {
        "src/pkg/__init__.py",
        "src/pkg/app.py",  # through the package's re-export
        "src/pkg/util/__init__.py",
        "src/pkg/util/text.py",
    }
    assert related(tmp_path, ns, "src/pkg/views.py") >= {"src/pkg/util/text.py", "src/pkg/app.py"}
    assert "src/pkg/other.py" not in related(tmp_path, ns, "src/pkg/views.py")


def test_typescript_relative_and_go_packages(tmp_path: Path) -> None:
    ns = workspace(
        tmp_path,
        {
            "web/src/api.ts": "import { fmt } from './util';\nimport * as m from '../lib/index.js';\n",
            "web/src/util.ts": "export function fmt() {}\n",
            "web/lib/index.ts": "export const x = 1;\n",
            "cmd/main.go": 'package main\nimport "example.com/m/internal/store"\n',
            "internal/store/store.go": "package store\nfunc Open() {}\n",
            "internal/other/o.go": "package other\n",
        },
    )
    assert related(tmp_path, ns, "web/src/api.ts") == {"web/src/util.ts", "web/lib/index.ts"}
    assert related(tmp_path, ns, "cmd/main.go") == {"internal/store/store.go"}


def test_a_go_package_is_one_step_its_own_imports_are_not_followed(tmp_path: Path) -> None:
    """A Go import names a whole folder and re-exports nothing: the files of
    the packages the open file imports are related, not the packages those
    files import in turn (that second step made 43% of Go's library related
    to `net/http/server.go`, read 897 files per first query)."""
    ns = workspace(
        tmp_path,
        {
            "cmd/main.go": 'package main\nimport (\n\t"example.com/m/lib/http"\n)\n',
            "lib/http/server.go": 'package http\nimport "example.com/m/lib/net"\nfunc Serve() {}\n',
            "lib/http/client.go": "package http\nfunc Get() {}\n",
            "lib/net/net.go": 'package net\nimport "example.com/m/lib/os"\nfunc Dial() {}\n',
            "lib/os/file.go": "package os\nfunc Open() {}\n",
        },
    )
    assert related(tmp_path, ns, "cmd/main.go") == {"lib/http/server.go", "lib/http/client.go"}
    assert related(tmp_path, ns, "lib/http/server.go") == {"lib/net/net.go"}


def test_a_layout_keeps_only_files_an_import_can_reach(tmp_path: Path) -> None:
    """C, Java and the rest never resolve an import: a kernel-sized C tree
    costs the layout nothing; every file an import can land on is kept."""
    files = ["a/b.c", "a/b.h", "src/X.java", "pkg/m.py", "pkg/s.pyi", "web/x.mts", "web/y.tsx"]
    layout = relations_module._layout([*files, "cmd/main.go"])
    assert layout.files == {"pkg/m.py", "pkg/s.pyi", "web/x.mts", "web/y.tsx"}
    assert layout.by_folder == {"cmd": ["cmd/main.go"], "": ["cmd/main.go"]}
    assert set(layout.by_module) == {"pkg.m", "m", "pkg.s", "s"}
    ns = workspace(
        tmp_path,
        {
            "web/a.ts": "import { f } from './b.js';\n",
            "web/b.mts": "export function f() {}\n",
            "web/c.c": "int f(void) { return 0; }\n",
        },
    )
    assert related(tmp_path, ns, "web/a.ts") == {"web/b.mts"}


def test_buffer_text_overrides_the_disk(tmp_path: Path) -> None:
    ns = workspace(tmp_path, {"a.py": "", "b.py": "def f(): pass\n"})
    found = Relations().related_files(str(tmp_path / "a.py"), ns, b"import b\n")
    assert found == {str(tmp_path / "b.py")}


def recorded_parses(monkeypatch: pytest.MonkeyPatch, record: Callable[[bytes], T]) -> list[T]:
    """`record` of each text `extract_imports` parses from now on."""
    parsed: list[T] = []
    real = relations_module.extract_imports
    monkeypatch.setattr(
        relations_module,
        "extract_imports",
        lambda source, spec: parsed.append(record(source)) or real(source, spec),
    )
    return parsed


def test_a_buffer_too_large_to_read_from_disk_is_not_parsed_for_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parsing it would hold the interpreter lock for seconds; a file that
    large on disk is not read either (`MAX_READ_BYTES`)."""
    ns = workspace(tmp_path, {"a.py": "", "b.py": "def f(): pass\n"})
    parsed = recorded_parses(monkeypatch, len)
    huge = b"import b\n" + b"# padding\n" * (relations_module.MAX_READ_BYTES // 10)
    assert Relations().related_files(str(tmp_path / "a.py"), ns, huge) == frozenset()
    assert parsed == []
    small = Relations().related_files(str(tmp_path / "a.py"), ns, b"import b\n")
    assert small == {str(tmp_path / "b.py")} and parsed[0] == 9  # then b.py's own


def test_a_text_is_parsed_for_imports_once_while_the_index_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The members hint asks for the open file's imports each time the
    index changes; the same text is not parsed again, and each new text
    is, resolved against the index as it is now."""
    ns = workspace(tmp_path, {"a.py": "import b\n", "b.py": "def f(): pass\n"})
    parsed = recorded_parses(monkeypatch, bytes)
    relations = Relations()
    open_file = str(tmp_path / "a.py")
    assert [t for _, t in relations.resolved(open_file, ns)] == [[str(tmp_path / "b.py")]]
    (tmp_path / "c.py").write_text("def g(): pass\n")
    index_into(ns[0].index, Config())  # the index changes: c.py is new
    assert [t for _, t in relations.resolved(open_file, ns)] == [[str(tmp_path / "b.py")]]
    assert parsed == [b"import b\n"]
    found = relations.resolved(open_file, ns, b"import c\n")  # an edited buffer
    assert [t for _, t in found] == [[str(tmp_path / "c.py")]]
    assert parsed == [b"import b\n", b"import c\n"]


def test_imported_file_wins_a_name_tie() -> None:
    imported = sym("parse", "lib/imported.py")
    other = sym("parse", "aaa/other.py")
    ctx = RankContext("/ws/app/main.py", related=frozenset({"/ws/lib/imported.py"}))
    assert rerank("parse", [other, imported], 2, ctx) == [imported, other]
    assert rerank("parse", [other, imported], 2, RankContext("/ws/app/main.py")) == [
        other,
        imported,
    ]


def test_a_layout_made_before_a_restart_s_snapshot_is_not_reused(tmp_path: Path) -> None:
    """A restart answers its first query before the cache's snapshot is
    in: the layout then made from the empty index must not stand for the
    whole folder the snapshot brings a moment later (it did, for
    `BULK_LAYOUT_SECONDS`: none of the open file's imports resolved)."""
    root = tmp_path / "ws"
    root.mkdir()
    for rel, text in {"a.py": "import b\n", "b.py": "def b(): pass\n"}.items():
        (root / rel).write_text(text)
        os.utime(root / rel, ns=(1_000_000_000, 1_000_000_000))  # old enough to trust
    cache = Cache(str(root), str(tmp_path / "cache"), index_key(Config()))
    first = SymbolIndex(str(root))
    save_snapshot(first, index_into(first, Config(), cache=cache), cache)
    cache.close()
    restarted = SymbolIndex(str(root))
    restarted.bulk = True
    ns = [Namespace(str(root), restarted)]
    relations = Relations()
    open_file = str(root / "a.py")
    assert relations.related_files(open_file, ns) == frozenset()  # nothing in yet
    cache = Cache(str(root), str(tmp_path / "cache"), index_key(Config()))
    assert index_into(restarted, Config(), cache=cache).from_snapshot == 2
    restarted.bulk = True  # as while the restart's walk goes on
    assert relations.related_files(open_file, ns) == {str(root / "b.py")}


def layouts_made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that gets an item each time a layout is made."""
    made: list[int] = []
    layout = relations_module._layout

    def counted(files: Iterable[str]) -> relations_module._Layout:
        made.append(1)
        return layout(files)

    monkeypatch.setattr(relations_module, "_layout", counted)
    return made


def test_an_edit_keeps_the_layout_and_a_file_added_or_removed_remakes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The layout is the indexed files' paths: a file parsed again (an
    edit) leaves it as it is; a file that enters or leaves the index
    makes it again, and the open file's imports resolve against the new
    one at once."""
    ns = workspace(tmp_path, {"a.py": "import b\nimport c\n", "b.py": "def b(): pass\n"})
    index = ns[0].index
    made = layouts_made(monkeypatch)
    relations = Relations()
    open_file = str(tmp_path / "a.py")
    assert relations.related_files(open_file, ns) == {str(tmp_path / "b.py")}
    assert len(made) == 1
    index.replace_file("b.py", [sym("b", "b.py"), sym("b2", "b.py")])  # an edit
    assert relations.related_files(open_file, ns) == {str(tmp_path / "b.py")}
    assert len(made) == 1
    (tmp_path / "c.py").write_text("def c(): pass\n")
    index.replace_file("c.py", [sym("c", "c.py")])  # a file created
    assert relations.related_files(open_file, ns) == {
        str(tmp_path / "b.py"),
        str(tmp_path / "c.py"),
    }
    assert len(made) == 2
    index.remove_file("b.py")
    assert relations.related_files(open_file, ns) == {str(tmp_path / "c.py")}
    assert len(made) == 3


def test_a_layout_is_reused_only_while_a_cold_index_adds_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rebuilding the file layout takes 0.1 s on the kernel; during a cold
    index (every batch changes the index) it is reused for a while, after it
    never: an import of a file indexed since resolves at once."""
    ns = workspace(tmp_path, {"a.py": "import b\n", "c.py": "def c(): pass\n"})
    index = ns[0].index
    relations = Relations()
    open_file = str(tmp_path / "a.py")
    assert relations.related_files(open_file, ns) == frozenset()
    (tmp_path / "b.py").write_text("def b(): pass\n")
    index.bulk = True
    index_into(index, Config())
    index.bulk = True
    assert relations.related_files(open_file, ns) == frozenset()  # reused
    monkeypatch.setattr(relations_module, "BULK_LAYOUT_SECONDS", 0.0)
    assert relations.related_files(open_file, ns) == {str(tmp_path / "b.py")}
    monkeypatch.setattr(relations_module, "BULK_LAYOUT_SECONDS", 60.0)
    (tmp_path / "d.py").write_text("def d(): pass\n")
    (tmp_path / "a.py").write_text("import b\nimport d\n")
    index.bulk = False
    index_into(index, Config())
    assert index.bulk is False
    assert relations.related_files(open_file, ns) == {
        str(tmp_path / "b.py"),
        str(tmp_path / "d.py"),
    }


def test_a_file_whose_imports_are_not_read_makes_no_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A C file open (its `#include`s are not read), or a Python file
    importing nothing, relates to no file: the workspace's layout is not
    made for it, after every file added or removed (the kernel's 56,000
    paths: 40 ms a time)."""
    ns = workspace(
        tmp_path,
        {"main.c": '#include "util.h"\nint main(void) { return 0; }\n', "quiet.py": "x = 1\n"},
    )
    made = layouts_made(monkeypatch)
    relations = Relations()
    assert relations.related_files(str(tmp_path / "main.c"), ns) == frozenset()
    assert relations.resolved(str(tmp_path / "quiet.py"), ns) == []
    assert made == []
    ns[0].index.replace_file("b.py", [sym("b", "b.py")])  # a file added
    assert relations.related_files(str(tmp_path / "main.c"), ns) == frozenset()
    assert made == []


GO_SERVER = """// Package web serves pages.
package web

/*
#include <stdlib.h>
*/
import "C"

import (
	"context"
	stdlog "log"
	. "math"
	_ "net/http/pprof"

	"example.com/m/internal/store"
)

import "strings"

type Server struct {
	store *store.Store
}

func (s *Server) Handle(ctx context.Context, path string) error {
	if strings.HasPrefix(path, "/import") {
		stdlog.Printf("import %q", path)
	}
	for i := 0; i < 3; i++ {
		go func() {
			_ = Sqrt(float64(i))
		}()
	}
	return nil
}

func main() {
	s := &Server{}
	_ = s.Handle(context.Background(), "/")
}
"""


def test_go_imports_read_from_the_skimmed_tree_are_the_whole_trees() -> None:
    """Go's imports come only at the top level: read from the tree parsed
    without the function bodies (`_TOP_LEVEL_ONLY`), they are what the
    whole tree gives, grouped, aliased, dot, blank and cgo imports alike."""
    from nearsym.extract import imports
    from nearsym.extract.folds import skimmed
    from nearsym.extract.grammar import load_grammar, parser
    from nearsym.extract.languages import language_named

    spec = language_named("go")
    assert spec is not None
    source = GO_SERVER.encode()
    whole = parser(spec).parse(source).root_node
    folded = skimmed(source, spec)[2].root_node
    assert folded.descendant_count < whole.descendant_count  # bodies left out
    found = imports.extract_imports(source, spec)
    assert found == imports._go_imports(source, whole, load_grammar(spec).language)
    assert sorted(ref.module for ref in found) == [
        "C", "context", "example.com/m/internal/store", "log", "math", "net/http/pprof", "strings",
    ]  # fmt: skip
