"""A minimal JSON-RPC client over stdio, for messages pytest-lsp will not
send as they are (extra fields, recorded editors' exact initialize params,
malformed input). It answers the server's own requests with null results,
but those whose method is in `held` (kept in `held_requests` for the test
to answer); every method the server asked is in `asked`, in order."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from .conftest import SERVER


class RawClient:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = itertools.count(1)
        self.notifications: list[dict[str, Any]] = []
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.held: set[str] = set()
        self.held_requests: list[dict[str, Any]] = []
        self.asked: list[str] = []
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(
        cls, cwd: str | None = None, env: dict[str, str] | None = None, stderr: bool = False
    ) -> RawClient:
        """The server over stdio; with `stderr`, its stderr is kept (read
        it with `errors()` once the server has ended)."""
        process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if stderr else None,
            cwd=cwd,
            env=env,
        )
        return cls(process)

    async def errors(self) -> str:
        assert self.process.stderr is not None
        return (await self.process.stderr.read()).decode("utf-8", "replace")

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    async def request(self, method: str, params: Any, timeout: float = 10) -> dict[str, Any]:
        msg_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = future
        self.send({"id": msg_id, "method": method, "params": params})
        return await asyncio.wait_for(future, timeout)

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            try:
                header = await stdout.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return  # the server has ended
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            message = json.loads(await stdout.readexactly(length))
            if "id" in message and message["id"] is None:
                self.notifications.append(message)  # an error about no request
            elif "id" in message and "method" in message:
                self.asked.append(message["method"])
                if message["method"] in self.held:
                    self.held_requests.append(message)
                else:
                    self.send({"id": message["id"], "result": None})
            elif "id" in message:
                future = self.pending.pop(message["id"], None)
                if future is None:
                    self.notifications.append(message)  # an answer to a raw message
                elif not future.done():
                    future.set_result(message)
            else:
                self.notifications.append(message)

    async def close(self) -> int:
        try:
            await self.request("shutdown", None)
            self.notify("exit", None)
            return await asyncio.wait_for(self.process.wait(), 10)
        finally:
            self.reader.cancel()
            if self.process.returncode is None:
                self.process.kill()
