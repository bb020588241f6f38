"""MCP prompts as slash commands: ``/mcp__<server>__<prompt> [args]`` asks the
server for the prompt and runs what it returns as the turn's prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ToolError
from ..mcp.offerings import find_prompt, prompt_usage, render_prompt
from .registry import CommandResult, fallback

if TYPE_CHECKING:
    from ..agent_session import AgentSession


@fallback
async def mcp_prompt(session: AgentSession, name: str, args: str) -> CommandResult | None:
    mcp = session.mcp
    if mcp is None or not name.startswith("mcp__"):
        return None
    found = find_prompt(mcp, name)
    if found is None:
        return None
    server, prompt = found
    try:
        text = await render_prompt(mcp, server, prompt, args)
    except ValueError as exc:
        return CommandResult(
            markdown=f"`/{name}`: {exc}. Usage: {prompt_usage(server, prompt)}", error=True
        )
    except ToolError as exc:
        return CommandResult(markdown=str(exc), error=True)
    if not text.strip():
        return CommandResult(markdown=f"`/{name}` returned an empty prompt.", error=True)
    return CommandResult(markdown=f"MCP prompt `{prompt.name}` from `{server}`", prompt=text)
