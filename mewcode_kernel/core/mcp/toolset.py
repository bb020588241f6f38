"""``McpToolset``: every configured MCP server as one ``Toolset``.

Entering it connects all servers at once, each within its connect budget
(``connect_timeout``, default ``DEFAULT_CONNECT_TIMEOUT``): a server that
fails or hangs is reported and left out, and never holds the others up past
its own budget. Leaving it stops them all at once within
``CLOSE_DEADLINE``. ``tools()`` lists the connected servers' tools sorted by
name; ``version`` changes when that list does (a server said its tools
changed, or came back with others), and the session's registry picks the
change up between turns only.

Project servers (``.mewcode.yaml``, ``.mcp.json``) start only when
``server_trusted(server)`` says so (default: ``project_trusted()``, itself
``MEWCODE_TRUST_PROJECT=1`` by default); a session asks whether the
project's trust (``core.trust``) allows that very entry, and, once trust is
given, starts the servers left out (``start_allowed``, before each turn). User servers
need no trust. ``sandbox_wrap`` (the session's OS sandbox) confines every
stdio server's process, user servers included.

The SDK is imported only when there is a server to start (it takes seconds),
and then off the event loop.
"""

from __future__ import annotations

import asyncio
import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..child_env import ChildEnv
from ..config import McpServerConfig
from ..events import Notice
from ..tools.base import Tool, ToolOutput
from ..tools.context import RunContext
from ..trust import TRUST_ENV, trusted_by_environment
from .adapt import CallRemote, adapt_tool, to_output
from .elicitation import Elicitations
from .launch import log_path, sandbox_hint, stdio_launch
from .logins import McpLogins
from .offerings import resource_tools

if TYPE_CHECKING:
    from ..sandbox import Sandbox
    from .connection import Connection

__all__ = [
    "CLOSE_DEADLINE",
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "TRUST_ENV",
    "McpToolset",
    "ServerStatus",
]

DEFAULT_CONNECT_TIMEOUT = 30.0
"""Seconds a server has to connect and list its tools (``connect_timeout``)."""
DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds one tool call may take (``timeout``)."""
CLOSE_DEADLINE = 5.0
"""Seconds all servers together have to stop when the session closes."""

_VALID_SERVER = re.compile(r"^[A-Za-z0-9_-]+$")

StatusState = Literal["connecting", "connected", "lost", "failed", "stopped", "untrusted"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerStatus:
    """What ``/mcp`` shows for one server."""

    name: str
    transport: Literal["stdio", "http"]
    scope: Literal["user", "project"]
    state: StatusState
    error: str | None = None
    tools: int = 0
    restarts: int = 0
    log: Path | None = None
    source: str = ""
    line: int | None = None
    server_info: str = ""
    #: its OAuth state (``logins``), ``None`` for a server without OAuth
    auth: str | None = None


class McpToolset:
    """The MCP servers of one session (see the module docstring).

    ``env`` is the host environment servers inherit from (through the
    allowlist) and ``${VAR}`` came from; ``allowlist`` adds names to
    ``DEFAULT_ENV_ALLOWLIST``; ``child_env`` is the session's rule for its
    processes' environment (its allowlist and known secrets, which also keep
    secrets out of the servers' log files; default: the secrets of ``env``).
    """

    name = "mcp"

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        root: Path,
        env: Mapping[str, str],
        allowlist: Iterable[str] = (),
        project_trusted: Callable[[], bool] | None = None,
        sandbox_wrap: Callable[[Sequence[str]], list[str]] | None = None,
        server_trusted: Callable[[McpServerConfig], bool] | None = None,
        child_env: ChildEnv | None = None,
    ) -> None:
        self.root = root
        self.sandbox_wrap = sandbox_wrap
        #: the session's sandbox (set by the session): confines each server as
        #: ``sandbox_wrap`` does, with a tool cache folder of its own
        self.sandbox: Sandbox | None = None
        self.child_env = child_env
        self._servers = dict(servers)
        self._env = dict(env)
        self._allowlist = tuple(allowlist)
        # read when servers start, from the live mapping: trust given later counts
        self.project_trusted = project_trusted or (lambda: trusted_by_environment(env))
        #: whether one project server may start (default: ``project_trusted()``);
        #: a session asks whether its trust allows that very entry
        self.server_trusted: Callable[[McpServerConfig], bool] = server_trusted or (
            lambda _server: self.project_trusted()
        )
        self._connections: dict[str, Connection] = {}
        self._skipped: dict[str, str] = {}  # name -> why it was not started
        self._tools: list[Tool] = []
        self._version = 0
        self._notices: list[Notice] = []  # what happened while running
        self._start_notes: dict[str, list[Notice]] = {}  # per server: why it did not start
        self._told_untrusted = False
        self._reported: set[str] = set()
        self._changed = asyncio.Event()
        self._open = False
        #: OAuth of the HTTP servers (the session sets its home and redactor)
        self.logins = McpLogins(reconnect=self._reconnect_state, notify=self._notice_of)
        self.elicitations = Elicitations(self._notice_of)  # a server asks the person

    # --- the Toolset protocol ---------------------------------------------------------

    @property
    def version(self) -> int:
        return self._version

    def tools(self) -> Sequence[Tool]:
        return list(self._tools)

    async def __aenter__(self) -> McpToolset:
        self._open = True
        try:
            await self._start(list(self._servers.values()))
        except BaseException:  # interrupted while connecting: stop what started
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *_: object) -> None:
        self._open = False
        await self.logins.aclose()
        deadline = asyncio.get_running_loop().time() + CLOSE_DEADLINE
        await asyncio.gather(*(c.close(deadline) for c in self._connections.values()))

    def shared(self) -> _SharedView:
        """This toolset for another session (a background turn): the same
        servers, opened and closed by this toolset's own session only."""
        return _SharedView(self)

    # --- what /mcp shows and does ---------------------------------------------------

    def statuses(self) -> list[ServerStatus]:
        out: list[ServerStatus] = []
        for name, configured in self._servers.items():
            conn = self._connections.get(name)
            server = conn.config if conn is not None else configured
            base = {
                "name": name,
                "transport": server.type,
                "scope": server.scope,
                "source": server.source,
                "line": server.line,
                "log": log_path(self.root, name) if server.type == "stdio" else None,
            }
            if conn is None:
                why = self._skipped.get(name)
                state: StatusState = "untrusted" if why == "untrusted" else "failed"
                error = None if why == "untrusted" else why
                out.append(ServerStatus(**base, state=state, error=error))
                continue
            out.append(
                ServerStatus(
                    **base,
                    state=conn.state,
                    error=conn.error,
                    tools=sum(1 for t in self._tools if t.name.startswith(f"mcp__{name}__")),
                    restarts=conn.restarts,
                    server_info=conn.server_info or "",
                    auth=self.logins.label(name),
                )
            )
        return out

    async def reconnect(self, name: str) -> ServerStatus:
        """Connect ``name`` again now; a project server the project's trust now
        allows replaces the user's definition it stood in for. Raises
        ``KeyError`` for an unknown name."""
        server = self._servers[name]
        conn = self._connections.get(name)
        wanted = server
        if server.scope == "project" and not self.server_trusted(server):
            wanted = server.shadows  # type: ignore[assignment]
        if conn is not None and conn.config is wanted:
            await conn.reconnect()
        else:
            if conn is not None:
                await conn.close(asyncio.get_running_loop().time() + CLOSE_DEADLINE)
                del self._connections[name]
                self._rebuild()
            self._skipped.pop(name, None)
            await self._start([server], report=False)
        self._start_notes.pop(name, None)
        return next(s for s in self.statuses() if s.name == name)

    def _notice_of(self, notice: Notice) -> None:
        self._notices.append(notice)

    async def _reconnect_state(self, name: str) -> str:
        return (await self.reconnect(name)).state if self._open else "stopped"

    async def start_allowed(self) -> list[str]:
        """Start the project servers the trust allows now that were left out
        (untrusted) or stood in for by the user's definition: a trust given
        after the session opened (the card, ``/trust yes``) takes effect at
        once. Returns their names (cheap when there are none: each turn asks)."""
        waiting = [
            server
            for name, server in self._servers.items()
            if server.scope == "project"
            and (
                self._skipped.get(name) == "untrusted"
                or (name in self._connections and self._connections[name].config is server.shadows)
            )
            and self.server_trusted(server)
        ]
        if not waiting or not self._open:
            return []
        deadline = asyncio.get_running_loop().time() + CLOSE_DEADLINE
        for server in waiting:
            self._skipped.pop(server.name, None)
            stale = self._connections.pop(server.name, None)
            if stale is not None:
                await stale.close(deadline)
        self._rebuild()
        await self._start(waiting)
        for server in waiting:
            if self.state_of(server.name) == "connected":
                self._notice("info", f"MCP server {server.name!r} started: the project is trusted.")
        return [s.name for s in waiting]

    def drain_notices(self) -> list[Notice]:
        """What happened since the last call (servers that failed, were
        skipped, changed their tools), for the session to show. Problems a
        ``reconnect`` has since solved are not repeated."""
        out: list[Notice] = []
        untrusted = [
            server
            for name, server in self._servers.items()
            if self._skipped.get(name) == "untrusted"
            or (name in self._connections and self._connections[name].config is server.shadows)
        ]
        if untrusted and not self._told_untrusted:
            self._told_untrusted = True
            out.append(Notice(level="warning", message=_untrusted_message(untrusted)))
        for notes in self._start_notes.values():
            out += notes
        self._start_notes.clear()
        out += self._notices
        self._notices = []
        return out

    async def wait_until(self, predicate: Callable[[McpToolset], bool]) -> None:
        """Wait until ``predicate(self)`` holds; it is checked whenever a
        server's state or tools change (bound it with ``asyncio.timeout``)."""
        while True:
            changed = self._changed
            if predicate(self):
                return
            await changed.wait()

    def connections(self) -> dict[str, Connection]:
        """The servers that are connected (or lost, and started again on use)."""
        return {n: c for n, c in self._connections.items() if c.state in ("connected", "lost")}

    def state_of(self, name: str) -> str | None:
        conn = self._connections.get(name)
        return conn.state if conn is not None else None

    # --- starting servers -----------------------------------------------------------

    async def _start(self, servers: list[McpServerConfig], *, report: bool = True) -> None:
        """Start ``servers`` concurrently; ``report``: leave notices about the
        ones skipped or failed (``/mcp reconnect`` shows its own result)."""
        to_start: list[McpServerConfig] = []
        for server in servers:
            notes = self._start_notes.setdefault(server.name, []) if report else []
            if not _VALID_SERVER.match(server.name):
                why = (
                    f"its name {server.name!r} has characters outside [A-Za-z0-9_-], which tool "
                    "names cannot carry"
                )
                self._skipped[server.name] = why
                notes.append(
                    Notice(
                        level="warning",
                        message=f"MCP server {server.name!r} ({server.origin}) was not started: "
                        f"{why}.",
                    )
                )
                continue
            if server.scope == "project":
                if not self.server_trusted(server):
                    if server.shadows is None:
                        self._skipped[server.name] = "untrusted"
                        continue
                    server = server.shadows  # the user's own definition, until trusted
            to_start.append(server)
        if not to_start:
            return
        await _load_sdk()
        from .connection import Connection

        version = _version()
        for server in to_start:
            if server.unset_vars and report:
                names = ", ".join(f"${{{v}}}" for v in server.unset_vars)
                self._start_notes[server.name].append(
                    Notice(
                        level="warning",
                        message=f"MCP server {server.name!r} ({server.origin}): {names} not set; "
                        "used as empty.",
                    )
                )
            launch = (
                stdio_launch(
                    server,
                    root=self.root,
                    host_env=self._env,
                    allowlist=self._allowlist,
                    wrap=self.sandbox_wrap,
                    rule=self.child_env,
                    sandbox=self.sandbox,
                )
                if server.type == "stdio"
                else None
            )
            self._connections[server.name] = Connection(
                server,
                launch=launch,
                client_info=("mewcode", version),
                connect_timeout=server.connect_timeout or DEFAULT_CONNECT_TIMEOUT,
                call_timeout=server.timeout or DEFAULT_CALL_TIMEOUT,
                on_change=self._on_change,
                auth=self.logins.for_server(
                    server, server.connect_timeout or DEFAULT_CONNECT_TIMEOUT
                ),
                elicit=self.elicitations.callback(server.name),
            )
        conns = [self._connections[s.name] for s in to_start]
        await asyncio.gather(*(c.connect() for c in conns))
        for conn in conns:
            if conn.state == "failed" and report:
                off = self.sandbox is not None and self.sandbox.settings.network == "off"
                hint = sandbox_hint(conn.launch, network_off=off)
                self._start_notes[conn.name].append(
                    Notice(
                        level="warning",
                        message=f"MCP server {conn.name!r} could not be started: {conn.error}{hint}",
                    )
                )

    # --- tools ------------------------------------------------------------------------

    def _on_change(self, conn: Connection, tools_changed: bool) -> None:
        if tools_changed:
            self._rebuild(announce=conn if conn.state == "connected" and self._open else None)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _rebuild(self, announce: Connection | None = None) -> None:
        tools: list[Tool] = []
        for conn in self._connections.values():
            for info in conn.tools:
                made = adapt_tool(conn.name, info, self._caller(conn, str(info.name)))
                if isinstance(made, str):
                    self._notice("warning", made, once=True)
                else:
                    tools.append(made)
        if any(c.catalog.resources or c.catalog.templates for c in self.connections().values()):
            tools += resource_tools(self)
        tools.sort(key=lambda t: t.name)
        if _shape(tools) == _shape(self._tools):
            return
        before, self._tools = self._tools, tools
        self._version += 1
        if announce is not None:
            self._announce(announce.name, before, tools)

    def _announce(self, server: str, before: list[Tool], after: list[Tool]) -> None:
        prefix = f"mcp__{server}__"
        old = {t.name[len(prefix) :]: t for t in before if t.name.startswith(prefix)}
        new = {t.name[len(prefix) :]: t for t in after if t.name.startswith(prefix)}
        if not old or _shape(list(old.values())) == _shape(list(new.values())):
            return  # its first listing, or another server's change
        added = ", ".join(sorted(new.keys() - old.keys())) or "none"
        removed = ", ".join(sorted(old.keys() - new.keys())) or "none"
        self._notice(
            "info",
            f"MCP server {server!r} changed its tools (added: {added}; removed: {removed}); "
            "the new list is offered from the next turn.",
        )

    def _caller(self, conn: Connection, remote: str) -> CallRemote:
        source = f"{conn.name}/{remote}"

        async def run(ctx: RunContext, args: dict[str, Any], read_only: bool) -> ToolOutput:
            result = await conn.call(remote, dict(args), read_only=read_only, emit=ctx.emit)
            return to_output(result, source=source)

        return run

    def _notice(
        self, level: Literal["info", "warning", "error"], message: str, *, once: bool = False
    ) -> None:
        if once:
            if message in self._reported:
                return
            self._reported.add(message)
        self._notices.append(Notice(level=level, message=message))


def _untrusted_message(servers: list[McpServerConfig]) -> str:
    names = ", ".join(repr(s.name) for s in servers)
    files = ", ".join(dict.fromkeys(Path(s.source).name for s in servers))
    shadowing = [repr(s.name) for s in servers if s.shadows is not None]
    kept = (
        f" Your own definition of {', '.join(shadowing)} (~/.mewcode/config.yaml) is used instead."
        if shadowing
        else ""
    )
    return (
        f"Project MCP server(s) {names} (from {files}) were not started: this project is not "
        f"trusted. Trust it to start them ({TRUST_ENV}=1 for headless runs), then "
        f"`/mcp reconnect NAME`.{kept}"
    )


def _shape(tools: list[Tool]) -> list[tuple[Any, ...]]:
    """What the model (and the permission engine) sees of ``tools``."""
    return [(t.spec(), t.read_only, t.annotations) for t in tools]


class _SharedView:
    """Another session's window on a ``McpToolset``: same tools and version;
    entering and leaving it opens and closes nothing."""

    def __init__(self, toolset: McpToolset) -> None:
        self.toolset = toolset
        self.name = toolset.name

    @property
    def version(self) -> int:
        return self.toolset.version

    def tools(self) -> Sequence[Tool]:
        return self.toolset.tools()

    async def __aenter__(self) -> _SharedView:
        return self

    async def __aexit__(self, *_: object) -> None:
        return None


async def _load_sdk() -> None:
    """Import the SDK in a thread: it takes seconds, and the kernel's event
    loop keeps serving meanwhile."""
    await asyncio.to_thread(importlib.import_module, "mewcode_kernel.core.mcp.connection")


def _version() -> str:
    try:
        return metadata.version("mewcode")
    except metadata.PackageNotFoundError:
        return "0"
