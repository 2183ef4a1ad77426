"""The shared index (PostgreSQL): plans and figures.

    python tests/bench/shared_index.py --explain URL
        EXPLAIN of each retrieval tier on the database at URL (markdown).

    python tests/bench/shared_index.py --pool URL [--queries FILE] [--count N]
        p50/p99 of the shared pool alone (`shared_query.retrieve`, 500 rows),
        and the database's size per definition.

    python tests/bench/shared_index.py --lsp URL --root DIR [--budget MS]
        p50/p99 of the merged answer over LSP: `nearsym serve` with DIR as
        its workspace folder and `sharedIndex` URL, against the same server
        without it; and how many answers the shared pool joined in time.

URL is a libpq URL of a database `nearsym publish` wrote.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from nearsym.index.shared_query import retrieve, tier_select, tiers

EXPLAINED = [
    ("exact", "render_template"),
    ("prefix", "render_temp"),
    ("initials", "wsp"),
    ("substring", "user_str"),
    ("subsequence", "gus"),
    ("path words", "syncqueue push"),
    ("owner", "Deferred"),
    ("exact", "Deferred.addCallback"),
]
"""(tier, query): one query per shape, the tier of it that is shown."""


def explain(conn: psycopg.Connection[Any], shapes: list[tuple[str, str]] = EXPLAINED) -> str:
    out = []
    for want, query in shapes:
        chosen = tiers(query)
        params: dict[str, Any] = {}
        for tier in chosen:
            params.update(tier.params)
        params.update(skip=[], n=500)
        for n, tier in enumerate(chosen):
            if tier.name != want:
                continue
            text = tier_select(n, tier, "owner" in chosen[0].params)
            plan = [r[0] for r in conn.execute("EXPLAIN (COSTS OFF) " + text, params)]
            out.append(f"### {want}: `{query}`\n\n```\n" + "\n".join(plan) + "\n```\n")
    return "\n".join(out)


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def sample_queries(conn: psycopg.Connection[Any], count: int, seed: int = 19) -> list[str]:
    """A seeded mix drawn from the published names: whole names, prefixes,
    initials and qualified names, as people type them."""
    rng = random.Random(seed)
    names = [
        (r[0], r[1])
        for r in conn.execute(
            "SELECT name, container FROM nearsym.definition TABLESAMPLE SYSTEM (1) REPEATABLE (19)"
            " LIMIT 20000"
        )
    ]
    if not names:
        return []
    out = []
    for _ in range(count):
        name, container = rng.choice(names)
        shape = rng.randrange(4)
        if shape == 0 or len(name) < 4:
            out.append(name)
        elif shape == 1:
            out.append(name[: rng.randint(3, len(name))])
        elif shape == 2:
            from nearsym.index.shared_columns import initials

            out.append(initials(name) if len(initials(name)) >= 2 else name)
        else:
            out.append(f"{container}.{name}" if container else name[:3])
    return out


def pool_figures(conn: psycopg.Connection[Any], queries: list[str], rounds: int = 2) -> str:
    times: list[float] = []
    for _ in range(rounds):
        for query in queries:
            started = time.perf_counter()
            retrieve(conn, query, 500)
            times.append(time.perf_counter() - started)
    ms = [t * 1000 for t in times]
    (defs,) = conn.execute("SELECT count(*) FROM nearsym.definition").fetchone() or (0,)
    (size,) = conn.execute(
        "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'nearsym' AND c.relkind = 'r'"
    ).fetchone() or (0,)
    per = int(size) / max(1, int(defs))
    return (
        f"shared pool: {len(ms)} queries, p50 {statistics.median(ms):.1f} ms,"
        f" p99 {percentile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms\n"
        f"database: {int(defs)} definitions, {int(size) / 2**20:.1f} MiB with indexes,"
        f" {per:.0f} bytes/definition"
    )


async def lsp_figures(url: str | None, root: Path, queries: list[str], budget: int) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from e2e.rawclient import RawClient

    client = await RawClient.start(cwd=str(root))
    options: dict[str, Any] = {"sharedIndexBudgetMs": budget}
    if url:
        options["sharedIndex"] = url
    params = {
        "processId": None,
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        "capabilities": {"window": {"workDoneProgress": True}},
        "initializationOptions": options,
    }
    try:
        await client.request("initialize", params)
        client.notify("initialized", {})
        # Until the index is done (progress ended) and the shared pool answers.
        for _ in range(600):
            ended = any(
                n.get("method") == "$/progress" and n["params"]["value"].get("kind") == "end"
                for n in client.notifications
            )
            if ended:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(3)  # the shared index's first connection
        times: list[float] = []
        joined = 0
        for query in queries:
            started = time.perf_counter()
            answer = await client.request("workspace/symbol", {"query": query}, timeout=60)
            times.append((time.perf_counter() - started) * 1000)
            rows = answer.get("result") or []
            joined += any(not str(r["location"]["uri"]).startswith(root.as_uri()) for r in rows)
    finally:
        await client.close()
    label = "merged answer" if url else "local answer "
    return (
        f"{label} over LSP: {len(times)} queries, p50 {statistics.median(times):.1f} ms,"
        f" p99 {percentile(times, 0.99):.1f} ms, max {max(times):.1f} ms;"
        f" shared rows in {joined} answers"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--explain", metavar="URL")
    parser.add_argument("--pool", metavar="URL")
    parser.add_argument("--queries", metavar="FILE")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--lsp", metavar="URL")
    parser.add_argument("--root", metavar="DIR", help="the workspace folder for --lsp")
    parser.add_argument("--budget", type=int, default=150, help="sharedIndexBudgetMs for --lsp")
    args = parser.parse_args()
    if args.explain:
        with psycopg.connect(args.explain, autocommit=True) as conn:
            print(explain(conn))
    if args.pool:
        with psycopg.connect(args.pool, autocommit=True) as conn:
            if args.queries:
                queries = [q for q in Path(args.queries).read_text().splitlines() if q.strip()]
            else:
                queries = sample_queries(conn, args.count)
            print(pool_figures(conn, queries))
    if args.lsp:
        if not args.root:
            parser.error("--lsp needs --root")
        with psycopg.connect(args.lsp, autocommit=True) as conn:
            if args.queries:
                queries = [q for q in Path(args.queries).read_text().splitlines() if q.strip()]
            else:
                queries = sample_queries(conn, args.count)
        root = Path(args.root).resolve()
        print(asyncio.run(lsp_figures(None, root, queries, args.budget)))
        print(asyncio.run(lsp_figures(args.lsp, root, queries, args.budget)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
