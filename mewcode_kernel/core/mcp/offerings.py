"""What MCP servers offer besides tools, as MewCode uses it:

* prompts as slash commands ``/mcp__<server>__<prompt> [args]``: the
  arguments given by position or as ``name=value``, the rendered messages
  becoming the turn's prompt;
* resources read by the model through ``read_mcp_resource`` (and listed by
  ``list_mcp_resources``), offered while a connected server has resources;
* ``@<server>:<uri>`` in a prompt: the resource attached to that turn.

A resource larger than ``catalog.MAX_RESOURCE_CHARS`` is refused with a
sentence saying so, wherever it was asked for.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..errors import ToolError
from ..events import AgentEvent, Notice
from ..tools.base import Tool
from ..tools.context import RunContext


class McpToolset(Protocol):
    """What this module needs of the session's ``McpToolset``: its servers
    (``connection.Connection``) that are up, by name."""

    def connections(self) -> Mapping[str, Any]: ...


__all__ = [
    "PROMPT_PREFIX",
    "attach_mentions",
    "find_prompt",
    "prompt_usage",
    "read_resource_text",
    "render_prompt",
    "resource_listing",
    "resource_tools",
]

PROMPT_PREFIX = "mcp__"
# @server:uri — a server name as config allows it, then a URI up to whitespace
_MENTION = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]+):(\S+)")
_MAX_MENTIONS = 10


def _ignore(_event: AgentEvent) -> None:
    return None


# --- prompts -------------------------------------------------------------------------


def find_prompt(mcp: McpToolset, command: str) -> tuple[str, Any] | None:
    """``(server, prompt)`` for a command name ``mcp__<server>__<prompt>``."""
    if not command.startswith(PROMPT_PREFIX):
        return None
    for name, conn in mcp.connections().items():
        head = f"{PROMPT_PREFIX}{name}__"
        if command.startswith(head):
            wanted = command[len(head) :]
            for prompt in conn.catalog.prompts:
                if str(prompt.name) == wanted:
                    return name, prompt
    return None


def prompt_usage(server: str, prompt: Any) -> str:
    args = " ".join(
        f"<{a.name}>" if a.required else f"[{a.name}]" for a in (prompt.arguments or ())
    )
    return f"`/{PROMPT_PREFIX}{server}__{prompt.name}{' ' + args if args else ''}`"


def prompt_arguments(prompt: Any, text: str) -> dict[str, str]:
    """The arguments of ``text`` for ``prompt``: ``name=value`` for a declared
    name, the rest by position; ``ValueError`` saying what is wrong."""
    declared = [str(a.name) for a in (prompt.arguments or ())]
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"the arguments cannot be read: {exc}") from None
    named: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in declared:
            named[key] = value
        else:
            positional.append(word)
    free = [n for n in declared if n not in named]
    if len(positional) > len(free):
        if not free and not declared:
            raise ValueError("this prompt takes no arguments")
        # the last free argument takes the rest, as typed
        if not free:
            raise ValueError(f"too many arguments (it takes {', '.join(declared)})")
        positional = [*positional[: len(free) - 1], " ".join(positional[len(free) - 1 :])]
    named.update(zip(free, positional, strict=False))
    missing = [str(a.name) for a in (prompt.arguments or ()) if a.required and a.name not in named]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    return named


async def render_prompt(mcp: McpToolset, server: str, prompt: Any, text: str) -> str:
    """The prompt's messages from the server, as the text of a user turn."""
    args = prompt_arguments(prompt, text)
    conn = mcp.connections()[server]
    result = await conn.request(
        f"prompt {prompt.name}", lambda c: c.get_prompt(str(prompt.name), args), _ignore
    )
    parts: list[str] = []
    for message in result.messages:
        body = _content_text(message.content, f"{server}/{prompt.name}")
        parts.append(body if message.role == "user" else f"[{message.role}]\n{body}")
    return "\n\n".join(p for p in parts if p.strip())


def _content_text(block: Any, source: str) -> str:
    from .adapt import to_output

    shown = to_output(type("R", (), {"content": [block]})(), source=source)
    return "\n".join(getattr(p, "text", "[image]") for p in shown.content)


# --- resources -----------------------------------------------------------------------


async def read_resource_text(
    mcp: McpToolset, server: str, uri: str, emit: Callable[[AgentEvent], None] = _ignore
) -> str:
    """The resource as text (``ToolError`` with a sentence when it cannot)."""
    from .catalog import ResourceTooLarge, resource_parts

    conn = mcp.connections().get(server)
    if conn is None:
        known = ", ".join(mcp.connections()) or "none"
        raise ToolError(f"There is no connected MCP server named {server!r} (connected: {known}).")
    result = await conn.request(f"reading {uri}", lambda c: c.read_resource(uri), emit)
    try:
        parts = resource_parts(uri, list(result.contents))
    except ResourceTooLarge as exc:
        raise ToolError(f"MCP server {server!r}: {exc}") from None
    if not parts:
        return f"(resource {uri} is empty)"
    return "\n\n".join(
        (f"--- {where} ({mime}) ---\n" if len(parts) > 1 else "") + text
        for where, mime, text in parts
    )


def resource_listing(mcp: McpToolset, server: str | None = None) -> str:
    lines: list[str] = []
    for name, conn in mcp.connections().items():
        if server is not None and name != server:
            continue
        for r in conn.catalog.resources:
            mime = f" ({r.mime_type})" if r.mime_type else ""
            about = f": {r.description}" if r.description else ""
            lines.append(f"{name}: {r.uri} — {r.name}{mime}{about}")
        for t in conn.catalog.templates:
            lines.append(f"{name}: {t.uri_template} (template) — {t.name}")
    return "\n".join(lines) or "No resources."


def resource_tools(mcp: McpToolset) -> list[Tool]:
    """``list_mcp_resources`` and ``read_mcp_resource`` (both read-only)."""

    async def list_run(ctx: RunContext, args: dict[str, Any]) -> str:
        server = args.get("server")
        return resource_listing(mcp, server if isinstance(server, str) and server else None)

    async def read_run(ctx: RunContext, args: dict[str, Any]) -> str:
        server, uri = args.get("server"), args.get("uri")
        if not isinstance(server, str) or not isinstance(uri, str) or not uri:
            raise ToolError("read_mcp_resource needs `server` and `uri` (strings).")
        return await read_resource_text(mcp, server, uri, ctx.emit)

    common: dict[str, Any] = {
        "read_only": True,
        "kind": "read",
        "family": "mcp",
        "background_ok": True,
        "large_output": "offload",
    }
    return [
        Tool(
            name="list_mcp_resources",
            description="List the resources the connected MCP servers offer (server: uri — "
            "name). Optional `server` narrows it to one server.",
            input_schema={
                "type": "object",
                "properties": {"server": {"type": "string"}},
                "additionalProperties": False,
            },
            run=list_run,
            display_key="server",
            **common,
        ),
        Tool(
            name="read_mcp_resource",
            description="Read a resource of a connected MCP server by its URI (see "
            "list_mcp_resources).",
            input_schema={
                "type": "object",
                "properties": {"server": {"type": "string"}, "uri": {"type": "string"}},
                "required": ["server", "uri"],
                "additionalProperties": False,
            },
            run=read_run,
            display_key="uri",
            subject_arg="uri",
            **common,
        ),
    ]


async def attach_mentions(mcp: McpToolset | None, prompt: str) -> tuple[list[str], list[Notice]]:
    """The resources ``@<server>:<uri>`` in ``prompt`` names, as context blocks
    for the turn; what could not be attached is said both to the model (a
    block) and to the person (a notice). A name that is no connected server
    is left alone (an e-mail address, a decorator)."""
    if mcp is None:
        return [], []
    connected = mcp.connections()
    blocks: list[str] = []
    notices: list[Notice] = []
    seen: set[tuple[str, str]] = set()
    for match in _MENTION.finditer(prompt):
        server, uri = match.group(1), match.group(2).rstrip(".,;:!?)]}\"'")
        if server not in connected or (server, uri) in seen:
            continue
        seen.add((server, uri))
        if len(seen) > _MAX_MENTIONS:
            notices.append(
                Notice(level="warning", message=f"At most {_MAX_MENTIONS} resources per prompt.")
            )
            break
        try:
            text = await read_resource_text(mcp, server, uri)
        except ToolError as exc:
            blocks.append(f"The resource @{server}:{uri} could not be attached: {exc}")
            notices.append(Notice(level="warning", message=f"@{server}:{uri} not attached: {exc}"))
            continue
        # the resource cannot close its own block and speak as the person
        text = re.sub(r"(?i)</\s*mcp-resource", "</ mcp-resource-text", text)
        blocks.append(f'<mcp-resource server="{server}" uri="{uri}">\n{text}\n</mcp-resource>')
    return blocks, notices
