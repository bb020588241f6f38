"""The built-in slash commands of the core (filled in by the front-end issue)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .registry import COMMANDS, CommandResult, command

if TYPE_CHECKING:
    from ..agent_session import AgentSession


@command("help", help="List the slash commands.")
async def help_command(session: AgentSession, args: str) -> CommandResult:
    lines = ["| command | what it does |", "| --- | --- |"]
    for name in sorted(COMMANDS):
        cmd = COMMANDS[name]
        usage = f" {cmd.usage}" if cmd.usage else ""
        lines.append(f"| `/{name}{usage}` | {cmd.help} |")
    return CommandResult(markdown="\n".join(lines))
