"""Resident memory of a real `nearsym serve` on a tree, with no file open:
cold (empty cache), then restarted from the cache twice, once with the
client watching files (as VS Code and Neovim 0.11 do) and once without
(the server then runs its own watcher). Prints the time to the end of
indexing and the resident memory 2 s later.

    python tests/bench/server_memory.py ROOT CACHE_DIR
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

from nearsym.bench import _rss_of


async def measure(root: str, cache: str, client_watches: bool) -> str:
    env = {**os.environ, "NEARSYM_CACHE_DIR": cache}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nearsym", "serve",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    ended = asyncio.Event()
    pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
    ids = iter(range(1, 1_000_000))

    def send(message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def read() -> None:
        while True:
            try:
                header = await stdout.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            message = json.loads(await stdout.readexactly(length))
            if "id" in message and "method" in message:
                send({"id": message["id"], "result": None})
            elif "id" in message:
                pending.pop(message["id"]).set_result(message)
            params = message.get("params")
            value = params.get("value") if isinstance(params, dict) else None
            if isinstance(value, dict) and value.get("kind") == "end":
                ended.set()

    async def request(method: str, params: Any) -> dict[str, Any]:
        msg_id = next(ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        pending[msg_id] = future
        send({"id": msg_id, "method": method, "params": params})
        return await future

    reader = asyncio.ensure_future(read())
    capabilities: dict[str, Any] = {"window": {"workDoneProgress": True}}
    if client_watches:
        capabilities["workspace"] = {"didChangeWatchedFiles": {"dynamicRegistration": True}}
    started = time.perf_counter()
    uri = "file://" + os.path.abspath(root)
    await request("initialize", {"processId": None, "rootUri": uri, "capabilities": capabilities})
    send({"method": "initialized", "params": {}})
    await ended.wait()
    indexed = time.perf_counter() - started
    await asyncio.sleep(2)
    rss = _rss_of(process.pid)
    await request("shutdown", None)
    send({"method": "exit", "params": None})
    await process.wait()
    reader.cancel()
    return (
        f"client watches={client_watches}: index done {indexed:.1f} s, resident {rss / 1e6:.0f} MB"
    )


def main() -> None:
    root, cache = sys.argv[1], sys.argv[2]
    print("cold      ", asyncio.run(measure(root, cache, True)), flush=True)
    print("restarted ", asyncio.run(measure(root, cache, True)), flush=True)
    print("restarted ", asyncio.run(measure(root, cache, False)), flush=True)


if __name__ == "__main__":
    main()
