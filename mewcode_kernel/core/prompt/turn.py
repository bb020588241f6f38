"""The user message of a new turn: context blocks, then the prompt.

Per-turn context (the ``<environment>`` block, other context blocks such as
the active skills, and pending ``<system-reminder>`` blocks) travels as the
first text blocks of the new
user message, so earlier messages are never rewritten and the cached prefix
stays valid. ``meta["context_blocks"]`` says how many leading blocks are
context rather than the user's words (``prompt_text`` skips them).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Message, TextBlock

__all__ = [
    "CONTEXT_BLOCKS",
    "REMINDER_CLOSE",
    "REMINDER_OPEN",
    "prompt_text",
    "render_reminder",
    "turn_message",
]

CONTEXT_BLOCKS = "context_blocks"
REMINDER_OPEN = "<system-reminder>"
REMINDER_CLOSE = "</system-reminder>"


def render_reminder(text: str) -> str:
    """One reminder as a tagged block."""
    return f"{REMINDER_OPEN}\n{text.strip()}\n{REMINDER_CLOSE}"


def turn_message(
    prompt: str,
    *,
    environment: str = "",
    blocks: Sequence[str] = (),
    reminders: Sequence[str] = (),
) -> Message:
    """The user message that starts a turn: ``environment`` (a rendered block),
    the other rendered context ``blocks``, each reminder, then ``prompt``."""
    context = [environment] if environment else []
    context += [b for b in blocks if b.strip()]
    context += [render_reminder(r) for r in reminders if r.strip()]
    blocks = [TextBlock(text=c) for c in context] + [TextBlock(text=prompt)]
    meta = {CONTEXT_BLOCKS: len(context)} if context else {}
    return Message(role="user", content=blocks, meta=meta)


def prompt_text(message: Message) -> str:
    """The user's own words in ``message`` (context blocks left out)."""
    skip = message.meta.get(CONTEXT_BLOCKS, 0)
    skip = skip if isinstance(skip, int) and skip > 0 else 0
    blocks = message.content[skip:]
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))
