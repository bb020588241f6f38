"""A small MCP server (the SDK's ``MCPServer``, once called FastMCP) for the
MCP tests: run over stdio as ``python tests/mcp_server.py``, or served over
streamable HTTP on 127.0.0.1 in the test process (``serve_http``).

Its tools cover what a client must handle: text, an image, an error, a call
that hangs, embedded resources, a tool list that changes, a process that
dies mid-call, and a report of the environment it was started with.
"""

from __future__ import annotations

import base64
import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

# A 1x1 transparent PNG.
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000105fe02fe0000000049454e44ae426082"
    )
).decode()

READ_ONLY = ToolAnnotations(read_only_hint=True)


def build(name: str = "fixture") -> MCPServer:
    server = MCPServer(name, version="1.0")

    @server.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    @server.tool(annotations=READ_ONLY)
    def pixel() -> CallToolResult:
        """A one-pixel PNG."""
        return CallToolResult(
            content=[
                TextContent(type="text", text="a pixel:"),
                ImageContent(type="image", data=PIXEL, mime_type="image/png"),
            ]
        )

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the reason given."""
        raise ToolError(f"failed on purpose: {reason}")

    @server.tool(annotations=READ_ONLY)
    async def hang(seconds: float = 3600) -> str:
        """Sleeps (an hour by default)."""
        await anyio.sleep(seconds)
        return "woke up"

    @server.tool(annotations=READ_ONLY)
    def environment() -> str:
        """The names of the environment variables this server was started with."""
        return "\n".join(sorted(os.environ))

    @server.tool(annotations=READ_ONLY)
    def client(ctx: Context) -> str:
        """The name and version the client gave."""
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        return f"{info.name} {info.version}" if info is not None else "anonymous"

    @server.tool(annotations=READ_ONLY)
    def big(lines: int) -> str:
        """``lines`` numbered lines of text."""
        return "".join(f"line {i:05d} of a long listing\n" for i in range(lines))

    @server.tool(annotations=READ_ONLY)
    def pid() -> str:
        """This server's process id."""
        return str(os.getpid())

    @server.tool(annotations=READ_ONLY)
    def resources() -> CallToolResult:
        """Embedded resources of every kind, and a link."""
        return CallToolResult(
            content=[
                EmbeddedResource(
                    type="resource",
                    resource=TextResourceContents(
                        uri="file:///notes.md", mime_type="text/markdown", text="# Notes\nhello"
                    ),
                ),
                EmbeddedResource(
                    type="resource",
                    resource=BlobResourceContents(
                        uri="file:///pixel.png", mime_type="image/png", blob=PIXEL
                    ),
                ),
                EmbeddedResource(
                    type="resource",
                    resource=BlobResourceContents(
                        uri="file:///data.bin",
                        mime_type="application/octet-stream",
                        blob=base64.b64encode(b"\x00\x01\x02\x03").decode(),
                    ),
                ),
                ResourceLink(type="resource_link", uri="file:///big.csv", name="big.csv"),
            ]
        )

    @server.tool()
    async def add_tool(ctx: Context) -> str:
        """Adds a tool named ``late`` and tells the client its tools changed."""

        def late() -> str:
            """A tool that joined later."""
            return "late"

        server.add_tool(late, name="late", annotations=READ_ONLY)
        if ctx.protocol_version and ctx.protocol_version >= "2026":
            await ctx.notify_tools_changed()
        else:
            await ctx.session.send_tool_list_changed()
        return "added"

    @server.tool()
    def write_text(path: str, text: str) -> str:
        """Writes ``text`` to ``path``; says what happened (or why not)."""
        try:
            Path(path).write_text(text)
        except OSError as exc:
            return f"not written: {exc.strerror}"
        return "written"

    @server.tool(annotations=READ_ONLY)
    def crash_once_read(marker: str) -> str:
        """Read-only; the process dies the first time (while the marker file is missing)."""
        return _crash_once(marker)

    @server.tool()
    def crash_once_write(marker: str) -> str:
        """Not read-only; the process dies the first time (while the marker file is missing)."""
        return _crash_once(marker)

    return server


def _crash_once(marker: str) -> str:
    path = Path(marker)
    if not path.exists():
        path.write_text("crashed\n")
        os._exit(3)
    return "survived"


@contextmanager
def serve_http(server: MCPServer | None = None, *, port: int = 0) -> Iterator[str]:
    """Serve ``server`` over streamable HTTP on 127.0.0.1 in a thread; yields
    its URL. Stops (and waits for the thread) on exit."""
    import asyncio

    import uvicorn

    app = (server or build("fixture-http")).streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    host, bound = sock.getsockname()
    started = threading.Event()

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            started.set()

    web = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    def run() -> None:
        asyncio.run(web.serve(sockets=[sock]))

    thread = threading.Thread(target=run, name="mcp-http", daemon=True)
    thread.start()
    if not started.wait(30):
        raise RuntimeError("the MCP HTTP server did not start within 30 s")
    try:
        yield f"http://{host}:{bound}/mcp"
    finally:
        web.should_exit = True
        thread.join(30)
        sock.close()


if __name__ == "__main__":
    print(f"fixture MCP server starting (pid {os.getpid()})", file=sys.stderr, flush=True)
    build().run()
