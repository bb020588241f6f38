"""One MCP server's connection: connect within a budget, list its tools,
call them with a timeout, notice when the server goes away and start it
again on the next call.

The SDK's client (its task groups and cancel scopes) lives in one task per
connection, the *runner*: it enters the ``Client``, lists the tools, then
waits until it is asked to stop, the transport is lost, or the server said
its tool list changed (it lists them again). Calls come from the turn's
tasks and go through that client. A runner is never cancelled from outside
with ``Task.cancel`` (that could cut the SDK's shielded shutdown short):
it is told to stop, or its own cancel scope is cancelled.

Restarts: a lost server is started again on the next call, with backoff,
at most ``MAX_RESTARTS_IN_A_ROW`` times before a call succeeds again; each
outcome is a ``Notice``. A call in flight when the server went away is
retried only if the tool is read-only.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import anyio
import httpx2
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import (
    REQUEST_TIMEOUT,
    Implementation,
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ToolListChangedNotification,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from ..config import McpServerConfig
from ..errors import ToolError
from ..events import AgentEvent, Notice
from .catalog import Catalog, list_catalog, listen_for_catalog_changes
from .failures import ServerLost, describe_failure, is_lost, root_cause
from .launch import StdioLaunch
from .oauth import ServerAuth
from .tool_listing import list_tools, listen_for_list_changes, tool_key
from .transport import open_transport

__all__ = ["MAX_RESTARTS_IN_A_ROW", "Connection", "State"]

T = TypeVar("T")

# The SDK logs through "mcp.*" and a bare "client" logger. With no handler
# anywhere, Python prints warnings to stderr, which in a kernel is the cell:
# a NullHandler keeps them out of notebooks (and still lets them propagate to
# whatever logging the user configures).
for _name in ("mcp", "client"):
    logging.getLogger(_name).addHandler(logging.NullHandler())

State = Literal["connecting", "connected", "lost", "failed", "stopped"]

MAX_RESTARTS_IN_A_ROW = 3
_BACKOFF = (0.0, 0.5, 1.0)  # before the 1st, 2nd, 3rd restart in a row
_STOP_GRACE = 1.0  # after a stop was requested and the deadline passed: cancel, then wait this long


@dataclass(frozen=True, kw_only=True, slots=True)
class _Started:
    tools: list[Any]
    protocol: str
    server_info: str
    catalog: Catalog


class _Runner:
    """One run of the server: the task holding the SDK client, and what
    tells it to stop or to list the tools again."""

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.stop = asyncio.Event()
        self.lost = asyncio.Event()
        self.relist = asyncio.Event()
        self.recatalog = asyncio.Event()  # its prompts or resources changed
        self.scope: anyio.CancelScope | None = None
        self.client: Client | None = None

    def cut(self) -> None:
        """End it now: its cancel scope closes the connection (the SDK's
        shutdown of a stdio process is shielded and bounded)."""
        if self.scope is not None:
            self.scope.cancel()
        elif self.task is not None:  # not yet inside its scope
            self.task.cancel()


class Connection:
    """One configured server. ``tools`` is its last listing (SDK ``Tool``s);
    ``on_change(connection, tools_changed)`` is called whenever ``state`` or
    ``tools`` change."""

    def __init__(
        self,
        config: McpServerConfig,
        *,
        launch: StdioLaunch | None,
        client_info: tuple[str, str],
        connect_timeout: float,
        call_timeout: float,
        on_change: Callable[[Connection, bool], None],
        auth: ServerAuth | None = None,
        elicit: Any = None,
    ) -> None:
        self.config = config
        #: the server's OAuth (an HTTP server without its own Authorization header)
        self.auth = auth
        self.name = config.name
        self.launch = launch
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.state: State = "stopped"
        self.error: str | None = None
        self.tools: list[Any] = []
        #: its prompts and resources (``catalog``), listed like its tools
        self.catalog = Catalog()
        #: answers the server's elicitation requests (``elicitation``)
        self.elicit = elicit
        self.restarts = 0
        self.protocol: str | None = None
        self.server_info: str | None = None
        self._client_info = client_info
        self._on_change = on_change
        self._in_a_row = 0
        self._runner: _Runner | None = None
        self._dying: set[_Runner] = set()
        self._lock = asyncio.Lock()

    # --- lifecycle ---------------------------------------------------------------------

    async def connect(self) -> None:
        """Connect and list tools within ``connect_timeout``; on failure or
        timeout ``state`` is ``failed`` with the reason in ``error`` (never raises)."""
        await self._retire(self._runner)
        runner = self._runner = _Runner()
        self._set("connecting", None)
        ready: asyncio.Future[_Started] = asyncio.get_running_loop().create_future()
        runner.task = asyncio.create_task(self._run(runner, ready), name=f"mcp:{self.name}")
        try:
            started = await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout)
        except asyncio.CancelledError:  # the turn was interrupted: the next call tries again
            ready.cancel()
            self._abandon(runner)
            self._set("failed", "the start was interrupted")
            raise
        except TimeoutError:
            ready.cancel()
            self._abandon(runner)
            self._set(
                "failed",
                f"no answer within {self.connect_timeout:g} s (connect + tool listing); "
                f"see {self._log_hint()}",
            )
            return
        except Exception as exc:
            self._abandon(runner)
            if self.auth is not None and self.auth.needs_login:
                self._set("failed", self._login_hint())
                return
            self._set("failed", describe_failure(exc) + self._log_suffix(exc))
            return
        self.tools, self.catalog = started.tools, started.catalog
        self.protocol, self.server_info = started.protocol, started.server_info
        self._set("connected", None, tools_changed=True)

    async def close(self, deadline: float) -> None:
        """Stop the server; one that has not stopped by ``deadline`` (a
        ``loop.time()``) is cut short. The state becomes ``stopped``."""
        await self._retire(self._runner, deadline)
        for runner in list(self._dying):
            await self._wait(runner, deadline)
        self._set("stopped", self.error if self.state == "failed" else None)

    async def reconnect(self) -> None:
        """Connect again now (``/mcp reconnect``), whatever the state."""
        async with self._lock:
            self._in_a_row = 0
            await self.connect()

    def _live(self) -> tuple[_Runner, Client] | None:
        runner = self._runner
        if runner is None or runner.client is None or self.state != "connected":
            return None
        return runner, runner.client

    def _abandon(self, runner: _Runner) -> None:
        """A connect that failed or ran out of budget: cut the half-open
        connection; it finishes closing in the background (awaited on close)."""
        runner.cut()
        if self._runner is runner:
            self._runner = None
        if runner.task is not None and not runner.task.done():
            self._dying.add(runner)
            runner.task.add_done_callback(lambda _: self._dying.discard(runner))

    async def _retire(self, runner: _Runner | None, deadline: float | None = None) -> None:
        """Ask ``runner`` to stop and wait for it (until ``deadline``, then cut it)."""
        if runner is None:
            return
        if self._runner is runner:
            self._runner = None
        runner.stop.set()
        if deadline is None:
            deadline = asyncio.get_running_loop().time() + 5.0
        await self._wait(runner, deadline)

    async def _wait(self, runner: _Runner, deadline: float) -> None:
        task = runner.task
        if task is None:
            return
        loop = asyncio.get_running_loop()
        done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - loop.time()))
        if not done:
            runner.cut()
            await asyncio.wait({task}, timeout=_STOP_GRACE)

    # --- the runner --------------------------------------------------------------------

    async def _run(self, runner: _Runner, ready: asyncio.Future[_Started]) -> None:
        def on_lost() -> None:
            if not runner.stop.is_set():
                runner.lost.set()

        async def on_message(message: Any) -> None:
            if isinstance(message, ToolListChangedNotification):
                runner.relist.set()
            elif isinstance(
                message, PromptListChangedNotification | ResourceListChangedNotification
            ):
                runner.recatalog.set()

        try:
            with anyio.CancelScope() as scope:
                runner.scope = scope
                name, version = self._client_info
                auth = self.auth.for_connect() if self.auth is not None else None
                async with Client(
                    open_transport(self.config, self.launch, on_lost, auth),
                    client_info=Implementation(name=name, version=version),
                    message_handler=on_message,
                    elicitation_callback=self.elicit,
                ) as client:
                    tools = await list_tools(client)
                    info = client.server_info
                    started = _Started(
                        tools=tools,
                        protocol=client.protocol_version,
                        server_info=f"{info.name} {info.version}".strip() if info else "",
                        catalog=await list_catalog(client),
                    )
                    if ready.done():  # the connect gave up meanwhile
                        return
                    runner.client = client
                    ready.set_result(started)
                    async with anyio.create_task_group() as tg:
                        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                            tg.start_soon(listen_for_list_changes, client, runner.relist)
                            tg.start_soon(listen_for_catalog_changes, client, runner.recatalog)
                        await self._serve(runner, client)
                        tg.cancel_scope.cancel()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not runner.stop.is_set():
                self._lost(runner, describe_failure(exc))
        finally:
            runner.client = None
            if not ready.done():  # cut short while connecting
                ready.cancel()

    async def _serve(self, runner: _Runner, client: Client) -> None:
        """Wait for a stop, a loss or a changed tool list (listed again at once)."""
        while True:
            events = (runner.stop, runner.lost, runner.relist, runner.recatalog)
            waiters = [asyncio.ensure_future(e.wait()) for e in events]
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waiters:
                    w.cancel()
            if runner.stop.is_set():
                return
            if runner.lost.is_set():
                self._lost(runner, self._gone_reason())
                return
            if runner.recatalog.is_set():
                runner.recatalog.clear()
                catalog = await list_catalog(client)
                if catalog.key() != self.catalog.key():
                    self.catalog = catalog  # resources may come or go: the tools are rebuilt
                    self._set(self.state, self.error, tools_changed=True)
                continue
            runner.relist.clear()
            try:
                tools = await list_tools(client)
            except Exception as exc:  # the server is gone or broken: the next call finds out
                self._lost(runner, describe_failure(exc))
                return
            if [tool_key(t) for t in tools] != [tool_key(t) for t in self.tools]:
                self.tools = tools
                self._set(self.state, self.error, tools_changed=True)

    def _lost(self, runner: _Runner, reason: str) -> None:
        """The server went away: the next call starts it again."""
        if runner is not self._runner:
            return  # an earlier run, already replaced
        if self.state == "connected":
            runner.stop.set()
            self._set("lost", reason)

    def _gone_reason(self) -> str:
        if self.launch is not None:
            return f"the server process exited; see {self._log_hint()}"
        return "the connection was closed"

    # --- calls -------------------------------------------------------------------------

    async def call(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        read_only: bool,
        emit: Callable[[AgentEvent], None],
    ) -> Any:
        """Call ``tool`` (its remote name); returns the SDK's ``CallToolResult``.
        Raises ``ToolError`` with a sentence for the model when it cannot."""
        if self.elicit is not None:  # what a request for input says shows in this turn
            self.elicit.emit = emit
        runner, client = await self._ready(emit)
        try:
            result = await self._call(client, tool, args)
        except ServerLost as lost:
            self._lost(runner, lost.reason)
            if not read_only:
                raise ToolError(
                    f"MCP server {self.name!r} stopped while running {tool} ({lost.reason}). The "
                    "call was not retried: the tool is not marked read-only, so it may have "
                    "done part of its work. The server is started again on the next call."
                ) from None
            runner, client = await self._ready(emit)
            try:
                result = await self._call(client, tool, args)
            except ServerLost as again:
                self._lost(runner, again.reason)
                raise ToolError(
                    f"MCP server {self.name!r} stopped again while running {tool} ({again.reason})."
                ) from None
        self._in_a_row = 0
        return result

    async def request(
        self, what: str, send: Callable[[Client], Awaitable[T]], emit: Callable[[AgentEvent], None]
    ) -> T:
        """One request other than a tool call (a prompt, a resource), within
        the call timeout; ``ToolError`` with a sentence when it fails."""
        runner, client = await self._ready(emit)
        try:
            return await asyncio.wait_for(send(client), self.call_timeout)
        except TimeoutError:
            raise ToolError(
                f"{what} on MCP server {self.name!r} timed out after {self.call_timeout:g} s."
            ) from None
        except MCPError as exc:
            if is_lost(exc, http=self.launch is None):
                self._lost(runner, describe_failure(exc))
            raise ToolError(
                f"MCP server {self.name!r} refused {what}: {exc.message} (error {exc.code})"
            ) from None
        except (ValidationError, OSError, httpx2.HTTPError, anyio.BrokenResourceError) as exc:
            raise ToolError(
                f"MCP server {self.name!r} failed {what}: {describe_failure(exc)}"
            ) from None

    async def _call(self, client: Client, tool: str, args: dict[str, Any]) -> Any:
        try:
            return await client.call_tool(tool, args, read_timeout_seconds=self.call_timeout)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise ToolError(
                    f"{tool} on MCP server {self.name!r} timed out after {self.call_timeout:g} s "
                    "(the server was asked to cancel it). Set `timeout` for this server in the "
                    "config if it needs longer."
                ) from None
            if is_lost(exc, http=self.launch is None):
                raise ServerLost(describe_failure(exc)) from None
            raise ToolError(
                f"MCP server {self.name!r} refused the call to {tool}: {exc.message} "
                f"(error {exc.code})"
            ) from None
        except ValidationError as exc:
            raise ToolError(
                f"MCP server {self.name!r} answered {tool} with a result that does not follow "
                f"the protocol: {exc.error_count()} problem(s), first: {exc.errors()[0]['msg']}"
            ) from None
        except (
            OSError,
            httpx2.HTTPError,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
        ) as exc:
            raise ServerLost(describe_failure(exc)) from None

    async def _ready(self, emit: Callable[[AgentEvent], None]) -> tuple[_Runner, Client]:
        """The live run and its client, starting the server again first if it was lost."""
        async with self._lock:
            live = self._live()
            if live is not None:
                return live
            if self.auth is not None and self.auth.needs_login:
                raise ToolError(f"MCP server {self.name!r} is not connected: {self._login_hint()}.")
            if self.state == "failed" and self._in_a_row >= MAX_RESTARTS_IN_A_ROW:
                raise ToolError(
                    f"MCP server {self.name!r} is down: {self.error}. It was restarted "
                    f"{MAX_RESTARTS_IN_A_ROW} times in a row without a successful call; "
                    f"`/mcp reconnect {self.name}` tries again."
                )
            if self.state not in ("lost", "failed"):
                raise ToolError(f"MCP server {self.name!r} is not connected ({self.state}).")
            why = self.error or "it stopped"
            while self._in_a_row < MAX_RESTARTS_IN_A_ROW:
                delay = _BACKOFF[min(self._in_a_row, len(_BACKOFF) - 1)]
                self._in_a_row += 1
                noun = "restart" if self.launch is not None else "reconnect"
                attempt = f"{noun} {self._in_a_row} of at most {MAX_RESTARTS_IN_A_ROW} in a row"
                if delay:
                    await asyncio.sleep(delay)
                started = time.perf_counter()
                await self.connect()
                live = self._live()
                if live is not None:
                    self.restarts += 1
                    took = time.perf_counter() - started
                    verb = "restarted" if self.launch is not None else "reconnected"
                    emit(
                        Notice(
                            level="info",
                            message=f"MCP server {self.name!r} was {verb} ({why}; {attempt}, "
                            f"{took:.1f} s).",
                        )
                    )
                    return live
                verb = "restarted" if self.launch is not None else "reconnected"
                emit(
                    Notice(
                        level="warning",
                        message=f"MCP server {self.name!r} could not be {verb} ({attempt}): "
                        f"{self.error}",
                    )
                )
            raise ToolError(
                f"MCP server {self.name!r} is down: {self.error}. It could not be restarted "
                f"({MAX_RESTARTS_IN_A_ROW} attempts); `/mcp reconnect {self.name}` tries again."
            )

    # --- state -------------------------------------------------------------------------

    def _set(self, state: State, error: str | None, *, tools_changed: bool = False) -> None:
        self.state, self.error = state, error
        self._on_change(self, tools_changed)

    def _login_hint(self) -> str:
        assert self.auth is not None
        had = self.auth.store.state() != "none"
        why = "its login expired or was revoked" if had else "it asks for an OAuth login"
        return f"{why}; `/mcp login {self.name}` authorizes MewCode"

    def _log_hint(self) -> str:
        return str(self.launch.log_path) if self.launch is not None else "the server's own logs"

    def _log_suffix(self, exc: BaseException) -> str:
        if self.launch is None or isinstance(root_cause(exc), FileNotFoundError):
            return ""
        return f"; see {self.launch.log_path}"
