"""A stored conversation replayed as ``session/update``s (``session/load``).

The person's prompts (their own words, without the context MewCode added)
become user message chunks, the model's text and thinking agent message
and thought chunks, each tool call a ``tool_call`` closed by its result
(``completed`` or ``failed``). A compaction's summary is shown as a thought.
What is replayed was redacted when it was written.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)

from mewcode_kernel.core.messages import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from mewcode_kernel.core.prompt.turn import prompt_text
from mewcode_kernel.core.tools import Tool

from .updates import MAX_SHOWN, acp_kind, locations_of, result_text, title_of

__all__ = ["replay"]


def replay(messages: Sequence[Message], root: Path, tools: Any) -> Iterator[Any]:
    """The updates that show ``messages`` again; ``tools(name)`` is the
    session's tool of that name (``None`` if it has none now)."""
    for message in messages:
        if message.role == "user":
            yield from _user(message)
        else:
            yield from _assistant(message, root, tools)


def _user(message: Message) -> Iterator[Any]:
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    for result in results:
        text = result_text(result)
        shown = text if len(text) <= MAX_SHOWN else "…" + text[-MAX_SHOWN:]
        yield update_tool_call(
            result.tool_use_id,
            status="failed" if result.is_error else "completed",
            content=[tool_content(text_block(shown))] if shown else None,
        )
    if results:
        return
    if "compact" in message.meta:
        summary = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        if summary:
            yield update_agent_thought_text(summary)
        return
    words = prompt_text(message)
    if words:
        yield update_user_message_text(words)


def _assistant(message: Message, root: Path, tools: Any) -> Iterator[Any]:
    for block in message.content:
        if isinstance(block, TextBlock) and block.text:
            yield update_agent_message_text(block.text)
        elif isinstance(block, ThinkingBlock) and block.thinking:
            yield update_agent_thought_text(block.thinking)
        elif isinstance(block, ToolUseBlock):
            tool: Tool | None = tools(block.name)
            yield start_tool_call(
                block.id,
                title_of(block, tool),
                kind=acp_kind(tool),  # type: ignore[arg-type]
                status="in_progress",
                locations=locations_of(block, tool, root),
                raw_input=block.input,
            )
