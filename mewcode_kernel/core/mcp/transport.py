"""The SDK transports a connection uses, opened in one place: stdio (the
process ``launch.stdio_launch`` describes, stderr to its log file) and
streamable HTTP (the entry's headers on every request).

Each transport's read stream is watched: when it ends while the connection
was not being closed (the stdio process exited, the HTTP stream dropped),
``on_lost`` is called, so the next call knows to restart the server instead
of writing to a dead pipe.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from ..config import McpServerConfig
from .launch import StdioLaunch

__all__ = ["open_transport"]

# connect / write / pool as the SDK's own default client; a response stream may stay open long
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
_LOG_ROTATE_BYTES = 5 * 2**20


@asynccontextmanager
async def open_transport(
    server: McpServerConfig, launch: StdioLaunch | None, on_lost: Callable[[], None]
) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) streams of ``server``'s transport, watched for loss."""
    async with AsyncExitStack() as stack:
        if launch is not None:
            log = stack.enter_context(_open_log(launch, server.name))
            stack.callback(_note, log, "stopped")
            params = StdioServerParameters(
                command=launch.command,
                args=list(launch.args),
                env=dict(launch.env),
                cwd=launch.cwd,
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog=log))
        else:
            assert server.url is not None
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=dict(server.headers), timeout=_HTTP_TIMEOUT)
            )
            read, write = await stack.enter_async_context(
                streamable_http_client(server.url, http_client=http)
            )
        yield _WatchedReadStream(read, on_lost), write


def _open_log(launch: StdioLaunch, name: str) -> Any:
    path = launch.log_path
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if path.stat().st_size > _LOG_ROTATE_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    except FileNotFoundError:
        pass
    log = path.open("a", encoding="utf-8")
    where = " (in the OS sandbox)" if launch.sandboxed else ""
    _note(log, f"starting MCP server {name!r}: {launch.program or launch.command}{where}")
    return log


def _note(log: Any, what: str) -> None:
    now = datetime.datetime.now().isoformat(timespec="seconds")
    log.write(f"--- {now}: {what}\n")
    log.flush()


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
