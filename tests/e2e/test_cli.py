"""The command line's edges: bad arguments are errors (exit 2, a message,
no traceback), Ctrl-C stops a search at once, the progress bar shows on a
terminal only; and `nearsym serve --tcp`."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..processes import descendants, running
from .trees import write_tree

pytestmark = pytest.mark.e2e

NEARSYM = [sys.executable, "-m", "nearsym"]


def search(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*NEARSYM, "search", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("cli") / "ws", 5)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--limit", "0"], "--limit 0: must be at least 1"),
        (["--limit", "-1"], "--limit -1: must be at least 1"),
        (["--offset", "-3"], "--offset -3: must be 0 or more"),
        (["--from", "/no/such/file.py"], "--from /no/such/file.py: no such file"),
    ],
)
def test_bad_arguments_are_errors(small: Path, args: list[str], message: str) -> None:
    done = search("gen", "--root", str(small), "--no-cache", *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_root_without_source_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "README.txt").write_text("no code here\n")
    for root in (empty, notes):
        done = search("anything", "--root", str(root), "--no-cache")
        assert done.returncode == 2, done
        assert "no source files to index" in done.stderr
        assert "no definition matches" not in done.stderr


def test_an_unreadable_root_is_an_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "a.py").write_text("def hidden():\n    pass\n")
    locked.chmod(0)
    try:
        command = [*NEARSYM, "search", "hidden", "--root", str(locked), "--no-cache"]
        if os.geteuid() == 0:  # root reads anything: search as nobody in a user namespace
            if subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode:
                pytest.skip("running as root without user namespaces")
            command = ["unshare", "-U", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done
        assert "cannot be read" in done.stderr and "Traceback" not in done.stderr
    finally:
        locked.chmod(0o755)


def test_ctrl_c_stops_a_search_at_once(tmp_path: Path) -> None:
    """Six runs, as the report had it: each ends within a second of SIGINT,
    with 130, its helpers gone, and no traceback nor EBADF message."""
    root = write_tree(tmp_path / "big", 3000)
    for run in range(6):
        process = subprocess.Popen(
            [*NEARSYM, "search", "gen_1_1", "--root", str(root), "--no-cache"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while len(descendants(process.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)  # until the pool runs
        time.sleep(0.2 * run)
        tree = {process.pid, *descendants(process.pid)}
        process.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, err = process.communicate(timeout=30)
        while any(running(p) for p in tree) and time.monotonic() - started < 10:
            time.sleep(0.01)
        seconds = time.monotonic() - started
        print(f"run {run}: ended {seconds * 1000:.0f} ms after SIGINT")
        text = err.decode()
        assert process.returncode == 130, text
        assert "Traceback" not in text and "Bad file descriptor" not in text, text
        assert [p for p in tree if running(p)] == []
        assert seconds < 1.0


def test_a_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    # The bar is drawn at the first report (before any file is parsed), then
    # at most every 0.1 s: a tree of a dozen tasks (CHUNK files each) for
    # the pool is enough, and indexing it twice stays short.
    root = write_tree(tmp_path / "ws", 300)
    parent, child = pty.openpty()
    process = subprocess.Popen(
        [*NEARSYM, "search", "gen_1_1", "--root", str(root), "--no-cache"],
        stdout=subprocess.PIPE,
        stderr=child,
    )
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # the terminal closed: the command is done
            break
        if not chunk:
            break
        seen += chunk
    out, _ = process.communicate(timeout=60)
    os.close(parent)
    assert process.returncode == 0
    assert b"gen_1_1" in out
    assert b"\rnearsym: indexing" in seen and b"/300 files" in seen, seen[-500:]
    piped = search("gen_1_1", "--root", str(root), "--no-cache")
    assert "indexing" not in piped.stderr


# -- serve --tcp -------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("address", ["localhost:notaport", "127.0.0.1:70000", "0", "x:"])
def test_a_bad_tcp_address_is_an_error(address: str) -> None:
    done = subprocess.run(
        [*NEARSYM, "serve", "--tcp", address], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done
    assert "port" in done.stderr and "Traceback" not in done.stderr


def test_a_port_in_use_is_an_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [*NEARSYM, "serve", "--tcp", str(port)], capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2, done
    assert "cannot listen" in done.stderr and "Traceback" not in done.stderr


async def lsp(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: bytes) -> bytes:
    writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()
    header = await reader.readuntil(b"\r\n\r\n")
    length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
    return await reader.readexactly(length)


async def test_tcp_on_loopback_survives_a_probe(tmp_path: Path) -> None:
    """`--tcp PORT` listens on 127.0.0.1 only; a client that connects and
    closes (a port probe) leaves it serving the next one."""
    root = write_tree(tmp_path / "ws", 5)
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        *NEARSYM, "serve", "--tcp", str(port), stderr=asyncio.subprocess.PIPE
    )
    try:
        assert server.stderr is not None
        line = await asyncio.wait_for(server.stderr.readline(), 60)
        assert f"listening on 127.0.0.1:{port}".encode() in line, line
        _, probe = await asyncio.open_connection("127.0.0.1", port)
        probe.close()
        await asyncio.sleep(0.3)
        assert server.returncode is None
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        init = (
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,'
            b'"rootUri":"%s","capabilities":{}}}' % root.as_uri().encode()
        )
        assert b'"capabilities"' in await lsp(reader, writer, init)
        shutdown = b'{"jsonrpc":"2.0","id":2,"method":"shutdown"}'
        assert b'"result": null' in await lsp(reader, writer, shutdown)
        writer.write(b'Content-Length: 33\r\n\r\n{"jsonrpc":"2.0","method":"exit"}')
        await writer.drain()
        assert await asyncio.wait_for(server.wait(), 10) == 0
        assert b"Traceback" not in await server.stderr.read()
    finally:
        if server.returncode is None:
            server.kill()


def test_tcp_on_another_address_warns() -> None:
    port = free_port()
    process = subprocess.Popen(
        [*NEARSYM, "serve", "--tcp", f"0.0.0.0:{port}"], stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert "warning" in first and "not loopback" in first, first
    finally:
        process.kill()
        process.wait()


def test_index_stats_per_language_and_per_ignore_file(tmp_path: Path) -> None:
    """`nearsym index --stats --json` on a tree large enough for the
    process pool: per language its files, definitions and CPU seconds (the
    workers' time shared among their files), per ignore file what its rules
    dropped."""
    root = tmp_path / "ws"
    (root / "gen").mkdir(parents=True)
    (root / "pkg").mkdir()
    for n in range(60):
        (root / "pkg" / f"m{n}.py").write_text(f"class C{n}:\n    def f{n}(self): pass\n")
    for n in range(30):
        (root / "pkg" / f"g{n}.go").write_text(f"package pkg\n\nfunc G{n}() {{}}\n")
    for n in range(5):
        (root / "gen" / f"x{n}.py").write_text("def generated(): pass\n")
    (root / "skip.py").write_text("def skipped(): pass\n")
    (root / ".ignore").write_text("gen/\nskip.py\n")
    done = subprocess.run(
        [*NEARSYM, "index", "--root", str(root), "--stats", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    python, go = figures["languages"]["python"], figures["languages"]["go"]
    assert (python["files"], python["definitions"]) == (60, 120)
    assert (go["files"], go["definitions"]) == (30, 30)
    assert python["kinds"] == {"class": 60, "method": 60}
    assert python["seconds"] > 0 and go["seconds"] > 0
    assert figures["ignored"] == {".ignore": {"files": 1, "folders": 1}}


@pytest.mark.parametrize("command", ["index", "search"])
def test_a_command_on_the_pool_ends_without_a_traceback(tmp_path: Path, command: str) -> None:
    """The pool's workers, forkserver and resource tracker are stopped
    before the interpreter ends: stopped from a thread racing the exit, the
    tracker was started again by a semaphore collected at exit, which it
    had never heard of (`KeyError: '/mp-...'` on stderr, 3 runs in 4 on
    Go's library)."""
    root = write_tree(tmp_path / "ws", 400, defs=10)
    args = (
        ["index", "--root", str(root)]
        if command == "index"
        else ["search", "gen_1_1", "--root", str(root), "--no-cache"]
    )
    for _ in range(3):
        run = subprocess.run(
            [sys.executable, "-m", "nearsym", *args], capture_output=True, text=True, timeout=300
        )
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr and "Error" not in run.stderr, run.stderr


RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "client-capabilities"


@pytest.mark.parametrize(
    ("client", "asked"),
    [
        (None, "window/workDoneProgress/create"),
        (
            "vscode-1.100.3-languageclient-11.0.0.json",
            "client/registerCapability, window/workDoneProgress/create",
        ),
    ],
)
def test_bench_starts_its_servers_as_the_client_it_is_given(
    small: Path, client: str | None, asked: str
) -> None:
    """`nearsym bench --client FILE` starts each server with an editor's
    recorded `initialize` params: VS Code's watch files for the server,
    which then registers its watchers with the client."""
    extra = ["--client", str(RECORDED / client)] if client else []
    done = subprocess.run(
        [*NEARSYM, "bench", "--root", str(small), "--runs", "1", "--count", "7", *extra],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()

    def figure(label: str) -> str | None:
        return next((line[len(label) :].strip() for line in lines if line.startswith(label)), None)

    assert figure("client (initialize params)") == client
    for label in ("cold", "restarted"):
        assert figure(f"{label}: the server asked the client") == asked
        assert (figure(f"{label}: spawn -> index done") or "").endswith(" s")
