"""Index time and memory of `nearsym serve` with the `dependencies` setting
off and on: cold (an empty cache) and warm (the cache the cold run left).

    python tests/bench/dependencies.py WORKSPACE [--dependencies on|off|DIR ...]

Over stdio, as an editor: spawn, `initialize` with the workspace folder and
the setting, `initialized`; then wait for the workspace index's progress to
end (and, with dependencies, the dependencies' index's), ask one query, and
read the process tree's resident memory (the server, its forkserver and
pool workers, the watcher). Each figure is one run; the machine is shared,
so repeat before trusting a difference under 20 %.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from typing import Any

from nearsym.tools.bench import StdioClient, progress_end, tree_memory


async def serve(root: str, setting: Any, cache_dir: str, probe: str) -> dict[str, float]:
    env = {**os.environ, "NEARSYM_CACHE_DIR": cache_dir}
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nearsym", "serve",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env,
    )  # fmt: skip
    ends: list[float] = []
    client = StdioClient(
        process, lambda m: ends.append(time.perf_counter() - started) if progress_end(m) else None
    )
    send, request = client.send, client.request

    uri = "file://" + root
    await request(
        "initialize",
        {"processId": None, "rootUri": uri,
         "workspaceFolders": [{"uri": uri, "name": os.path.basename(root)}],
         "capabilities": {"window": {"workDoneProgress": True}},
         "initializationOptions": {"dependencies": setting}},
    )  # fmt: skip
    send({"method": "initialized", "params": {}})
    want = 1 if setting == "off" else 2
    while len(ends) < want:
        client.handle(await client.read())
    await asyncio.sleep(1.0)  # the final merge and cache writes after progress ends
    reply = await request("workspace/symbol", {"query": probe})
    memory = tree_memory(process.pid)
    await request("shutdown", None)
    send({"method": "exit", "params": None})
    await process.wait()
    return {
        "workspace_s": ends[0],
        "dependencies_s": ends[1] if want == 2 else 0.0,
        "tree_rss_mb": memory.rss / 1e6,
        "tree_pss_mb": memory.pss / 1e6,
        "processes": memory.processes,
        "answers": len(reply.get("result") or []),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("workspace")
    parser.add_argument("--dependencies", nargs="+", default=["on"])
    parser.add_argument("--probe", default="parse")
    args = parser.parse_args()
    root = os.path.abspath(args.workspace)
    chosen = args.dependencies
    setting: Any = (
        chosen[0] if chosen in (["on"], ["off"]) else [os.path.abspath(d) for d in chosen]
    )
    for label, value in (("off", "off"), ("on", setting)):
        with tempfile.TemporaryDirectory() as cache_dir:
            for run in ("cold", "warm"):
                figures = asyncio.run(serve(root, value, cache_dir, args.probe))
                print(
                    f"dependencies {label:3} {run}: workspace indexed {figures['workspace_s']:.1f} s,"
                    f" dependencies indexed {figures['dependencies_s']:.1f} s,"
                    f" tree RSS {figures['tree_rss_mb']:.0f} MB (PSS {figures['tree_pss_mb']:.0f} MB,"
                    f" {figures['processes']:.0f} processes), {figures['answers']:.0f} answers"
                    f" to {args.probe!r}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
