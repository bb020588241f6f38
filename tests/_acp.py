"""Driving ``python -m mewcode_kernel acp`` with the ACP library's client side.

``acp_agent(project, home)`` starts the server in a scrubbed environment
(the project's ``.mewcode.yaml`` points at a ``ScriptedServer``) and yields
a ``Driven``: the library's ``ClientSideConnection``, the process, and the
``RecordingClient`` answering it. The client records every message the
agent sends, in wire order, from the connection's observer (the library
may hand notifications to the client after the response that follows
them), and answers permission requests with ``answer`` (an option id, or
a function of the request). ``raw_agent`` starts it with bare pipes, for
bytes no library would send. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from tests._kernel import kernel_env

ACP_COMMAND = (sys.executable, "-m", "mewcode_kernel", "acp")
TIMEOUT = 60.0

Answer = str | Callable[[dict[str, Any]], str | None] | None


@dataclass
class RecordingClient:
    """The client side: records what arrives, answers permission requests."""

    answer: Answer = "allow_once"
    messages: list[dict[str, Any]] = field(default_factory=list)
    permission_requests: list[dict[str, Any]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def observe(self, event: StreamEvent) -> None:
        if event.direction == StreamDirection.INCOMING:
            self.messages.append(event.message)
            self.arrived.set()

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The ``session/update`` payloads so far (of one session), in order."""
        return [
            m["params"]["update"]
            for m in self.messages
            if m.get("method") == "session/update"
            and (session_id is None or m["params"]["sessionId"] == session_id)
        ]

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates(session_id)]

    def text(self, session_id: str | None = None) -> str:
        return "".join(
            u["content"].get("text", "")
            for u in self.updates(session_id)
            if u["sessionUpdate"] == "agent_message_chunk"
        )

    async def wait_for(self, check: Callable[[], bool], within: float = TIMEOUT) -> None:
        """Until ``check()`` holds, woken by each message that arrives."""
        async with asyncio.timeout(within):
            while not check():
                self.arrived.clear()
                if check():
                    return
                await self.arrived.wait()

    # --- the Client protocol --------------------------------------------------------

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **_: Any
    ) -> RequestPermissionResponse:
        request = {
            "session_id": session_id,
            "tool_call": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
            "options": [o.model_dump(mode="json", by_alias=True) for o in options],
        }
        self.permission_requests.append(request)
        choice = self.answer(request) if callable(self.answer) else self.answer
        if choice is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        return None  # recorded, in wire order, by ``observe``


@dataclass
class Driven:
    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    client: RecordingClient

    async def start(self, cwd: Path) -> str:
        """``initialize`` and ``session/new`` in ``cwd``: the session id."""
        await self.conn.initialize(protocol_version=PROTOCOL_VERSION)
        return (await self.conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id


def acp_env(home: Path, **extra: str) -> dict[str, str]:
    return kernel_env(home, **extra)


@asynccontextmanager
async def acp_agent(
    project: Path, home: Path, *, answer: Answer = "allow_once", **env: str
) -> AsyncIterator[Driven]:
    client = RecordingClient(answer=answer)
    async with spawn_agent_process(
        client,
        *ACP_COMMAND,
        env=acp_env(home, **env),
        cwd=project,
        observers=[client.observe],
    ) as (conn, process):
        try:
            yield Driven(conn=conn, process=process, client=client)
        finally:
            if process.returncode is None and process.stdin is not None:
                process.stdin.close()  # the client goes away: the server stops by itself
            async with asyncio.timeout(TIMEOUT):
                await process.wait()


@dataclass
class RawAgent:
    """The server on bare pipes: write any bytes, read its lines."""

    process: asyncio.subprocess.Process

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def request(self, method: str, params: Any, request_id: Any = 1) -> None:
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.send(json.dumps(body).encode() + b"\n")

    async def line(self, within: float = TIMEOUT) -> dict[str, Any]:
        assert self.process.stdout is not None
        async with asyncio.timeout(within):
            raw = await self.process.stdout.readline()
        assert raw, "the server closed its output"
        return json.loads(raw)

    async def response(self, request_id: Any, within: float = TIMEOUT) -> dict[str, Any]:
        """The response to ``request_id`` (notifications before it skipped)."""
        while True:
            message = await self.line(within)
            if "method" not in message and message.get("id") == request_id:
                return message


@asynccontextmanager
async def raw_agent(project: Path, home: Path, **env: str) -> AsyncIterator[RawAgent]:
    process = await asyncio.create_subprocess_exec(
        *ACP_COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=acp_env(home, **env),
        cwd=project,
        limit=64 << 20,
    )
    try:
        yield RawAgent(process)
    finally:
        if process.returncode is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                async with asyncio.timeout(TIMEOUT):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()


def project_with(root: Path, base_url: str, openai_base_url: str) -> Path:
    from tests._kernel import anthropic_openai_config

    root.mkdir(parents=True, exist_ok=True)
    (root / ".mewcode.yaml").write_text(anthropic_openai_config(base_url, openai_base_url))
    os.makedirs(root / "src", exist_ok=True)
    return root
