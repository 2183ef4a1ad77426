"""A soak of `nearsym serve` over stdio: queries and edits for N minutes.

    python tests/bench/soak.py DIR [--minutes 10] [--seed 1] [--every 30]

DIR is copied to a scratch folder (it is written to). The server indexes
it with its own file watcher, then, until the time is up, a seeded mix:
queries (names found in the tree, their prefixes, typos, the empty query,
the open file's neighbourhood), and between them edits: a buffer typed in
(didChange), files written, changed and deleted on disk, a `.gitignore`
saved (a re-walk). Every `--every` seconds it prints the resident memory
of the whole process tree (server, watcher, pool), and at the end the
query latency percentiles, the tree's PSS a second after the index and a
second after the soak's last query (with `--definitions N`, per
definition: `nearsym bench` prints N), and the error count (0 expected:
any error response, timeout or unexpected answer counts).

Not run by CI except as a short smoke run (tests/e2e/test_soak.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import contextlib

from e2e.rawclient import RawClient
from nearsym.tools.bench import tree_memory
from processes import descendants

NAME = re.compile(rb"\b(?:def|class|function|func|fn|struct|interface|type)\s+([A-Za-z_]\w{2,})")
SOURCE = {".py", ".js", ".ts", ".go", ".rs", ".java", ".c", ".rb", ".tsx"}


def rss_of_tree(pid: int) -> int:
    """Resident bytes of `pid` and every process below it."""
    total = 0
    for p in [pid, *descendants(pid)]:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def names_in(root: Path, limit: int = 20000) -> tuple[list[str], list[Path]]:
    names: list[str] = []
    files: list[Path] = []
    for folder, dirs, found in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(found):
            path = Path(folder) / name
            if path.suffix not in SOURCE:
                continue
            files.append(path)
            if len(names) < limit:
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    names.extend(m.decode() for m in NAME.findall(path.read_bytes()[:200_000]))
    return names, files


@dataclass
class Figures:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    edits: dict[str, int] = field(default_factory=dict)
    rss: list[tuple[float, int]] = field(default_factory=list)
    indexed_pss: int = 0
    """The tree's PSS a second after the index's progress ended."""
    quiet_pss: int = 0
    """The tree's PSS a second after the soak's last query."""
    queries: list[tuple[float, str, str, float]] = field(default_factory=list)
    """Each query: its latency (s), its text, the kind of the edit before
    it and how long before it that edit was made (s; -1 without one)."""


def percentile(sorted_ms: list[float], q: float) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, round(q * (len(sorted_ms) - 1)))]


def query_for(rng: random.Random, names: list[str]) -> str:
    name = rng.choice(names)
    roll = rng.random()
    if roll < 0.4:
        return name
    if roll < 0.7:
        return name[: rng.randint(1, len(name))]
    if roll < 0.85:  # a typo
        i = rng.randrange(len(name))
        return name[:i] + rng.choice("abcdefghijklmnopqrstuvwxyz_") + name[i + 1 :]
    if roll < 0.95:
        return "".join(w[:2] for w in re.split(r"_|(?=[A-Z])", name) if w)
    return ""


EDITS = ("type", "type", "write", "change", "delete", "gitignore")


async def soak(
    source: Path,
    minutes: float,
    seed: int,
    every: float,
    quiet: bool = False,
    edits: tuple[str, ...] = EDITS,
) -> Figures:
    rng = random.Random(seed)
    scratch = Path(tempfile.mkdtemp(prefix="nearsym-soak-"))
    root = scratch / source.name
    shutil.copytree(source, root, symlinks=True)
    names, files = names_in(root)
    if not names:
        raise SystemExit(f"no definitions found under {source}")
    out = (lambda *a: None) if quiet else print
    figures = Figures()
    client = await RawClient.start(cwd=str(scratch))
    started = time.perf_counter()
    try:
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {"window": {"workDoneProgress": True}},
            },
            timeout=60,
        )
        client.notify("initialized", {})
        while not any(
            n.get("method") == "$/progress" and n["params"]["value"].get("kind") == "end"
            for n in client.notifications
        ):
            await asyncio.sleep(0.1)
        indexed = time.perf_counter() - started
        await asyncio.sleep(1.0)
        figures.indexed_pss = tree_memory(client.process.pid).pss
        out(
            f"{len(files)} source files, {len(names)} names; indexed in "
            f"{indexed:.1f}s; soaking {minutes:g} min (seed {seed})"
        )
        out(f"{'minute':>7} {'tree RSS MB':>12} {'queries':>8} {'edits':>6} {'errors':>7}")
        buffer = root / "soak_buffer.py"
        buffer.write_text("")
        uri = buffer.as_uri()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 0, "text": ""}},
        )
        typed = ""
        version = 0
        last_edit = ("", -1.0)
        made: list[Path] = []
        t0 = time.perf_counter()
        next_sample = 0.0
        while (now := time.perf_counter() - t0) < minutes * 60:
            if now >= next_sample:
                figures.rss.append((now, rss_of_tree(client.process.pid)))
                out(
                    f"{now / 60:7.1f} {figures.rss[-1][1] / 2**20:12.1f} "
                    f"{len(figures.latencies):8} {sum(figures.edits.values()):6} "
                    f"{len(figures.errors):7}"
                )
                next_sample += every
            if edits and rng.random() < 0.15:
                kind = rng.choice(edits)
                last_edit = (kind, time.perf_counter())
                figures.edits[kind] = figures.edits.get(kind, 0) + 1
                if kind == "type":
                    version += 1
                    typed += f"def soak_typed_{version}():\n    pass\n"
                    if len(typed) > 20_000:
                        typed = ""
                    client.notify(
                        "textDocument/didChange",
                        {
                            "textDocument": {"uri": uri, "version": version},
                            "contentChanges": [{"text": typed}],
                        },
                    )
                elif kind == "write":
                    path = root / f"soak_made_{len(made)}.py"
                    path.write_text(f"def soak_made_{len(made)}():\n    return 1\n")
                    made.append(path)
                elif kind == "change" and files:
                    path = rng.choice(files)
                    if path.exists():
                        with path.open("a") as f:
                            f.write(f"\n# soak {now:.1f}\n")
                elif kind == "delete" and made:
                    made.pop(rng.randrange(len(made))).unlink(missing_ok=True)
                elif kind == "gitignore":
                    ignore = root / ".gitignore"
                    ignore.write_text(f"# soak {now:.1f}\n*.soakignored\n")
            query = query_for(rng, names)
            q0 = time.perf_counter()
            try:
                reply = await client.request("workspace/symbol", {"query": query}, timeout=30)
            except TimeoutError:
                figures.errors.append(f"timeout: {query!r}")
                continue
            figures.latencies.append(time.perf_counter() - q0)
            since = q0 - last_edit[1] if last_edit[1] >= 0 else -1.0
            figures.queries.append((figures.latencies[-1], query, last_edit[0], since))
            if "error" in reply or not isinstance(reply.get("result"), list):
                figures.errors.append(f"{query!r}: {reply}")
            await asyncio.sleep(rng.uniform(0.0, 0.05))
        figures.rss.append((time.perf_counter() - t0, rss_of_tree(client.process.pid)))
        await asyncio.sleep(1.0)
        figures.quiet_pss = tree_memory(client.process.pid).pss
    finally:
        code = await client.close()
        if code != 0:
            figures.errors.append(f"exit code {code}")
        shutil.rmtree(scratch, ignore_errors=True)
    return figures


def slowest(figures: Figures, count: int) -> str:
    """The `count` slowest queries, each with the edit made before it."""
    lines = []
    for seconds, query, kind, since in sorted(figures.queries, reverse=True)[:count]:
        before = f"{kind} {since * 1000:.0f} ms before" if kind else "no edit before"
        lines.append(f"  {seconds * 1000:7.1f} ms  {query!r:32} {before}")
    return "\n".join(lines)


def report(figures: Figures, definitions: int | None = None) -> str:
    ms = sorted(s * 1000 for s in figures.latencies)
    lines = [
        f"queries {len(ms)}, edits {sum(figures.edits.values())} {dict(sorted(figures.edits.items()))}",
        f"latency ms: p50 {percentile(ms, 0.5):.1f}  p90 {percentile(ms, 0.9):.1f}  p99 {percentile(ms, 0.99):.1f}  max {ms[-1]:.1f}"
        if ms
        else "no queries",
    ]
    after_minute = [r for t, r in figures.rss if t >= 60]
    if after_minute:
        base, last, peak = after_minute[0], figures.rss[-1][1], max(after_minute)
        lines.append(
            f"tree RSS MB: after the first minute {base / 2**20:.1f}, end {last / 2**20:.1f} "
            f"({100 * (last - base) / base:+.1f}%), peak {peak / 2**20:.1f}"
        )
    if figures.quiet_pss:
        per = ""
        if definitions:
            per = (
                f" ({figures.indexed_pss / definitions:.0f} and"
                f" {figures.quiet_pss / definitions:.0f} bytes/definition)"
            )
        lines.append(
            f"tree PSS MB a second after the index {figures.indexed_pss / 1e6:.0f},"
            f" a second after the last query {figures.quiet_pss / 1e6:.0f}{per}"
        )
    lines.append(f"errors {len(figures.errors)}")
    lines.extend(f"  {e[:300]}" for e in figures.errors[:20])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--every", type=float, default=30.0, help="seconds between RSS lines")
    parser.add_argument("--definitions", type=int, help="the tree's definitions (for bytes each)")
    parser.add_argument(
        "--slowest",
        type=int,
        default=0,
        help="print this many slowest queries, with the edit before each",
    )
    parser.add_argument(
        "--edits",
        default=",".join(EDITS),
        help="the kinds of edit drawn from, comma-separated (repeat one to weigh it; empty: none)",
    )
    args = parser.parse_args(argv)
    edits = tuple(e for e in args.edits.split(",") if e)
    if unknown := set(edits) - set(EDITS):
        parser.error(f"unknown edits: {', '.join(sorted(unknown))}")
    figures = asyncio.run(soak(args.root, args.minutes, args.seed, args.every, edits=edits))
    print(report(figures, args.definitions))
    if args.slowest:
        print(slowest(figures, args.slowest))
    return 1 if figures.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
