"""Slash commands in an ACP session: which are advertised
(``available_commands_update``), and which prompt is one.

The session's commands and the skills a person may run are offered, as
in a notebook, except ``/clear`` and ``/resume``: they would change which
stored session the client's session id stands for; a chat panel starts a
new chat (``session/new``) or loads a session (``session/load``) instead.
A prompt is a command only if its first word names one of them: "/usr/bin
is missing" is a question for the model.
"""

from __future__ import annotations

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.commands import CommandResult, run_command
from mewcode_kernel.core.commands.registry import load_all

__all__ = ["NOT_IN_A_CHAT", "advertised", "command_name", "run_chat_command"]

NOT_IN_A_CHAT = frozenset({"clear", "resume"})
"""Commands that would swap the session under the client's session id."""


def advertised(session: AgentSession) -> list[AvailableCommand]:
    """The commands and person-runnable skills of ``session``, sorted by name."""
    found: dict[str, AvailableCommand] = {}
    for skill in session.skills.catalog.skills():
        if skill.user_invocable:
            found[skill.name] = AvailableCommand(
                name=skill.name, description=skill.description or f"Run the {skill.name} skill."
            )
    for name, command in load_all().items():
        if name in NOT_IN_A_CHAT:
            continue
        hint = (
            AvailableCommandInput(root=UnstructuredCommandInput(hint=command.usage))
            if command.usage
            else None
        )
        found[name] = AvailableCommand(name=name, description=command.help, input=hint)
    return [found[n] for n in sorted(found)]


def command_name(session: AgentSession, text: str) -> str | None:
    """The command or skill ``text`` (``/name args``) runs, or ``None`` when
    its first word names neither (the text is then a prompt)."""
    name = text.lstrip("/").split(maxsplit=1)[0] if text.strip("/ \t\n") else ""
    if not name:
        return None
    if name in load_all():
        return name
    skill = session.skills.catalog.get(name)
    return name if skill is not None and skill.user_invocable else None


async def run_chat_command(session: AgentSession, text: str) -> CommandResult:
    """Run the command ``text`` names (``command_name`` said it is one)."""
    name = text.lstrip("/").split(maxsplit=1)[0]
    if name in NOT_IN_A_CHAT:
        return CommandResult(
            markdown=f"`/{name}` is not available in a chat: it would change which session this "
            "chat is. Start a new chat, or load a stored session, instead.",
            error=True,
        )
    return await run_command(session, text)
