"""What the deployment tests share: the servers ``tests/deploy_reference/install``
puts in ``.deploy-servers/`` (Enterprise Gateway, JupyterHub, its proxy), a
server process started and stopped by the test, Jupyter's REST API, and a
kernel driven over its websocket as a browser would.

Every wait is bounded and waits on something observable (a line the server
prints, a message, an HTTP answer), never on a fixed sleep.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

REPO = Path(__file__).resolve().parents[1]
SERVERS = REPO / ".deploy-servers"
GATEWAY_BIN = SERVERS / "gateway-venv" / "bin"
HUB_VENV = SERVERS / "hub-venv"
PROXY = SERVERS / "node_modules" / ".bin" / "configurable-http-proxy"

INSTALL_HINT = (
    "the deployment servers are not installed: run .ci/run, or tests/deploy_reference/install "
    "(Enterprise Gateway and JupyterHub from PyPI, configurable-http-proxy from npm, into "
    ".deploy-servers/)"
)


def require(*paths: Path) -> None:
    """Install the servers on first use (README's test command alone must pass on a
    fresh clone), under a lock; fail (never skip) when one is still missing."""
    if any(not p.exists() for p in paths):
        import fcntl

        SERVERS.mkdir(exist_ok=True)
        with open(SERVERS / ".install.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if any(not p.exists() for p in paths):
                done = subprocess.run(
                    [str(REPO / "tests" / "deploy_reference" / "install")],
                    capture_output=True,
                    text=True,
                )
                if done.returncode != 0:
                    pytest.fail(f"{INSTALL_HINT}; it failed:\n{done.stdout}{done.stderr}"[-4000:])
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.fail(f"{INSTALL_HINT}; missing: {', '.join(missing)}", pytrace=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """A server process in its own process group; its output is kept (``log``)
    and waited on line by line. Stopped with SIGTERM, then SIGKILL."""

    def __init__(
        self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, name: str
    ) -> None:
        self.name = name
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._log: list[str] = []
        self.proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._log.append(line)
            self._lines.put(line)
        self._lines.put(None)

    def log(self) -> str:
        return "".join(self._log)

    def wait_for_line(self, predicate: Callable[[str], bool], *, timeout: float = 60) -> str:
        """The first line (from now on) for which ``predicate`` holds."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{self.name}: no such line within {timeout:g} s:\n{self.log()}")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"{self.name} exited (code {self.proc.poll()}):\n{self.log()}")
            if predicate(line):
                return line

    def wait_listening(self, port: int, *, timeout: float = 30) -> None:
        """Until ``port`` accepts connections. Jupyter Server prints its URL and
        binds its socket a moment later, from its event loop: connecting again
        at once (a refused connection returns at once) bridges that moment."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited (code {self.proc.poll()}):\n{self.log()}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    return
            os.sched_yield()
        raise TimeoutError(f"{self.name} did not listen on {port} within {timeout:g} s")

    def stop(self, timeout: float = 20) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


def http(
    method: str,
    url: str,
    *,
    token: str | None = None,
    body: Any = None,
    timeout: float = 30,
) -> tuple[int, Any]:
    """``(status, decoded JSON or None)`` of one request."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"token {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(), exc.code
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode("utf-8", "replace")


@dataclass
class WsCell:
    """What one execute request produced over the websocket."""

    reply: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.reply.get("content", {}).get("status", "")

    @property
    def text(self) -> str:
        parts: list[str] = []
        for msg in self.messages:
            content = msg["content"]
            kind = msg["msg_type"]
            if kind == "stream":
                parts.append(content["text"])
            elif kind in ("display_data", "execute_result"):
                data = content.get("data", {})
                parts.append(data.get("text/markdown") or data.get("text/plain") or "")
            elif kind == "error":
                parts.append(" ".join(content.get("traceback") or [content.get("evalue", "")]))
        return "\n".join(parts)


class KernelSocket:
    """A kernel's ``/api/kernels/<id>/channels`` websocket, as a front end
    uses it: execute requests on ``shell``, their outputs on ``iopub``."""

    def __init__(self, conn: WebSocketClientConnection) -> None:
        self.conn = conn
        self.session = uuid.uuid4().hex
        #: messages of other requests, read while waiting for one
        self.others: list[dict[str, Any]] = []

    @classmethod
    async def connect(cls, ws_url: str, token: str | None) -> KernelSocket:
        headers = {"Authorization": f"token {token}"} if token else {}
        conn = await websocket_connect(
            HTTPRequest(ws_url, headers=headers, connect_timeout=30, request_timeout=60)
        )
        return cls(conn)

    def close(self) -> None:
        self.conn.close()

    async def send_execute(self, code: str) -> str:
        msg_id = uuid.uuid4().hex
        msg = {
            "header": {
                "msg_id": msg_id,
                "msg_type": "execute_request",
                "session": self.session,
                "username": "test",
                "version": "5.3",
                "date": "",
            },
            "parent_header": {},
            "metadata": {},
            "content": {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": False,
            },
            "channel": "shell",
            "buffers": [],
        }
        await self.conn.write_message(json.dumps(msg))
        return msg_id

    async def next_message(self, within: float) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.conn.read_message(), within)
        if raw is None:
            raise ConnectionError("the kernel's websocket closed")
        if isinstance(raw, bytes):  # a binary frame (buffers): not one of ours
            return {"channel": "", "msg_type": "", "parent_header": {}, "content": {}}
        msg = json.loads(raw)
        msg.setdefault("msg_type", msg.get("header", {}).get("msg_type", ""))
        return msg

    async def execute(self, code: str, *, within: float = 90) -> WsCell:
        """Run ``code``; its iopub messages until idle, and its reply."""
        msg_id = await self.send_execute(code)
        return await self.collect(msg_id, within=within)

    async def collect(self, msg_id: str, *, within: float = 90) -> WsCell:
        cell = WsCell()
        idle = False
        deadline = time.monotonic() + within
        while not (idle and cell.reply):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"cell {msg_id} did not finish in {within:g} s: {cell.text}")
            msg = await self.next_message(remaining)
            mine = msg.get("parent_header", {}).get("msg_id") == msg_id
            if mine and msg["channel"] == "shell" and msg["msg_type"] == "execute_reply":
                cell.reply = msg
            elif not mine or idle:  # another request's, or what followed this one's end
                self.others.append(msg)
            elif msg["channel"] == "iopub":
                if msg["msg_type"] == "status":
                    idle = msg["content"]["execution_state"] == "idle"
                else:
                    cell.messages.append(msg)
        return cell

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], *, within: float = 60
    ) -> dict[str, Any]:
        """The first message (already read ones included) for which ``predicate`` holds."""
        for msg in self.others:
            if predicate(msg):
                return msg
        deadline = time.monotonic() + within
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no such message within {within:g} s")
            msg = await self.next_message(remaining)
            self.others.append(msg)
            if predicate(msg):
                return msg


def status_of(msg: dict[str, Any], state: str, parent: str | None = None) -> bool:
    """Whether ``msg`` is an iopub status ``state`` (about request ``parent``)."""
    return (
        msg.get("msg_type") == "status"
        and msg["content"].get("execution_state") == state
        and (parent is None or msg.get("parent_header", {}).get("msg_id") == parent)
    )
