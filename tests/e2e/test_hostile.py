"""Hostile workspaces through the real server: FIFOs and devices where files
should be, ignore files that break matchers, names that are not UTF-8,
links out of the root, pathological nesting. One row per case: the tree
it builds, what it does once the index has ended, and what the answers
must (and must not) hold. Every row failed before the change it covers:
the server hung, lost symbols, answered an error or indexed what it must
not."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .rawclient import RawClient

pytestmark = pytest.mark.e2e

INDEX_SECONDS = 60
"""Longest wait for a cold index of a few files (seconds on a loaded
machine; a hang never ends)."""


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def uri(path: Path | bytes) -> str:
    from nearsym.lsp.convert import path_to_uri

    return path_to_uri(os.fsdecode(path))


async def names(client: RawClient, query: str, **params: Any) -> list[str]:
    reply = await client.request("workspace/symbol", {"query": query, **params}, timeout=30)
    assert "error" not in reply, reply
    return [r["name"] for r in reply["result"]]


async def index_end(client: RawClient) -> None:
    for _ in range(INDEX_SECONDS * 20):
        if any(
            n.get("method") == "$/progress" and n["params"]["value"].get("kind") == "end"
            for n in client.notifications
        ):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the index never ended")


def messages(client: RawClient) -> list[str]:
    return [
        n["params"]["message"]
        for n in client.notifications
        if n.get("method") == "window/showMessage"
    ]


Build = Callable[[Path], None]
After = Callable[[RawClient, Path], Awaitable[None]]


async def nothing(client: RawClient, root: Path) -> None:
    return None


@dataclass
class Case:
    name: str
    build: Build
    found: list[str]
    missing: list[str] = field(default_factory=list)
    message: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    after: After = nothing
    params: Callable[[Path], dict[str, Any]] = lambda root: {}
    client_watches: bool = False


def repo(root: Path) -> None:
    (root / ".git" / "info").mkdir(parents=True)


def kept(root: Path) -> None:
    write(root, "kept.py", "def kept_definition():\n    pass\n")


def fifo_gitignore(rel: str) -> Build:
    def build(root: Path) -> None:
        repo(root)
        kept(root)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(root / rel)
        write(root, "sub/inner.py", "def inner_definition():\n    pass\n")

    return build


def dev_zero_gitignore(root: Path) -> None:
    repo(root)
    kept(root)
    os.symlink("/dev/zero", root / ".gitignore")


def with_fifo_source(root: Path) -> None:
    kept(root)
    os.mkfifo(root / "pipe.py")


async def focus_fifo(client: RawClient, root: Path) -> None:
    client.notify("nearsym/didFocus", {"textDocument": {"uri": uri(root / "pipe.py")}})


def gitignore(text: str, in_repo: bool = True) -> Build:
    def build(root: Path) -> None:
        if in_repo:
            repo(root)
        kept(root)
        write(root, ".gitignore", text)
        write(root, "skipped.py", "def skipped_definition():\n    pass\n")
        write(root, "a" * 200 + ".py", "def long_named_definition():\n    pass\n")

    return build


def top_level_star(in_repo: bool) -> Build:
    def build(root: Path) -> None:
        if in_repo:
            repo(root)
        write(root, ".gitignore", "# Debian's packaging lines\n/*\n!/debian/\n")
        write(root, "kernel/sched.c", "int schedule_definition(void) { return 0; }\n")

    return build


def not_utf8_names(root: Path) -> None:
    kept(root)
    raw = os.fsencode(root)
    with open(raw + b"/\xff\xfe.py", "w") as f:
        f.write("def bytes_named_definition():\n    pass\n")
    os.mkdir(raw + b"/dir\xffname")
    with open(raw + b"/dir\xffname/inner.py", "w") as f:
        f.write("def inner_bytes_definition():\n    pass\n")


def link_out_of_root(root: Path) -> None:
    kept(root)
    outside = root.parent / "outside"
    write(outside, "secret.py", "def secret_at_start():\n    pass\n")
    os.symlink(outside, root / "ext")


async def edit_through_the_link(client: RawClient, root: Path) -> None:
    secret = root.parent / "outside" / "secret.py"
    secret.write_text("def secret_after_edit():\n    pass\n")
    event = {"uri": uri(root / "ext" / "secret.py"), "type": 2}
    client.notify("workspace/didChangeWatchedFiles", {"changes": [event]})
    await asyncio.sleep(0.5)


def late_nul(root: Path) -> None:
    kept(root)
    text = "def before_nul():\n    pass\n" + "x = 1\n" * 2000 + "s = '\0'\n"
    write(root, "nul.py", text + "def after_nul():\n    pass\n")


def unclosed_brackets(root: Path) -> None:
    kept(root)
    # One a line: a single line of them would be skipped as minified.
    text = "x = " + "[\n" * 100_000 + "def lost_after_brackets():\n    pass\n"
    write(root, "broken.py", text)


def made_up_lua(root: Path) -> None:
    kept(root)
    write(root, "real.lua", "function lua_kept() end\n")
    # Tree-sitter's error recovery on this grows with the square of its
    # length: a minute for these 200 KB, until its parse is given up.
    write(root, "made_up.lua", "[\n" * 100_000 + "function lost_after_brackets() end\n")


CASES = [
    Case("fifo .gitignore at the root", fifo_gitignore(".gitignore"), ["kept_definition"]),
    Case(
        "fifo .gitignore in a subfolder",
        fifo_gitignore("sub/.gitignore"),
        ["kept_definition", "inner_definition"],
    ),
    Case("fifo .git/info/exclude", fifo_gitignore(".git/info/exclude"), ["kept_definition"]),
    Case(".gitignore linked to /dev/zero", dev_zero_gitignore, ["kept_definition"]),
    Case(
        "nearsym/didFocus naming a FIFO",
        with_fifo_source,
        ["kept_definition"],
        after=focus_fifo,
    ),
    Case(
        "workspace/symbol's textDocument naming a FIFO",
        with_fifo_source,
        ["kept_definition"],
        params=lambda root: {"textDocument": {"uri": uri(root / "pipe.py")}},
    ),
    Case(
        "a lone backslash in .gitignore",
        gitignore("\\\nskipped.py\n"),
        ["kept_definition", "long_named_definition"],
        ["skipped_definition"],
        message=".gitignore:1:",
    ),
    Case(
        "an invalid range in .gitignore",
        gitignore("[z-a]\nskipped.py\n"),
        ["kept_definition"],
        ["skipped_definition"],
        message="invalid range",
    ),
    Case(
        "a .gitignore line a backtracking matcher never finishes",
        gitignore("*a" * 30 + "*b\n" + "**/" * 40 + "x\nskipped.py\n"),
        ["kept_definition", "long_named_definition"],
        ["skipped_definition"],
    ),
    Case(
        "/* in a .gitignore outside a repository",
        top_level_star(in_repo=False),
        ["schedule_definition"],
    ),
    Case(
        "/* in a .gitignore inside a repository",
        top_level_star(in_repo=True),
        [],
        ["schedule_definition"],
        message=".gitignore:2: /*",
    ),
    Case(
        "/* outside a repository with requireGit false",
        top_level_star(in_repo=False),
        [],
        ["schedule_definition"],
        options={"requireGit": False},
    ),
    Case(
        "file names that are not UTF-8",
        not_utf8_names,
        ["bytes_named_definition", "inner_bytes_definition"],
    ),
    Case("a NUL byte late in a .py file", late_nul, ["before_nul", "after_nul"]),
    Case(
        "100,000 unclosed brackets in a .py file",
        unclosed_brackets,
        ["kept_definition"],
        ["lost_after_brackets"],
    ),
    Case(
        "a made-up .lua file whose parse does not end in useful time",
        made_up_lua,
        ["kept_definition", "lua_kept"],
        ["lost_after_brackets"],
    ),
    Case(
        "a watch event through a link out of the root",
        link_out_of_root,
        ["kept_definition"],
        ["secret_at_start", "secret_after_edit"],
        options={"followSymlinks": True},
        after=edit_through_the_link,
        client_watches=True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_hostile_workspace(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no git configuration of the user's
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "ws"
    root.mkdir()
    case.build(root)
    client = await RawClient.start()
    try:
        capabilities: dict[str, Any] = {"window": {"workDoneProgress": True}}
        if case.client_watches:
            capabilities["workspace"] = {"didChangeWatchedFiles": {"dynamicRegistration": True}}
        await client.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}],
                "capabilities": capabilities,
                "initializationOptions": {"cache": False, **case.options},
            },
            timeout=30,
        )
        client.notify("initialized", {})
        await index_end(client)
        await case.after(client, root)
        extra = case.params(root)
        for name in case.found:
            assert name in await names(client, name, **extra), name
        for name in case.missing:
            assert name not in await names(client, name, **extra), name
        if case.message is not None:
            assert any(case.message in m for m in messages(client)), messages(client)
        if case.name == "file names that are not UTF-8":
            reply = await client.request(
                "workspace/symbol", {"query": "bytes_definition"}, timeout=30
            )
            uris = sorted(r["location"]["uri"] for r in reply["result"])
            assert [u.rsplit("/ws/", 1)[1] for u in uris] == ["%FF%FE.py", "dir%FFname/inner.py"]
    finally:
        await client.close()
