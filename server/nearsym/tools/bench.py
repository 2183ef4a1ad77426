"""`nearsym bench`: figures for a tree, measured, printed; never asserted.

Cold index (wall and CPU seconds, MB/s, definitions/s), resident memory and
bytes per definition, and query latency (p50 / p99 / max) over a query mix:
in process, and over LSP stdio against `nearsym serve`. Against a real
server, what a person pays: seconds from spawning it to its first answer
near the open file and to the end of its index, cold and restarted, and the
memory of its whole process tree (the server and every helper it started).
With `--vs-ctags`, `ctags -R` over the same tree in the same run, and the
ratios.

The query mix is read from `--queries FILE` (one query a line) or drawn
from the index with a fixed seed, so two runs on the same tree ask the same
questions: every shape people type (one or two characters, prefixes, whole
names, camel-hump and snake initials, subsequences, `Class.method`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nearsym.core.rank import clear_caches
from nearsym.core.words import split_words
from nearsym.index.allocator import configure, settle, settle_start_up
from nearsym.index.cache import Cache
from nearsym.index.namespace import Namespace
from nearsym.index.search import answer
from nearsym.index.store import SymbolIndex
from nearsym.workspace.coldstats import ColdStats
from nearsym.workspace.config import Config, index_key
from nearsym.workspace.indexer import index_into, save_snapshot
from nearsym.workspace.pool import Workers

SEED = 20261130
"""Fixed: the drawn query mix is the same on every run over the same tree."""


@dataclass(slots=True)
class Figures:
    lines: list[str] = field(default_factory=list)

    def add(self, label: str, value: str) -> None:
        self.lines.append(f"{label:38} {value}")


def query_mix(index: SymbolIndex, count: int) -> list[str]:
    """`count` queries of every shape, drawn with a fixed seed from a sample
    of the index's files."""
    rng = random.Random(SEED)
    files = sorted(index.files)
    sample = rng.sample(files, min(len(files), 400))
    symbols = [s for rel in sample for s in index.symbols_of(rel)]
    names = sorted({s.name for s in symbols if len(s.name) >= 3})
    owned = sorted({(s.container.rsplit(".", 1)[-1], s.name) for s in symbols if s.container})
    if not names:
        return []
    queries: list[str] = []
    shapes = ["short", "prefix3", "prefix5", "full", "initials", "subsequence", "qualified"]
    while len(queries) < count:
        shape = shapes[len(queries) % len(shapes)]
        name = rng.choice(names)
        if shape == "short":
            queries.append(name[: rng.choice([1, 2])].lower())
        elif shape == "prefix3":
            queries.append(name[:3])
        elif shape == "prefix5":
            queries.append(name[:5])
        elif shape == "full":
            queries.append(name)
        elif shape == "initials":
            words = split_words(name)
            queries.append("".join(w[0] for w in words).lower() if len(words) > 1 else name[:2])
        elif shape == "subsequence":
            queries.append(name[::2].lower())
        elif owned:
            owner, method = rng.choice(owned)
            queries.append(f"{owner}.{method[:4]}")
    return queries


def percentiles(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    if not ms:
        return "-"
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return f"p50 {statistics.median(ms):.1f} ms  p99 {p99:.1f} ms  max {ms[-1]:.1f} ms"


def tree_bytes(roots: list[str], index: list[SymbolIndex]) -> int:
    total = 0
    for root, idx in zip(roots, index, strict=True):
        for rel in idx.files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, *rel.split("/")))
    return total


@dataclass(frozen=True, slots=True)
class Memory:
    """What a process tree holds: the server and every descendant (the
    forkserver, pool workers, resource tracker, watcher helper)."""

    processes: int
    rss: int
    """Resident bytes summed over the tree (pages shared between processes
    counted in each)."""
    pss: int
    """Proportional set size summed over the tree: each shared page split
    between its sharers, so the sum is what the tree costs the machine."""


def tree_memory(pid: int) -> Memory:
    """`pid` and all its descendants, read from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: split after it
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    tree = [pid]
    for p in tree:
        tree.extend(children.get(p, ()))
    rss = pss = 0
    for p in tree:
        rss += _status_bytes(p, "VmRSS:")
        pss += _rollup_bytes(p, "Pss:")
    return Memory(len(tree), rss, pss)


def _status_bytes(pid: int, key: str) -> int:
    return _proc_bytes(pid, "status", key)


def _rollup_bytes(pid: int, key: str) -> int:
    return _proc_bytes(pid, "smaps_rollup", key)


def _proc_bytes(pid: int, name: str, key: str) -> int:
    """The `key:` line of `/proc/PID/NAME` in bytes (its value is in kB);
    0 for a process that is gone."""
    try:
        with open(f"/proc/{pid}/{name}", encoding="ascii") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass(slots=True)
class LspFigures:
    first_answer: float | None = None
    initialize_answered: float = 0.0
    """Seconds from spawning the server to its `initialize` reply (the
    interpreter's start and imports): first_answer minus this is the time
    from `initialize`."""
    indexed: float = 0.0
    """Seconds from spawning the server to the end of its index's progress."""
    rss: int = 0
    """The server's resident bytes a second after the index's progress ended
    (the cache may still be writing its snapshot)."""
    rss_settled: int = 0
    """The server's resident bytes after the query mix: steady use."""
    tree: Memory = field(default_factory=lambda: Memory(0, 0, 0))
    """The whole process tree a second after the index's progress ended."""
    tree_settled: Memory = field(default_factory=lambda: Memory(0, 0, 0))
    """The whole process tree right after the query mix's last answer."""
    tree_quiet: Memory = field(default_factory=lambda: Memory(0, 0, 0))
    """The whole process tree a second after the query mix, as a person
    pays between bursts of typing (the server trims its heap once quiet:
    `server.IDLE_TRIM`)."""
    samples: list[float] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)
    """The methods of the requests the server sent the client."""


class StdioClient:
    """A JSON-RPC client of `nearsym serve` on a child's pipes, as an editor
    is: the server's requests get a null result, every message read while
    waiting goes to `notice`."""

    def __init__(
        self, process: asyncio.subprocess.Process, notice: Callable[[dict[str, Any]], None]
    ) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin, self.stdout = process.stdin, process.stdout
        self.notice = notice
        self._ids = itertools.count(1)

    def send(self, message: dict[str, object]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def read(self) -> dict[str, Any]:
        header = await self.stdout.readuntil(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        message: dict[str, Any] = json.loads(await self.stdout.readexactly(length))
        return message

    def handle(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            self.send({"id": message["id"], "result": None})
        self.notice(message)

    async def request(self, method: str, params: object) -> dict[str, Any]:
        msg_id = next(self._ids)
        self.send({"id": msg_id, "method": method, "params": params})
        while True:
            message = await self.read()
            if message.get("id") == msg_id and "method" not in message:
                return message
            self.handle(message)


def progress_end(message: dict[str, Any]) -> bool:
    """Whether `message` ends a work-done progress (an index's)."""
    params = message.get("params")
    value = params.get("value") if isinstance(params, dict) else None
    return isinstance(value, dict) and value.get("kind") == "end"


async def lsp_latency(
    roots: list[str],
    queries: list[str],
    probe: tuple[str, str, str] | None,
    cache_dir: str,
    client_watches: bool = False,
    editor: dict[str, Any] | None = None,
) -> LspFigures:
    """`nearsym serve` over stdio, on the cache in `cache_dir`: time from
    `initialize` to the first answer that holds `probe` (open file, name,
    the file that defines it), to the end of indexing, its resident memory,
    then each query's latency. `client_watches` declares the client's file
    watching (as VS Code and Neovim 0.11 do); without it the server runs
    its own watcher. `editor` is an editor's recorded `initialize` params
    (its capabilities and `clientInfo`, as `--client` reads them): the start
    is then that editor's, file watching included; its work-done progress
    is declared whatever it says, as the end of the index is read from it.
    Between the first answer and the end of the index's
    progress the client sends nothing, as an editor does until someone
    types (a query every 0.2 s while the kernel indexed left the server
    12 MB larger: 402 against 390 MB, single runs)."""
    env = {**os.environ, "NEARSYM_CACHE_DIR": cache_dir}
    # An installed package has its bytecode (pip compiles it at install, and
    # Python writes it at the first import); a setting that forbids writing
    # it would charge every start with compiling nearsym again (0.12 s).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()  # what a person pays starts at the spawn
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nearsym", "serve",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env,
    )  # fmt: skip
    figures = LspFigures()
    progress_ended = asyncio.Event()

    def notice(message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            figures.asked.add(message["method"])
        if progress_end(message):
            progress_ended.set()

    client = StdioClient(process, notice)
    send, request = client.send, client.request

    folders = [{"uri": "file://" + r, "name": os.path.basename(r)} for r in roots]
    capabilities: dict[str, Any] = {"window": {"workDoneProgress": True}}
    if client_watches:
        capabilities["workspace"] = {"didChangeWatchedFiles": {"dynamicRegistration": True}}
    params: dict[str, Any] = {"processId": None, "rootUri": folders[0]["uri"],
                              "workspaceFolders": folders}  # fmt: skip
    if editor is not None:
        capabilities = dict(editor.get("capabilities") or {})
        capabilities["window"] = {**(capabilities.get("window") or {}), "workDoneProgress": True}
        params.update({k: v for k, v in editor.items() if k in ("clientInfo", "locale")})
    await request("initialize", {**params, "capabilities": capabilities})
    figures.initialize_answered = time.perf_counter() - started
    send({"method": "initialized", "params": {}})
    if probe is not None:
        open_file, name, defined_in = probe
        with open(open_file, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        uri = "file://" + open_file
        send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "", "version": 1, "text": text}}})  # fmt: skip
        want = "file://" + defined_in
        while figures.first_answer is None:
            reply = await request("workspace/symbol", {"query": name})
            rows = reply.get("result") or []
            assert isinstance(rows, list)
            if any(r.get("location", {}).get("uri") == want for r in rows):
                figures.first_answer = time.perf_counter() - started
            else:
                await asyncio.sleep(0.02)
    while not progress_ended.is_set():  # until the index's progress ends
        client.handle(await client.read())
    figures.indexed = time.perf_counter() - started
    await asyncio.sleep(1.0)  # the final merge runs after progress ends
    await request("workspace/symbol", {"query": "warm"})
    figures.rss = _status_bytes(process.pid, "VmRSS:")
    figures.tree = tree_memory(process.pid)
    for query in queries:
        t0 = time.perf_counter()
        await request("workspace/symbol", {"query": query})
        figures.samples.append(time.perf_counter() - t0)
    figures.rss_settled = _status_bytes(process.pid, "VmRSS:")
    figures.tree_settled = tree_memory(process.pid)
    await asyncio.sleep(1.0)
    figures.tree_quiet = tree_memory(process.pid)
    await request("shutdown", None)
    send({"method": "exit", "params": None})
    await process.wait()
    return figures


def cold_index(
    root: str, cache_dir: str | None, workers: int | None
) -> tuple[SymbolIndex, ColdStats, float, float]:
    """One index of `root` as the server builds it, then its snapshot
    written to the cache: (index, stats, wall seconds to a merged index,
    CPU seconds of this process and its workers)."""
    idx = SymbolIndex(root)
    pool = Workers(workers) if workers != 1 else None
    cache = Cache(root, cache_dir, index_key(Config())) if cache_dir is not None else None
    c0 = time.process_time()
    t0 = time.perf_counter()
    stats = index_into(idx, Config(), workers=pool, cache=cache)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0 + (pool.cpu_seconds() if pool is not None else 0.0)
    if pool is not None:
        pool.close(wait=True)
    if cache is not None:
        save_snapshot(idx, stats, cache)
        cache.close()
    return idx, stats, wall, cpu


def _probe(root: str, idx: SymbolIndex) -> tuple[str, str, str] | None:
    """An open file in the middle of the tree, and a name defined by another
    file of its folder."""
    files = sorted(idx.files)
    if not files:
        return None
    middle = files[len(files) // 2]
    folder = middle.rsplit("/", 1)[0] if "/" in middle else ""
    for rel in files:
        if rel != middle and (rel.rsplit("/", 1)[0] if "/" in rel else "") == folder:
            for s in idx.symbols_of(rel):
                if len(s.name) >= 4 and not s.local:
                    return (os.path.join(root, middle), s.name, os.path.join(root, rel))
    return None


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def run(
    roots: list[str],
    queries_file: str | None,
    count: int,
    vs_ctags: bool,
    lsp: bool,
    runs: int = 3,
    workers: int | None = None,
    client_file: str | None = None,
) -> str:
    configure()  # the allocator settings the server uses
    figures = Figures()
    root = os.path.abspath(roots[0])
    scratch = tempfile.mkdtemp(prefix="nearsym-bench-")
    colds: list[tuple[float, float]] = []
    warms: list[float] = []
    idx: SymbolIndex | None = None
    stats: ColdStats | None = None
    for n in range(runs):
        cache_dir = os.path.join(scratch, f"cold{n}")
        del idx
        idx, stats, wall, cpu = cold_index(root, cache_dir, workers)
        colds.append((wall, cpu))
    assert idx is not None and stats is not None
    for _ in range(runs):
        del idx
        idx, warm_stats, wall, _cpu = cold_index(root, os.path.join(scratch, "cold0"), workers)
        warms.append(wall)
    settle()  # as the server does after indexing,
    settle_start_up()  # and once its client is quiet
    definitions = len(idx)
    size = tree_bytes([root], [idx])
    wall = _median([c[0] for c in colds])
    cpu = _median([c[1] for c in colds])
    figures.add("root", root)
    figures.add("runs (medians below)", str(runs))
    figures.add("files / definitions", f"{stats.files} / {definitions}")
    figures.add("cold index wall / CPU (all processes)", f"{wall:.2f} s / {cpu:.2f} s")
    figures.add(
        "throughput",
        f"{size / 1e6 / max(wall, 1e-9):.2f} MB/s, {definitions / max(wall, 1e-9):,.0f} definitions/s",
    )
    figures.add(
        "warm start from the cache",
        f"{_median(warms):.2f} s ({warm_stats.from_snapshot} files from the snapshot,"
        f" {warm_stats.from_cache} file by file, {warm_stats.parsed} parsed)",
    )
    figures.add(
        "index columns",
        f"{idx.nbytes() / 1e6:.0f} MB, {idx.nbytes() / max(1, definitions):.1f} bytes/definition",
    )
    namespaces = [Namespace(root, idx)]
    if queries_file:
        with open(queries_file, encoding="utf-8") as f:
            queries = [line.rstrip("\n") for line in f if line.strip()]
    else:
        queries = query_mix(idx, count)
    answer(namespaces, "warm", 100)
    samples = []
    for _ in range(runs):
        clear_caches()  # each pass starts cold, like a new server
        for query in queries:
            t0 = time.perf_counter()
            answer(namespaces, query, 100)
            samples.append(time.perf_counter() - t0)
    figures.add(f"query, in process ({len(queries)} x {runs})", percentiles(samples))
    spawn_to_indexed: dict[str, float] = {}
    if lsp:
        probe = _probe(root, idx)

        editor = None
        if client_file is not None:
            with open(client_file, encoding="utf-8") as f:
                editor = json.load(f)
            figures.add("client (initialize params)", os.path.basename(client_file))

        def serve(n: int) -> LspFigures:
            return asyncio.run(
                lsp_latency([root], queries, probe, os.path.join(scratch, f"lsp{n}"), editor=editor)
            )

        lsp_runs = [serve(n) for n in range(runs)]
        # The same servers' caches, restarted: the everyday start.
        warm_runs = [serve(n) for n in range(runs)]
        for label, measured in (("cold", lsp_runs), ("restarted", warm_runs)):
            firsts = [r.first_answer for r in measured if r.first_answer is not None]
            if firsts:
                after = [r.first_answer - r.initialize_answered for r in measured if r.first_answer]
                figures.add(
                    f"{label}: first answer nearby",
                    f"{_median(firsts):.2f} s from spawning the server,"
                    f" {_median(after):.2f} s from its initialize reply",
                )
            asked = sorted(set().union(*(r.asked for r in measured)))
            figures.add(f"{label}: the server asked the client", ", ".join(asked) or "-")
            indexed = _median([r.indexed for r in measured])
            spawn_to_indexed[label] = indexed
            figures.add(f"{label}: spawn -> index done", f"{indexed:.2f} s")
            rss = _median([float(r.rss) for r in measured])
            settled = _median([float(r.rss_settled) for r in measured])
            figures.add(
                f"{label}: server resident memory",
                f"{settled / 1e6:.0f} MB, {settled / max(1, definitions):.0f} bytes/definition"
                f" after the query mix ({rss / 1e6:.0f} MB, {rss / max(1, definitions):.0f}"
                " at index end)",
            )
            for when, trees in (
                ("at index end", [r.tree for r in measured]),
                ("right after the query mix", [r.tree_settled for r in measured]),
                ("a second after the query mix", [r.tree_quiet for r in measured]),
            ):
                tree_rss = _median([float(t.rss) for t in trees])
                tree_pss = _median([float(t.pss) for t in trees])
                processes = _median([float(t.processes) for t in trees])
                figures.add(
                    f"{label}: process tree {when}",
                    f"{processes:.0f} processes, RSS {tree_rss / 1e6:.0f} MB"
                    f" ({tree_rss / max(1, definitions):.0f} bytes/definition),"
                    f" PSS {tree_pss / 1e6:.0f} MB ({tree_pss / max(1, definitions):.0f})",
                )
            over_lsp = [x for r in measured for x in r.samples]
            figures.add(
                f"{label}: query, LSP stdio ({len(queries)} x {runs})", percentiles(over_lsp)
            )
    if vs_ctags:
        if shutil.which("ctags") is None:
            figures.add("ctags", "not installed (apt-get install universal-ctags)")
        else:
            ctags: list[tuple[float, float]] = []
            for _ in range(runs):
                t0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
                out = os.path.join(scratch, "tags")
                subprocess.run(
                    ["ctags", "-R", "-f", out, "."], cwd=root, check=True, stderr=subprocess.DEVNULL
                )
                ctags.append(
                    (
                        time.perf_counter() - t0,
                        resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - c0,
                    )
                )
            c_wall = _median([c[0] for c in ctags])
            figures.add(
                "ctags -R wall / CPU", f"{c_wall:.2f} s / {_median([c[1] for c in ctags]):.2f} s"
            )
            figures.add("cold index / ctags (wall)", f"{wall / max(c_wall, 1e-9):.2f} x")
            figures.add("warm start / ctags (wall)", f"{_median(warms) / max(c_wall, 1e-9):.2f} x")
            for label, seconds in spawn_to_indexed.items():
                figures.add(
                    f"{label} server: spawn -> index done / ctags",
                    f"{seconds / max(c_wall, 1e-9):.2f} x",
                )
    shutil.rmtree(scratch, ignore_errors=True)
    return "\n".join(figures.lines)
