"""What the model is told: the stable system prompt, and the per-turn context
that travels on the user side.

* ``system``: base instructions and tool guidance, then the skills catalog,
  instruction files and memory; byte-identical across a session's requests;
* ``instructions``: ``MEWCODE.md`` / ``AGENTS.md`` / ``CLAUDE.md`` discovery
  with ``@path`` imports and a size cap;
* ``memory``: notes in ``.mewcode/MEMORY.md`` and ``~/.mewcode/MEMORY.md``;
* ``environment`` and ``turn``: the ``<environment>`` block and reminders
  placed at the start of each new user message.
"""

from __future__ import annotations

from .assembler import PromptAssembler
from .environment import (
    ENV_CLOSE,
    ENV_OPEN,
    Environment,
    gather_environment,
    idle_note,
    mask_environment,
    render_environment,
)
from .instructions import Instructions, find_git_root, load_instructions
from .memory import MemoryNote, MemoryStore, memory_note_from_prompt
from .system import BASE_INSTRUCTIONS, TOOL_GUIDANCE, build_system_prompt
from .turn import CONTEXT_BLOCKS, prompt_text, render_reminder, turn_message

__all__ = [
    "BASE_INSTRUCTIONS",
    "CONTEXT_BLOCKS",
    "ENV_CLOSE",
    "ENV_OPEN",
    "TOOL_GUIDANCE",
    "Environment",
    "Instructions",
    "MemoryNote",
    "MemoryStore",
    "PromptAssembler",
    "build_system_prompt",
    "find_git_root",
    "gather_environment",
    "idle_note",
    "load_instructions",
    "mask_environment",
    "memory_note_from_prompt",
    "prompt_text",
    "render_environment",
    "render_reminder",
    "turn_message",
]
