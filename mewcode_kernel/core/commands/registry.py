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
    the session list); ``error`` marks a failed command (shown as an error)."""

    markdown: str
    data: Any = None
    error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


Handler = Callable[["AgentSession", str], Awaitable[CommandResult]]


@dataclass(frozen=True, kw_only=True, slots=True)
class Command:
    name: str
    help: str
    usage: str
    handler: Handler


COMMANDS: dict[str, Command] = {}

# Modules that register commands when imported (kept lazy: the kernel imports
# the registry at start, the commands only when one is used).
_MODULES: tuple[str, ...] = ("builtin", "context", "mcp")


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
    """Run ``/name args``. Unknown commands get a readable error listing the known ones."""
    load_all()
    name, _, args = text.strip().lstrip("/").partition(" ")
    cmd = COMMANDS.get(name)
    if cmd is None:
        known = ", ".join(f"/{n}" for n in sorted(COMMANDS))
        return CommandResult(markdown=f"Unknown command `/{name}`. Known commands: {known}.", error=True)
    return await cmd.handler(session, args.strip())
