"""The slash-command registry."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..agent_session import AgentSession

__all__ = ["COMMANDS", "Command", "CommandResult", "command", "run_command"]


@dataclass(frozen=True, kw_only=True, slots=True)
class CommandResult:
    """What a command shows: Markdown for people; ``data`` for programs (e.g.
    the session list); ``error`` marks a failed command (shown as an error).
    ``prompt``: a user turn the front end runs next, as if the person had
    typed it (``/<skill> args`` runs the skill's rendered instructions)."""

    markdown: str
    data: Any = None
    error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    prompt: str | None = None


Handler = Callable[["AgentSession", str], Awaitable[CommandResult]]
Fallback = Callable[["AgentSession", str, str], Awaitable[CommandResult | None]]


@dataclass(frozen=True, kw_only=True, slots=True)
class Command:
    name: str
    help: str
    usage: str
    handler: Handler


COMMANDS: dict[str, Command] = {}
#: Handlers asked, in order, about a name that is no command (``/<skill>``):
#: ``(session, name, args)`` → a result, or ``None`` if the name is not theirs.
FALLBACKS: list[Fallback] = []

# Modules that register commands when imported (kept lazy: the kernel imports
# the registry at start, the commands only when one is used).
_MODULES: tuple[str, ...] = (
    "builtin",
    "context",
    "agents",
    "skills",
    "security",
    "mcp",
    "mcp_prompts",
    "hooks",
    "rewind",
    "doctor",
    "plugins",
)


def fallback(fn: Fallback) -> Fallback:
    """Register a handler for names that are no command (see ``FALLBACKS``)."""
    FALLBACKS.append(fn)
    return fn


def command(name: str, *, help: str, usage: str = "") -> Callable[[Handler], Handler]:
    """Register ``/name``; ``usage`` shows its arguments, e.g. ``[ID]``."""

    def register(fn: Handler) -> Handler:
        COMMANDS[name] = Command(name=name, help=help, usage=usage, handler=fn)
        return fn

    return register


def load_all() -> dict[str, Command]:
    for mod in _MODULES:
        importlib.import_module(f"{__package__}.{mod}")
    return COMMANDS


async def run_command(session: AgentSession, text: str) -> CommandResult:
    """Run ``/name args``; a name that is no command goes to the ``FALLBACKS``
    (a skill's name runs the skill). Unknown commands get a readable error
    listing the known ones."""
    load_all()
    # the name ends at the first space or line end: "/review\nthe arguments below" works too
    name, args = [*text.strip().lstrip("/").split(maxsplit=1), "", ""][:2]
    cmd = COMMANDS.get(name)
    if cmd is None:
        for fallback in FALLBACKS:
            result = await fallback(session, name, args.strip())
            if result is not None:
                return result
        known = ", ".join(f"/{n}" for n in sorted(COMMANDS))
        return CommandResult(
            markdown=f"Unknown command `/{name}`. Known commands: {known}.", error=True
        )
    return await cmd.handler(session, args.strip())
