"""The SDK transports a connection uses, opened in one place: stdio (the
process ``launch.stdio_launch`` describes, stderr to its log file) and
streamable HTTP (the entry's headers on every request).

A stdio server's stderr is a pipe, not the log file itself: a thread reads
it and appends it to ``.mewcode/logs/mcp-<server>.log`` through the
session's redactor (``StreamRedactor``: a secret split between two writes is
caught; what it holds back is written once the server has been quiet for a
moment), so the log never holds a known secret, even from a server that
prints its environment.

Each transport's read stream is watched: when it ends while the connection
was not being closed (the stdio process exited, the HTTP stream dropped),
``on_lost`` is called, so the next call knows to restart the server instead
of writing to a dead pipe.
"""

from __future__ import annotations

import codecs
import datetime
import os
import select
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from types import TracebackType
from typing import IO, Any

import anyio
import httpx2
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ..child_env import child_env
from ..config import McpServerConfig
from ..redaction import Redactor
from .launch import StdioLaunch
from .log_file import open_log
from .oauth import bounded_transport

__all__ = ["open_transport"]

# connect / write / pool as the SDK's own default client; a response stream may stay open long
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
# the SDK puts these from this process's environment under the server's own
_SDK_INHERITS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
_QUIET = 0.3  # seconds without output after which held-back output is written
_DRAIN = 0.5  # seconds the log waits for the server's last output at the end


@asynccontextmanager
async def open_transport(
    server: McpServerConfig,
    launch: StdioLaunch | None,
    on_lost: Callable[[], None],
    auth: httpx2.Auth | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of ``server``'s transport, watched for loss;
    ``auth`` signs an HTTP server's requests (its OAuth, ``oauth.ServerAuth``)."""
    async with AsyncExitStack() as stack:
        if launch is not None:
            log = stack.enter_context(_ScrubbedLog.open(launch, server.name))
            params = StdioServerParameters(
                command=launch.command,
                args=list(launch.args),
                env=_server_env(launch),
                cwd=launch.cwd,
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog=log.errlog))
            log.started()
        else:
            assert server.url is not None
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=dict(server.headers),
                    timeout=_HTTP_TIMEOUT,
                    auth=auth,
                    # the SDK's OAuth requests carry no timeout of their own
                    transport=bounded_transport(_HTTP_TIMEOUT.connect or 30.0)
                    if auth is not None
                    else None,
                )
            )
            read, write = await stack.enter_async_context(
                streamable_http_client(server.url, http_client=http)
            )
        yield _WatchedReadStream(read, on_lost), write


def _server_env(launch: StdioLaunch) -> dict[str, str]:
    """The server's environment as the SDK will set it: it adds a few of this
    process's variables under ours, so each is given here as the one rule
    for child processes decides (blank when it holds a secret)."""
    env = dict(launch.env)
    for name in _SDK_INHERITS:
        if name not in env and name in os.environ:
            kept = child_env({name: os.environ[name]}, secrets=launch.redactor)
            env[name] = kept.get(name, "")
    return env


class _ScrubbedLog:
    """A server's log file, written through a redactor: ``errlog`` is the
    write end of a pipe the server's stderr goes to; a thread copies what
    arrives, redacted, to the file."""

    def __init__(self, file: IO[str], redactor: Redactor) -> None:
        self._file = file
        self._redactor = redactor
        self._lock = threading.Lock()
        self._closed = False
        read_fd, write_fd = os.pipe()
        self.errlog: IO[str] | None = os.fdopen(write_fd, "w")
        self._reader = threading.Thread(
            target=self._copy, args=(read_fd,), name="mcp-log", daemon=True
        )
        self._reader.start()

    @classmethod
    def open(cls, launch: StdioLaunch, name: str) -> _ScrubbedLog:
        log = cls(open_log(launch.log_path, launch.cwd), launch.redactor)
        where = " (in the OS sandbox)" if launch.sandboxed else ""
        log.note(f"starting MCP server {name!r}: {launch.program or launch.command}{where}")
        return log

    def started(self) -> None:
        """The server has its copy of the pipe: ours goes, so its end is the end."""
        if self.errlog is not None:
            self.errlog.close()
            self.errlog = None

    def note(self, what: str) -> None:
        now = datetime.datetime.now().isoformat(timespec="seconds")
        self._write(self._redactor.redact(f"--- {now}: {what}\n"))

    def _write(self, text: str) -> None:
        if text:
            with self._lock:
                self._file.write(text)
                self._file.flush()

    def _copy(self, fd: int) -> None:
        stream = self._redactor.stream()
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], _QUIET)
                if not ready:  # quiet: what was held back is written, redacted
                    self._write(stream.flush())
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self._write(stream.feed(decoder.decode(chunk)))
            self._write(stream.feed(decoder.decode(b"", final=True)) + stream.flush())
        except (OSError, ValueError):  # the file could not be written
            pass
        finally:
            os.close(fd)
            with self._lock:
                if self._closed:  # the session ended before the server's output did
                    self._file.close()

    def __enter__(self) -> _ScrubbedLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.started()
        # a process the server left behind may hold the pipe: do not wait for it
        self._reader.join(_DRAIN)
        self.note("stopped")
        with self._lock:
            self._closed = True
            if not self._reader.is_alive():
                self._file.close()


class _WatchedReadStream:
    """A read stream that reports its end (see the module docstring)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
