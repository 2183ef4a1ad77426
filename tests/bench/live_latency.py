"""Live-update latency over LSP stdio on a real workspace of 10,000+ files.

Measures, against `nearsym serve` started as an editor would:
- didChange -> the new symbol answerable: a buffer gets a new definition,
  then `workspace/symbol` is asked until it answers with it;
- file written on disk -> answerable, with our own watcher (no
  notification) and with a `workspace/didChangeWatchedFiles` notification.

    python tests/bench/live_latency.py DIR [--rounds 50]

DIR is copied to a scratch folder first (it is written to). Prints the file
count, the initial index time, and median / p99 / max per path.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from e2e.rawclient import RawClient


def figures(name: str, samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return f"{name:34} n={len(ms):3}  median {statistics.median(ms):7.1f} ms  p99 {p99:7.1f} ms  max {ms[-1]:7.1f} ms"


async def answered(client: RawClient, name: str, started: float, timeout: float = 30) -> float:
    while time.perf_counter() - started < timeout:
        answer = await client.request("workspace/symbol", {"query": name})
        if any(s["name"] == name for s in answer.get("result") or []):
            return time.perf_counter() - started
        await asyncio.sleep(0.002)
    raise TimeoutError(name)


async def run(root: Path, rounds: int, watching: bool) -> tuple[float, dict[str, list[float]]]:
    client = await RawClient.start()
    caps = {"window": {"workDoneProgress": True}}
    if watching:
        caps["workspace"] = {"didChangeWatchedFiles": {"dynamicRegistration": True}}
    started = time.perf_counter()
    await client.request(
        "initialize",
        {"processId": None, "rootUri": root.as_uri(), "capabilities": caps,
         "workspaceFolders": [{"uri": root.as_uri(), "name": "bench"}]},
    )  # fmt: skip
    client.notify("initialized", {})
    while not any(
        n.get("method") == "$/progress" and n["params"]["value"].get("kind") == "end"
        for n in client.notifications
    ):
        await asyncio.sleep(0.05)
    index_seconds = time.perf_counter() - started
    samples: dict[str, list[float]] = {}
    buffer = root / "bench_buffer.py"
    buffer.write_text("")
    uri = buffer.as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 0, "text": ""}},
    )
    text = ""
    for i in range(rounds):
        name = f"typed_symbol_{'w' if watching else 'o'}_{i}"
        text += f"def {name}():\n    pass\n"
        t0 = time.perf_counter()
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": i + 1}, "contentChanges": [{"text": text}]},
        )
        samples.setdefault("didChange -> answerable", []).append(await answered(client, name, t0))
    for i in range(rounds):
        name = f"written_symbol_{'w' if watching else 'o'}_{i}"
        path = root / "bench" / f"written_{'w' if watching else 'o'}_{i}.py"
        path.parent.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        path.write_text(f"def {name}():\n    pass\n")
        if watching:
            client.notify(
                "workspace/didChangeWatchedFiles", {"changes": [{"uri": path.as_uri(), "type": 1}]}
            )
            key = "file write + notification -> answerable"
        else:
            key = "file write (own watcher) -> answerable"
        samples.setdefault(key, []).append(await answered(client, name, t0))
    await client.close()
    return index_seconds, samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="nearsym-live-"))
    root = scratch / "ws"
    shutil.copytree(args.source, root, symlinks=True)
    files = sum(1 for _ in root.rglob("*") if _.is_file())
    print(f"workspace: {args.source} copied, {files} files")
    try:
        for watching in (False, True):
            index_seconds, samples = asyncio.run(run(root, args.rounds, watching))
            print(
                f"initial index ({'client watches' if watching else 'own watcher'}): {index_seconds:.1f} s"
            )
            for name, values in samples.items():
                print(figures(name, values))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
