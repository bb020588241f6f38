"""The wire in front of the ACP library: newline-delimited JSON-RPC on two
private descriptors, every incoming line checked before the library sees it.

The library skips a line that is not JSON without a word, and stops
listening on a line that is JSON but no request object (a batch, a number,
an unhashable id). Here each such line gets the JSON-RPC error it deserves
(``-32700`` parse error, ``-32600`` invalid request, with ``id`` null when
it cannot be known), an over-long line is dropped piece by piece without
holding it in memory, and the library is fed the valid messages only,
re-encoded one per line.

``take_stdio`` moves the protocol off descriptors 0 and 1 before anything
else runs: a ``print``, a warning or a child process that inherits stdout
would otherwise write into the protocol stream, and a child reading stdin
would eat the client's messages. Afterwards descriptor 0 reads
``/dev/null`` and descriptor 1 writes to stderr.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_LINE",
    "ProtocolPipes",
    "WireGuard",
    "check_message",
    "open_streams",
    "take_stdio",
]

log = logging.getLogger(__name__)

MAX_LINE = 50 * 1024 * 1024
"""The longest message accepted, in bytes (a prompt with embedded files)."""

_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600


@dataclass(frozen=True, slots=True)
class ProtocolPipes:
    """The descriptors the protocol runs on (private copies of stdin and stdout)."""

    read_fd: int
    write_fd: int


def take_stdio() -> ProtocolPipes:
    """Keep stdin and stdout for the protocol only (see the module docstring)."""
    sys.stdout.flush()
    pipes = ProtocolPipes(read_fd=os.dup(0), write_fd=os.dup(1))  # not inherited by children
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return pipes


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _valid_id(value: Any) -> bool:
    # JSON-RPC ids are strings, numbers or null; bool is an int to Python, not to JSON
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def check_message(message: Any) -> dict[str, Any] | None:
    """``None`` when ``message`` (a decoded JSON value) may go to the library,
    else the error response to send instead. A response the agent cannot
    use gets an empty dict: dropped without an answer (answering a response
    is not JSON-RPC)."""
    if not isinstance(message, dict):
        return _error(_INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object")
    request_id = message.get("id")
    if not _valid_id(request_id):
        return _error(_INVALID_REQUEST, "Invalid Request: id must be a string, number or null")
    if "method" in message:
        if message.get("jsonrpc") != "2.0":
            return _error(_INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"', request_id)
        if not isinstance(message["method"], str):
            return _error(_INVALID_REQUEST, "Invalid Request: method must be a string", request_id)
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return _error(-32602, "Invalid params: expected an object", request_id)
        return None
    # a response to one of the agent's requests: only a well-formed one
    if "id" not in message or isinstance(request_id, float) or request_id is None:
        return {}
    if ("result" in message) == ("error" in message):
        return {}
    error = message.get("error")
    if "error" in message and not isinstance(error, dict):
        return {}
    return None


class WireGuard:
    """Reads lines from ``source``, answers bad ones on ``writer`` and feeds
    the rest to ``target`` (the library's reader); ``target`` sees end of
    file when ``source`` does."""

    def __init__(
        self,
        source: asyncio.StreamReader,
        target: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_line: int = MAX_LINE,
    ) -> None:
        self._source = source
        self._target = target
        self._writer = writer
        self._max_line = max_line

    async def run(self) -> None:
        try:
            while True:
                line = await self._next_line()
                if line is None:
                    return
                self._take(line)
        finally:
            self._target.feed_eof()

    async def _next_line(self) -> bytes | None:
        """The next whole line, ``b""`` for one too long (already dropped),
        ``None`` at end of file."""
        too_long = False
        parts: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = await self._source.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:  # the last line has no newline
                if not exc.partial and not parts and not too_long:
                    return None
                chunk = exc.partial
                if not chunk and not parts and too_long:
                    return b""
                end = True
            except asyncio.LimitOverrunError as exc:
                chunk = await self._source.readexactly(exc.consumed)
                end = False
            else:
                end = True
            size += len(chunk)
            if size > self._max_line:
                too_long, parts = True, []  # drop what came: never hold it all
            elif not too_long:
                parts.append(chunk)
            if end:
                return b"" if too_long else b"".join(parts)

    def _take(self, line: bytes) -> None:
        if line == b"":
            self._answer(_error(_INVALID_REQUEST, f"Invalid Request: over {self._max_line} bytes"))
            return
        text = line.strip()
        if not text:
            return
        try:
            message = json.loads(text)
        except ValueError:  # not JSON, or not UTF-8
            self._answer(_error(_PARSE_ERROR, "Parse error"))
            return
        problem = check_message(message)
        if problem == {}:
            log.warning("dropped a response the agent cannot use: %.200s", text)
            return
        if problem is not None:
            self._answer(problem)
            return
        self._target.feed_data(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def _answer(self, response: dict[str, Any]) -> None:
        if self._writer.is_closing():
            return
        self._writer.write(json.dumps(response, separators=(",", ":")).encode() + b"\n")


def _is_stream(fd: int) -> bool:
    """Whether asyncio can watch ``fd`` (a pipe, socket or terminal; not a file)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class _FileWriter(asyncio.WriteTransport):
    """Writes straight to a descriptor asyncio cannot watch (stdout sent to a file)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(bytes(data))
        while view and not self._closing:
            view = view[os.write(self._fd, view) :]

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def get_write_buffer_size(self) -> int:
        return 0


def _read_file_into(fd: int, source: asyncio.StreamReader, loop: asyncio.AbstractEventLoop) -> None:
    """Feed ``source`` from a descriptor asyncio cannot watch (stdin from a file)."""

    def pump() -> None:
        try:
            while chunk := os.read(fd, 1 << 16):
                loop.call_soon_threadsafe(source.feed_data, chunk)
        finally:
            loop.call_soon_threadsafe(source.feed_eof)

    threading.Thread(target=pump, name="mewcode-acp-stdin", daemon=True).start()


async def open_streams(
    pipes: ProtocolPipes,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, WireGuard]:
    """The library's reader (fed by the guard) and writer on ``pipes``, and the
    guard to run (``await guard.run()``) alongside the connection."""
    loop = asyncio.get_running_loop()
    # the limit only bounds one read: the guard splits longer lines itself
    source = asyncio.StreamReader(limit=1 << 20)
    if _is_stream(pipes.read_fd):
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(source), os.fdopen(pipes.read_fd, "rb", 0)
        )
    else:
        _read_file_into(pipes.read_fd, source, loop)
    # a StreamReaderProtocol is also a write protocol with flow control (drain)
    sink = asyncio.StreamReaderProtocol(asyncio.StreamReader())
    if _is_stream(pipes.write_fd):
        transport, _ = await loop.connect_write_pipe(
            lambda: sink, os.fdopen(pipes.write_fd, "wb", 0)
        )
    else:
        transport = _FileWriter(pipes.write_fd)
    writer = asyncio.StreamWriter(transport, sink, None, loop)  # type: ignore[arg-type]
    target = asyncio.StreamReader(limit=MAX_LINE + 1)
    return target, writer, WireGuard(source, target, writer)
