"""``/mcp``: the session's MCP servers and their state; ``/mcp reconnect NAME``;
``/mcp login NAME [URL]`` and ``/mcp logout NAME`` for servers that use OAuth."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..mcp import TRUST_ENV, ServerStatus
from ..mcp.offerings import resource_listing
from ..userdirs import display_path
from .mcp_login import login_command, logout_command
from .registry import CommandResult, command

if TYPE_CHECKING:
    from ..agent_session import AgentSession

_USAGE = (
    "Usage: `/mcp` (list the servers), `/mcp reconnect NAME`, `/mcp resources [NAME]`, "
    "`/mcp login NAME [URL]` or `/mcp logout NAME`."
)


def _fail(message: str) -> CommandResult:
    return CommandResult(markdown=message, error=True)


@command(
    "mcp",
    help="List the MCP servers with their state; reconnect one; log in to or out of one.",
    usage="[reconnect|resources|login|logout NAME]",
)
async def mcp_command(session: AgentSession, args: str) -> CommandResult:
    words = args.split()
    mcp = session.mcp
    if mcp is None:
        if words:
            return _fail("No MCP servers are configured, so there is nothing to reconnect.")
        return CommandResult(
            markdown="No MCP servers are configured. Add them under `mcp_servers:` in "
            "`.mewcode.yaml` or `~/.mewcode/config.yaml`, or in `.mcp.json`.",
            data=[],
        )
    if not words:
        return _table(session, mcp.statuses())
    if words[0] == "resources" and len(words) <= 2:
        return _resources(session, words[1] if len(words) == 2 else None)
    if words[0] == "login" and len(words) in (2, 3):
        return await login_command(mcp, words[1], words[2] if len(words) == 3 else None)
    if words[0] == "logout" and len(words) == 2:
        return await logout_command(mcp, words[1])
    if words[0] != "reconnect" or len(words) != 2:
        return _fail(_USAGE)
    name = words[1]
    try:
        status = await mcp.reconnect(name)
    except KeyError:
        known = ", ".join(f"`{s.name}`" for s in mcp.statuses())
        return _fail(f"There is no MCP server named `{name}`. Configured: {known}.")
    if status.state == "connected":
        return CommandResult(
            markdown=f"Reconnected `{name}`: {status.tools} tool(s); they are offered from "
            "the next turn.",
            data=_row(status),
        )
    if status.state == "untrusted":
        return _fail(
            f"`{name}` is defined by this project, which is not trusted: trust the project "
            f"first ({TRUST_ENV}=1 for headless runs)."
        )
    return _fail(f"`{name}` could not be connected: {status.error}")


def _table(session: AgentSession, statuses: list[ServerStatus]) -> CommandResult:
    up = session.mcp.connections() if session.mcp is not None else {}
    rows: list[dict[str, object]] = []
    for s in statuses:
        catalog = up[s.name].catalog if s.name in up else None
        prompts = len(catalog.prompts) if catalog else 0
        resources = len(catalog.resources) + len(catalog.templates) if catalog else 0
        rows.append({**_row(s), "prompts": prompts, "resources": resources})
    # columns only where some server has something to show in them
    auth = any(s.auth for s in statuses)
    offers = any(r["prompts"] or r["resources"] for r in rows)
    head = ["server", "state", *(["auth"] if auth else []), "tools"]
    head += [*(["prompts", "resources"] if offers else []), "restarts", "transport"]
    head += ["defined in", "log"]
    right = {"tools", "prompts", "resources", "restarts"}
    lines = [
        "| " + " | ".join(head) + " |",
        "| " + " | ".join("---:" if h in right else "---" for h in head) + " |",
    ]
    for s, row in zip(statuses, rows, strict=True):
        log = f"`{_relative(s.log, session.root)}`" if s.log is not None else "—"
        cells = [f"`{s.name}`", _cell(_state(s)), *([s.auth or "—"] if auth else []), s.tools]
        cells += [*([row["prompts"], row["resources"]] if offers else []), s.restarts]
        cells += [s.transport, _cell(_where(s, session.root)), log]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    footer = (
        "\n`/mcp reconnect NAME` connects a server again; its tools are offered from the next turn."
    )
    if auth:
        footer += (
            " `/mcp login NAME` authorizes MewCode with a server that uses OAuth; "
            "`/mcp logout NAME` revokes and forgets its tokens."
        )
    if offers:
        footer += (
            " `/mcp resources [NAME]` lists the resources (attach one to a prompt with "
            "`@server:uri`); a prompt runs as `/mcp__server__prompt [args]`."
        )
    lines.append(footer)
    return CommandResult(markdown="\n".join(lines), data=rows)


def _resources(session: AgentSession, name: str | None) -> CommandResult:
    assert session.mcp is not None
    if name is not None and name not in session.mcp.connections():
        return _fail(f"`{name}` is not a connected MCP server (see `/mcp`).")
    text = resource_listing(session.mcp, name)
    body = "\n".join(
        f"- `{line}`" if line != "No resources." else line for line in text.split("\n")
    )
    return CommandResult(markdown=body, data=text.split("\n"))


def _state(s: ServerStatus) -> str:
    if s.state == "connected":
        return "connected" + (f" ({s.server_info})" if s.server_info else "")
    if s.state == "untrusted":
        return f"not started: the project is not trusted ({TRUST_ENV}=1 for headless runs)"
    if s.state == "lost":
        return f"stopped ({s.error}); restarted on the next call"
    if s.error:
        return f"{s.state}: {s.error}"
    return s.state


def _row(s: ServerStatus) -> dict[str, object]:
    return {
        "name": s.name,
        "state": s.state,
        "error": s.error,
        "tools": s.tools,
        "restarts": s.restarts,
        "transport": s.transport,
        "scope": s.scope,
        "log": str(s.log) if s.log is not None else None,
        "auth": s.auth,
    }


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _where(s: ServerStatus, root: Path) -> str:
    if not s.source:
        return "—"
    path = Path(s.source)
    shown = _relative(path, root)
    if shown == str(path):
        shown = display_path(path)
    return f"{shown}:{s.line}" if s.line else shown


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")
