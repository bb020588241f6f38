"""``PromptAssembler``: the system prompt and the per-turn message of one
project, from its instruction files, memory notes and environment."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path

from ..messages import Message
from .environment import gather_environment, idle_note, render_environment
from .instructions import InstructionFile, load_instructions
from .memory import MemoryStore
from .system import build_system_prompt
from .turn import turn_message

__all__ = ["PromptAssembler"]


class PromptAssembler:
    """Builds what the model is told in project ``root``.

    ``home`` is the user's home (``~/.mewcode/MEWCODE.md``,
    ``~/.mewcode/MEMORY.md``); ``skills`` returns the skills catalog section
    (read with the rest of the system prompt, at session boundaries only).
    ``trusted`` says whether the project is trusted (``ProjectTrust.trusted``),
    which lets its instruction files import Markdown from the user's MewCode
    folder; a callable is asked at every read, so trusting the project
    mid-session counts from the next session boundary.
    """

    def __init__(
        self,
        root: Path,
        *,
        home: Path | None = None,
        skills: Callable[[], str] | None = None,
        trusted: bool | Callable[[], bool] = False,
    ) -> None:
        self.root = root
        self.trusted = trusted
        self.home = home if home is not None else Path.home()
        self.memory = MemoryStore(root, home=self.home)
        self.skills = skills
        #: the instruction files the last ``system_prompt`` read
        self.files: tuple[InstructionFile, ...] = ()

    def system_prompt(self) -> tuple[str, list[str]]:
        """The system prompt as of now, and warnings to show (size caps,
        missing imports). Read from disk: call it at session boundaries only."""
        trusted = self.trusted() if callable(self.trusted) else self.trusted
        instructions = load_instructions(self.root, home=self.home, trusted=trusted)
        self.files = instructions.files
        memory, memory_warnings = self.memory.render()
        prompt = build_system_prompt(
            instructions=instructions.render(),
            memory=memory,
            skills=self.skills() if self.skills is not None else "",
        )
        return prompt, [*instructions.warnings, *memory_warnings]

    async def turn_message(
        self,
        prompt: str,
        *,
        reminders: Sequence[str] = (),
        idle_gap: timedelta | None = None,
        blocks: Sequence[str] = (),
    ) -> Message:
        """The user message starting a turn: the environment now (git runs in
        a thread), other context ``blocks`` (the active skills), the
        reminders, then ``prompt``."""
        notes = (idle_note(idle_gap),) if idle_gap is not None else ()
        env = await asyncio.to_thread(gather_environment, self.root, notes=notes)
        return turn_message(
            prompt, environment=render_environment(env), blocks=blocks, reminders=reminders
        )
