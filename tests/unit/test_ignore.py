"""Ignore rules: git's pattern semantics, where each kind of ignore file
applies (inside a repository or everywhere), hostile lines and files."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from nearsym.workspace.config import Config
from nearsym.workspace.discovery import WalkReport, discover, indexable
from nearsym.workspace.ignore import RuleFile, parse_rules


@pytest.fixture(autouse=True)
def no_user_git_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Git's global files come from a home of the test's own."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return home


def write(root: Path, rel: str, text: str = "def f(): pass\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def found(root: Path, config: Config | None = None, report: WalkReport | None = None) -> list[str]:
    return sorted(sf.rel for sf in discover(str(root), config or Config(), report=report))


# (pattern, path, is a folder, ignored): each row checked against
# `git check-ignore --no-index` (git 2.39) when it was written.
GIT_CASES = [
    ("*.o", "a.o", False, True),
    ("*.o", "d/a.o", False, True),
    ("*.o", "a.oo", False, False),
    ("/*", "a", False, True),
    ("/*", "a/b", False, False),  # a itself is ignored; the walk never enters it
    ("foo/", "foo", True, True),
    ("foo/", "foo", False, False),
    ("foo/", "a/foo", True, True),
    ("a/**/b", "a/b", False, True),
    ("a/**/b", "a/x/y/b", False, True),
    ("a/**/b", "x/a/b", False, False),
    ("**/foo", "x/y/foo", False, True),
    ("**/foo", "foox", False, False),
    ("foo/**", "foo", False, False),
    ("foo/**", "foo/a/b", False, True),
    ("doc/*.txt", "doc/a.txt", False, True),
    ("doc/*.txt", "doc/x/a.txt", False, False),
    ("doc/*.txt", "a/doc/a.txt", False, False),
    ("*a*b*c", "xaxbxc", False, True),
    ("*a*b*c", "acb", False, False),
    ("*a*b*c", "aaabbbccc", False, True),
    ("[a-c]x", "bx", False, True),
    ("[a-c]x", "dx", False, False),
    ("[!a-c]x", "dx", False, True),
    ("[!a-c]x", "ax", False, False),
    ("[]]x", "]x", False, True),
    ("?.py", "a.py", False, True),
    ("?.py", "ab.py", False, False),
    ("\\#x", "#x", False, True),
    ("\\!x", "!x", False, True),
    ("x\\ ", "x ", False, True),
    ("x  ", "x", False, True),
    ("a/*/c", "a/b/c", False, True),
    ("a/*/c", "a/b/d/c", False, False),
    ("*.[ch]", "a.h", False, True),
    ("[[:digit:]]x", "1x", False, True),
    ("[[:digit:]]x", "ax", False, False),
    ("a**b", "axb", False, True),
    ("**", "a/b", False, True),
]


@pytest.mark.parametrize(("pattern", "path", "is_dir", "ignored"), GIT_CASES)
def test_patterns_match_as_git_does(pattern: str, path: str, is_dir: bool, ignored: bool) -> None:
    rule = RuleFile(parse_rules([pattern], ".gitignore")).last_match(path, is_dir)
    assert (rule is not None and not rule.negated) == ignored


def test_the_last_matching_line_decides() -> None:
    rules = RuleFile(parse_rules(["*.py", "!keep.py", "keep.py"], ".gitignore"))
    assert rules.last_match("keep.py", False) is rules.rules[2]
    rules = RuleFile(parse_rules(["*.py", "!keep.py"], ".gitignore"))
    assert rules.last_match("keep.py", False) is rules.rules[1]


def test_a_bad_line_is_skipped_and_reported_the_rest_applies(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "gen/\n\\\n[z-a]\n[unclosed\n*.tmp.py\n")
    write(tmp_path, "gen/a.py")
    write(tmp_path, "b.tmp.py")
    write(tmp_path, "z.py")
    write(tmp_path, "[unclosed")
    report = WalkReport()
    assert found(tmp_path, report=report) == ["z.py"]
    assert any(".gitignore:2:" in p for p in report.problems)
    assert any(".gitignore:3:" in p and "range" in p for p in report.problems)
    assert any(".gitignore:4:" in p for p in report.problems)


def test_patterns_that_make_a_backtracking_matcher_explode_end(tmp_path: Path) -> None:
    """A backtracking matcher (Python's re through pathspec, git's
    wildmatch without its abort rule) takes minutes to years on these; the
    bound below is generous by five orders of magnitude."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "*a" * 30 + "*b\n" + "**/" * 40 + "x\n")
    deep = "/".join(["a"] * 60)
    write(tmp_path, f"{deep}/{'a' * 200}.py")
    write(tmp_path, "a" * 250 + ".py")
    result: list[list[str]] = []
    walker = threading.Thread(target=lambda: result.append(found(tmp_path)), daemon=True)
    walker.start()
    walker.join(timeout=60)
    assert result and len(result[0]) == 2


def test_gitignore_outside_a_repository_is_not_applied(tmp_path: Path) -> None:
    """Debian's linux-source tarball: `/*` then `!/debian/`, and no `.git`."""
    write(tmp_path, ".gitignore", "/*\n!/debian/\n")
    write(tmp_path, "kernel/sched.c", "int schedule(void) { return 0; }\n")
    report = WalkReport()
    assert found(tmp_path, report=report) == ["kernel/sched.c"]
    assert report.warning(str(tmp_path)) is None


def test_gitignore_inside_a_repository_applies_and_says_which_rule(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "# packaging\n/*\n!/debian/\n")
    write(tmp_path, "kernel/sched.c", "int schedule(void) { return 0; }\n")
    write(tmp_path, "debian/rules.py")
    report = WalkReport()
    assert found(tmp_path, report=report) == ["debian/rules.py"]
    report = WalkReport()
    write(tmp_path, ".gitignore", "/*\n")
    assert found(tmp_path, report=report) == []
    warning = report.warning(str(tmp_path))
    assert warning is not None and ".gitignore:1: /*" in warning
    assert report.folders_by_source[".gitignore"] == 2


def test_require_git_false_applies_gitignore_everywhere(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "gen/\n")
    write(tmp_path, "gen/a.py")
    write(tmp_path, "b.py")
    assert found(tmp_path, Config(require_git=False)) == ["b.py"]
    assert found(tmp_path) == ["b.py", "gen/a.py"]


def test_dot_ignore_applies_with_and_without_git_and_outranks_gitignore(tmp_path: Path) -> None:
    write(tmp_path, ".ignore", "scratch/\n")
    write(tmp_path, "scratch/a.py")
    write(tmp_path, "b.py")
    assert found(tmp_path) == ["b.py"]
    (tmp_path / ".git").mkdir()
    write(tmp_path, ".gitignore", "!scratch/\n")
    assert found(tmp_path) == ["b.py"]


def test_a_subfolder_of_a_repository_follows_the_ignore_files_above_it(tmp_path: Path) -> None:
    (tmp_path / ".git" / "info").mkdir(parents=True)
    write(tmp_path, ".git/info/exclude", "sub/local.py\n")
    write(tmp_path, ".gitignore", "*.gen.py\nsub/out/\n")
    write(tmp_path, "sub/.gitignore", "pkg/skip.py\n")
    for rel in ("a.py", "b.gen.py", "out/c.py", "local.py", "pkg/skip.py", "pkg/d.py"):
        write(tmp_path / "sub", rel)
    root = tmp_path / "sub"
    assert found(root) == ["a.py", "pkg/d.py"]
    for rel in ("a.py", "b.gen.py", "out/c.py", "local.py", "pkg/skip.py", "pkg/d.py"):
        kept = indexable(str(root), str(root / rel), Config()) is not None
        assert kept == (rel in ("a.py", "pkg/d.py")), rel


def test_a_repository_inside_a_plain_folder_applies_its_rules_below(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.py\n")  # not in a repository: no effect
    write(tmp_path, "top.py")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    write(tmp_path, "repo/.gitignore", "gen/\n")
    write(tmp_path, "repo/gen/a.py")
    write(tmp_path, "repo/b.py")
    assert found(tmp_path) == ["repo/b.py", "top.py"]


def test_the_global_excludes_file_applies_inside_repositories(
    tmp_path: Path, no_user_git_config: Path
) -> None:
    home = no_user_git_config
    write(home, ".config/git/ignore", "*.local.py\n")
    write(tmp_path, "a.local.py")
    write(tmp_path, "b.py")
    assert found(tmp_path) == ["a.local.py", "b.py"]
    (tmp_path / ".git").mkdir()
    assert found(tmp_path) == ["b.py"]
    write(home, ".gitconfig", '[user]\n\tname = x\n[core]\n\texcludesFile = "~/my ignores" ; set\n')
    write(home, "my ignores", "b.py\n")
    assert found(tmp_path) == ["a.local.py"]


def test_fifo_and_device_ignore_files_are_refused_not_read(tmp_path: Path) -> None:
    (tmp_path / ".git" / "info").mkdir(parents=True)
    os.mkfifo(tmp_path / ".gitignore")
    os.mkfifo(tmp_path / ".git" / "info" / "exclude")
    (tmp_path / "sub").mkdir()
    os.symlink("/dev/zero", tmp_path / "sub" / ".gitignore")
    os.mkfifo(tmp_path / "sub" / ".ignore")
    write(tmp_path, "sub/a.py")
    os.mkfifo(tmp_path / "pipe.py")
    result: list[list[str]] = []
    report = WalkReport()
    walker = threading.Thread(
        target=lambda: result.append(found(tmp_path, report=report)), daemon=True
    )
    walker.start()
    walker.join(timeout=60)
    assert result == [["sub/a.py"]]
    assert indexable(str(tmp_path), str(tmp_path / "sub" / "a.py"), Config()) is not None
