"""MCP servers an ACP client passes with ``session/new`` / ``session/load``,
as the session's servers.

MewCode cannot tell where a client read its servers from: Jupyter AI, for
one, reads ``.jupyter/mcp_settings.json`` in the chat's folder and its
parents, which a cloned repository can ship. So each is taken as a
project setting of its own: a project-scope server with a trust item for
its exact entry, which starts only while the project's trust allows that
entry (``MEWCODE_TRUST_PROJECT=1``, or an approval of it), confined like
every stdio server by the session's sandbox and handed only the variables
the client named. A server the project configures keeps its name; the
client's is then left out. SSE servers are not taken (the agent does not
advertise them).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio

from mewcode_kernel.core.config import McpServerConfig
from mewcode_kernel.core.config.trust_items import make_item

__all__ = ["CLIENT_SOURCE", "client_servers"]

log = logging.getLogger(__name__)

CLIENT_SOURCE = "the ACP client"
_INVALID = re.compile(r"[^A-Za-z0-9_-]+")


def _name(raw: str, taken: set[str]) -> str:
    base = _INVALID.sub("-", raw).strip("-")[:64] or "server"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def _stdio(name: str, server: McpServerStdio) -> McpServerConfig:
    env = {v.name: v.value for v in server.env or ()}
    content = {"command": server.command, "args": list(server.args), "env": env}
    what = "runs " + " ".join([server.command, *server.args])
    handed = f"; hands it {', '.join(sorted(env))} in its environment" if env else ""
    item = make_item(
        "mcp_server", CLIENT_SOURCE, name, f"MCP server {name!r} {what}{handed}", content
    )
    return McpServerConfig(
        name=name,
        type="stdio",
        command=server.command,
        args=tuple(server.args),
        env=env,
        scope="project",
        source=CLIENT_SOURCE,
        trust_item=item,
    )


def _http(name: str, server: HttpMcpServer) -> McpServerConfig:
    headers = {h.name: h.value for h in server.headers or ()}
    content = {"url": server.url, "headers": headers}
    item = make_item(
        "mcp_server", CLIENT_SOURCE, name, f"MCP server {name!r} connects to {server.url}", content
    )
    return McpServerConfig(
        name=name,
        type="http",
        url=server.url,
        headers=headers,
        scope="project",
        source=CLIENT_SOURCE,
        trust_item=item,
    )


def client_servers(
    servers: Iterable[Any] | None, configured: Iterable[str] = ()
) -> Mapping[str, McpServerConfig]:
    """The client's ``servers`` as session servers, by their (made valid,
    unique) names; none takes a name in ``configured``."""
    taken = set(configured)
    found: dict[str, McpServerConfig] = {}
    for server in servers or ():
        if isinstance(server, McpServerStdio):
            made = _stdio(_name(server.name, taken), server)
        elif isinstance(server, HttpMcpServer) or getattr(server, "type", None) == "http":
            made = _http(_name(server.name, taken), server)
        else:
            log.warning("left out MCP server %r: only stdio and http are taken", server)
            continue
        found[made.name] = made
    return found
