"""Slash commands (``/help``, ``/clear``, ...): logic lives here, front ends
only display the ``CommandResult``.

A command is an async function ``(session, args) -> CommandResult`` registered
with ``@command``; modules under this package register theirs on import.
"""

from __future__ import annotations

from .registry import COMMANDS, Command, CommandResult, command, run_command

__all__ = ["COMMANDS", "Command", "CommandResult", "command", "run_command"]
