"""A local HTTP server that speaks the Anthropic and OpenAI streaming wire formats.

``ScriptedServer`` answers ``POST /v1/messages`` (Anthropic Messages),
``POST /v1/chat/completions`` (OpenAI Chat Completions) and ``POST
/v1/responses`` (OpenAI Responses), all with
``stream: true``, from a script of high-level steps, so tests can drive the
real SDKs and providers over real sockets::

    with ScriptedServer([
        reply(tool_calls=[("write_file", {"path": "a.txt", "content": "hi"})]),
        status(529),                      # an overloaded error, then
        reply(text="Done."),              # the retry succeeds
    ]) as server:
        client = anthropic.AsyncAnthropic(api_key="x", base_url=server.base_url)
        # OpenAI: base_url=server.openai_base_url
        ...
        server.assert_all_used()

Each step answers one request, in the protocol of the request that takes it.
A request past the end of the script gets HTTP 500 with a clear message and
is recorded in ``server.errors``. Every request body is kept in
``server.requests``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..core.messages import Block, ToolUseBlock
from ._responses_sse import responses_error_frame, responses_sse
from ._sse import (
    anthropic_error_body,
    anthropic_sse,
    openai_error_body,
    openai_sse,
    sse_error_frame,
)
from ._steps import (
    ERROR_MESSAGES,
    ERROR_TYPES,
    Stall,
    WireReply,
    WireStatus,
    WireStep,
    drop_after,
    raw_stream,
    reply,
    sse_error,
    stall_after,
    status,
    usage,
)
from .scripted import ScriptError, default_stop_reason

__all__ = [
    "ReceivedRequest",
    "ScriptedServer",
    "Stall",
    "WireReply",
    "WireStatus",
    "WireStep",
    "drop_after",
    "raw_stream",
    "reply",
    "sse_error",
    "stall_after",
    "status",
    "usage",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class ReceivedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class ScriptedServer:
    """A real HTTP server on 127.0.0.1 (ephemeral port, background thread)
    answering model requests from a script. Use as a (sync or async) context
    manager, or call ``start()``/``stop()``."""

    def __init__(self, script: Iterable[WireStep] = (), *, model: str | None = None) -> None:
        self._script: list[WireStep] = list(script)
        self._next = 0
        self._model = model
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._sockets: set[socket.socket] = set()
        self.received: list[ReceivedRequest] = []
        self.errors: list[str] = []

    # --- script -------------------------------------------------------------------

    def add(self, *steps: WireStep) -> None:
        """Append steps to the script."""
        with self._lock:
            self._script.extend(steps)

    @property
    def requests(self) -> list[Any]:
        """The parsed JSON body of every request received, in order."""
        return [r.body for r in self.received]

    @property
    def remaining(self) -> int:
        return len(self._script) - self._next

    def assert_all_used(self) -> None:
        """Raise ``ScriptError`` if script steps were never requested, or if
        the server answered anything with an error of its own."""
        problems = []
        if self.remaining:
            problems.append(f"{self.remaining} scripted step(s) were never requested")
        problems += self.errors
        if problems:
            raise ScriptError("ScriptedServer: " + "; ".join(problems))

    # --- lifecycle ----------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:PORT`` (the Anthropic SDK's base URL)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``base_url + "/v1"`` (the OpenAI SDK appends ``/chat/completions``)."""
        return self.base_url + "/v1"

    def start(self) -> ScriptedServer:
        if self._httpd is None:
            self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler, owner=self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"ScriptedServer:{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            sockets, self._sockets = list(self._sockets), set()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    async def __aenter__(self) -> ScriptedServer:
        return self.start()

    async def __aexit__(self, *_: object) -> None:
        await asyncio.to_thread(self.stop)

    # --- serving (handler threads) ------------------------------------------------

    def _receive(self, request: ReceivedRequest, scripted: bool) -> tuple[int, WireStep | None]:
        """Record ``request``; return its number and, if ``scripted``, the next step."""
        with self._lock:
            self.received.append(request)
            if not scripted or self._next >= len(self._script):
                return len(self.received), None
            step = self._script[self._next]
            self._next += 1
            return len(self.received), step

    def _handle(self, h: _Handler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        path = h.path.split("?", 1)[0]
        protocol = (
            "anthropic"
            if path.endswith("/v1/messages")
            else "openai"
            if path.endswith("/chat/completions")
            else "openai-responses"
            if path.endswith("/responses")
            else None
        )
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        valid = isinstance(body, dict) and body.get("stream") is True
        received = ReceivedRequest(
            method=h.command, path=h.path, headers=dict(h.headers.items()), body=body
        )
        n, step = self._receive(received, scripted=protocol is not None and valid)
        if protocol is None:
            self._fail(h, 404, f"request #{n}: no scripted endpoint at {h.command} {h.path}")
            return
        if not valid:
            self._fail(
                h,
                400,
                f"request #{n} to {path}: only JSON bodies with stream: true are scripted",
                protocol,
            )
            return
        if step is None:
            self._fail(
                h,
                500,
                f"unexpected request #{n} to {path}: the script has {len(self._script)} step(s), "
                f"all used{_last_message(body)}",
                protocol,
            )
            return
        if callable(step):
            step = step(body)
        if isinstance(step, WireStatus):
            self._send_status(h, step, protocol, n)
        else:
            self._send_stream(h, step, protocol, body, n)

    def _fail(self, h: _Handler, code: int, message: str, protocol: str = "anthropic") -> None:
        with self._lock:
            self.errors.append(message)
            n = len(self.received)
        error = WireStatus(
            status=code, error_type="scripted_server_error", message="ScriptedServer: " + message
        )
        self._send_status(h, error, protocol, n)

    def _send_status(self, h: _Handler, step: WireStatus, protocol: str, n: int) -> None:
        error_type = step.error_type or ERROR_TYPES.get(step.status, "api_error")
        message = step.message or ERROR_MESSAGES.get(error_type, f"HTTP {step.status} (scripted)")
        body = step.body
        if body is None:
            body = (
                anthropic_error_body(error_type, message, f"req_scripted_{n:04d}")
                if protocol == "anthropic"
                else openai_error_body(error_type, message, None)
            )
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        h.send_response(step.status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.send_header("request-id", f"req_scripted_{n:04d}")
        if step.retry_after is not None:
            h.send_header("retry-after", f"{step.retry_after:g}")
        for name, value in step.headers:
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(data)

    def _send_stream(
        self, h: _Handler, step: WireReply, protocol: str, body: dict[str, Any], n: int
    ) -> None:
        blocks = tuple(_with_ids(step.blocks, n, protocol))
        stop_reason = step.stop_reason or default_stop_reason(blocks)
        model = step.model or self._model or str(body.get("model", "scripted"))
        if step.raw_frames is not None:
            frames = list(step.raw_frames)
        elif protocol == "openai-responses":
            frames = responses_sse(
                blocks,
                stop_reason=stop_reason,
                usage=step.usage,
                model=model,
                response_id=f"resp_scripted{n:04d}",
            )
        elif protocol == "anthropic":
            frames = anthropic_sse(
                blocks,
                stop_reason=stop_reason,
                usage=step.usage,
                model=model,
                message_id=f"msg_scripted_{n:04d}",
            )
        else:
            options = body.get("stream_options") or {}
            frames = openai_sse(
                blocks,
                stop_reason=stop_reason,
                usage=step.usage,
                model=model,
                completion_id=f"chatcmpl-scripted{n:04d}",
                include_usage=bool(options.get("include_usage")),
            )
        cut = step.cut_after is not None and step.error is None
        if step.cut_after is not None:
            frames = frames[: step.cut_after]
        if step.error is not None:
            frames.append(
                responses_error_frame(*step.error, len(frames))
                if protocol == "openai-responses"
                else sse_error_frame(protocol, *step.error)
            )
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream; charset=utf-8")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.send_header("request-id", f"req_scripted_{n:04d}")
        h.end_headers()
        try:
            for i, frame in enumerate(frames):
                if step.stall is not None and i == step.stall.after:
                    h.wfile.flush()
                    step.stall.wait()
                data = frame.encode()
                h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            if cut:  # no terminating chunk: the client sees the body end early
                h.close_connection = True
                h.connection.shutdown(socket.SHUT_RDWR)
            else:
                h.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client went away
            h.close_connection = True


def _with_ids(blocks: Sequence[Block], n: int, protocol: str) -> Iterable[Block]:
    prefix = "toolu_scripted" if protocol == "anthropic" else "call_scripted"
    for i, block in enumerate(blocks):
        if isinstance(block, ToolUseBlock) and not block.id:
            block = block.model_copy(update={"id": f"{prefix}_{n:02d}_{i}"})
        yield block


def _last_message(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    if not messages:
        return ""
    return f"; last message: {json.dumps(messages[-1], ensure_ascii=False)[:160]}"


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], *, owner: ScriptedServer
    ) -> None:
        self.owner = owner
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    timeout = 30

    def setup(self) -> None:
        super().setup()
        with self.server.owner._lock:
            self.server.owner._sockets.add(self.connection)

    def finish(self) -> None:
        with self.server.owner._lock:
            self.server.owner._sockets.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def do_POST(self) -> None:
        self.server.owner._handle(self)

    def do_GET(self) -> None:
        self.server.owner._handle(self)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests read ``received`` and ``errors`` instead."""
