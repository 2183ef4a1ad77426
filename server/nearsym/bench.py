"""`nearsym bench`: figures for a tree, measured, printed; never asserted.

Cold index (wall and CPU seconds, MB/s, definitions/s), resident memory and
bytes per definition, and query latency (p50 / p99 / max) over a query mix:
in process, and over LSP stdio against `nearsym serve`. With `--vs-ctags`,
`ctags -R` over the same tree in the same run, and the ratios.

The query mix is read from `--queries FILE` (one query a line) or drawn
from the index with a fixed seed, so two runs on the same tree ask the same
questions: every shape people type (one or two characters, prefixes, whole
names, camel-hump and snake initials, subsequences, `Class.method`).
"""

from __future__ import annotations

import asyncio
import contextlib
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
from dataclasses import dataclass, field

from nearsym.config import Config
from nearsym.index import SymbolIndex
from nearsym.match import split_words
from nearsym.model import Symbol
from nearsym.search import Namespace, answer
from nearsym.workspace import index_root

SEED = 20261130
"""Fixed: the drawn query mix is the same on every run over the same tree."""


@dataclass(slots=True)
class Figures:
    lines: list[str] = field(default_factory=list)

    def add(self, label: str, value: str) -> None:
        self.lines.append(f"{label:38} {value}")


def query_mix(symbols: list[Symbol], count: int) -> list[str]:
    """`count` queries of every shape, drawn with a fixed seed."""
    rng = random.Random(SEED)
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


def rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def tree_bytes(roots: list[str], index: list[SymbolIndex]) -> int:
    total = 0
    for root, idx in zip(roots, index, strict=True):
        for rel in idx.files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, *rel.split("/")))
    return total


async def lsp_latency(roots: list[str], queries: list[str]) -> tuple[float, list[float]]:
    """Index time and per-query latency through `nearsym serve` over stdio."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nearsym", "serve",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    ids = iter(range(1, 1_000_000))

    def send(message: dict[str, object]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def read() -> dict[str, object]:
        header = await stdout.readuntil(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        message: dict[str, object] = json.loads(await stdout.readexactly(length))
        return message

    async def request(method: str, params: object) -> dict[str, object]:
        msg_id = next(ids)
        send({"id": msg_id, "method": method, "params": params})
        while True:
            message = await read()
            if message.get("id") == msg_id and "method" not in message:
                return message
            if "id" in message and "method" in message:
                send({"id": message["id"], "result": None})

    started = time.perf_counter()
    folders = [{"uri": "file://" + r, "name": os.path.basename(r)} for r in roots]
    await request(
        "initialize",
        {"processId": None, "rootUri": folders[0]["uri"], "workspaceFolders": folders,
         "capabilities": {"window": {"workDoneProgress": True}}},
    )  # fmt: skip
    send({"method": "initialized", "params": {}})
    while True:  # until the index's progress ends
        message = await read()
        if "id" in message and "method" in message:
            send({"id": message["id"], "result": None})
        value = message.get("params")
        inner = value.get("value") if isinstance(value, dict) else None
        if isinstance(inner, dict) and inner.get("kind") == "end":
            break
    indexed = time.perf_counter() - started
    samples = []
    for query in queries:
        t0 = time.perf_counter()
        await request("workspace/symbol", {"query": query})
        samples.append(time.perf_counter() - t0)
    await request("shutdown", None)
    send({"method": "exit", "params": None})
    await process.wait()
    return indexed, samples


def run(roots: list[str], queries_file: str | None, count: int, vs_ctags: bool, lsp: bool) -> str:
    figures = Figures()
    roots = [os.path.abspath(r) for r in roots]
    rss_before = rss_bytes()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    indexes = []
    for root in roots:
        idx = SymbolIndex(root)
        index_root(root, idx, Config())
        indexes.append(idx)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    namespaces = [Namespace(r, i) for r, i in zip(roots, indexes, strict=True)]
    symbols = [s for i in indexes for s in i.all_symbols()]
    files = sum(len(i.files) for i in indexes)
    size = tree_bytes(roots, indexes)
    answer(namespaces, "warm", 100)  # builds the name tables
    rss = rss_bytes() - rss_before
    figures.add("roots", ", ".join(roots))
    figures.add("files / definitions", f"{files} / {len(symbols)}")
    figures.add("cold index wall / CPU", f"{wall:.2f} s / {cpu:.2f} s")
    figures.add(
        "throughput",
        f"{size / 1e6 / max(wall, 1e-9):.2f} MB/s, {len(symbols) / max(wall, 1e-9):,.0f} definitions/s",
    )
    figures.add(
        "resident memory (index)",
        f"{rss / 1e6:.0f} MB, {rss / max(1, len(symbols)):.0f} bytes/definition",
    )
    if queries_file:
        with open(queries_file, encoding="utf-8") as f:
            queries = [line.rstrip("\n") for line in f if line.strip()]
    else:
        queries = query_mix(symbols, count)
    samples = []
    for query in queries:
        t0 = time.perf_counter()
        answer(namespaces, query, 100)
        samples.append(time.perf_counter() - t0)
    figures.add(f"query, in process ({len(queries)})", percentiles(samples))
    if lsp:
        indexed, over_lsp = asyncio.run(lsp_latency(roots, queries))
        figures.add("initialize -> index done (LSP)", f"{indexed:.2f} s")
        figures.add(f"query, LSP stdio ({len(queries)})", percentiles(over_lsp))
    if vs_ctags:
        if shutil.which("ctags") is None:
            figures.add("ctags", "not installed (apt-get install universal-ctags)")
        else:
            t0, c0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
            with tempfile.TemporaryDirectory() as scratch:
                for n, root in enumerate(roots):
                    out = os.path.join(scratch, f"tags{n}")
                    subprocess.run(["ctags", "-R", "-f", out, "."], cwd=root, check=True)
            ctags_wall = time.perf_counter() - t0
            ctags_cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - c0
            figures.add("ctags -R wall / CPU", f"{ctags_wall:.2f} s / {ctags_cpu:.2f} s")
            figures.add("nearsym / ctags (wall)", f"{wall / max(ctags_wall, 1e-9):.1f} x")
    return "\n".join(figures.lines)
