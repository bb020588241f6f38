"""Token estimates, and the usage anchor that keeps them honest.

The provider reports how many input tokens a request really had; that number
is the *anchor*. What was appended since (the assistant's reply, tool
results, the next prompt) is estimated, so the size of the next request is
``anchor + estimate(new messages)``: exact up to the last response, an
estimate only for the tail. With no anchor (a new or resumed session, right
after a compaction) the whole request is estimated.

The estimate is deliberately simple and a little pessimistic: about four
characters per token for text, plus a small overhead per block and message
for the wire format's framing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ..messages import (
    Block,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from ..providers.base import ModelRequest, ToolSpec

__all__ = [
    "CHARS_PER_TOKEN",
    "IMAGE_TOKENS",
    "MessageEstimates",
    "estimate_block",
    "estimate_messages",
    "estimate_request",
    "estimate_text",
    "estimate_tools",
]

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
"""An image in a tool result, counted as the largest image Anthropic does not
scale down (about 1.15 megapixels, ~1,600 tokens): safe for compaction."""
_BLOCK_OVERHEAD = 3  # type tags, ids and separators of one content block
_MESSAGE_OVERHEAD = 4  # role and framing of one message


def estimate_text(text: str) -> int:
    """Tokens in ``text``: one per four characters, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_block(block: Block) -> int:
    """Tokens one content block costs on the wire."""
    if isinstance(block, TextBlock):
        size = estimate_text(block.text)
    elif isinstance(block, ToolResultBlock):
        size = estimate_text(block.tool_use_id) + sum(
            estimate_text(p.text) if isinstance(p, TextBlock) else IMAGE_TOKENS for p in block.parts
        )
    elif isinstance(block, ToolUseBlock):
        size = estimate_text(block.name + block.id) + estimate_text(
            json.dumps(block.input, ensure_ascii=False)
        )
    elif isinstance(block, ThinkingBlock):
        size = estimate_text(block.thinking)
    elif isinstance(block, RedactedThinkingBlock):
        size = estimate_text(block.data)
    else:  # pragma: no cover - the union is closed
        size = 0
    return size + _BLOCK_OVERHEAD


def estimate_message(message: Message) -> int:
    """Tokens of one message (``meta`` never reaches the model and is not counted)."""
    return _MESSAGE_OVERHEAD + sum(estimate_block(b) for b in message.content)


def estimate_messages(messages: Iterable[Message]) -> int:
    """Tokens of ``messages``."""
    return sum(estimate_message(m) for m in messages)


class MessageEstimates:
    """``estimate_messages`` for a conversation measured before every request:
    the messages of the last call that are the same (frozen) objects at the
    same place keep their estimate, so a request costs only its new messages
    instead of the whole conversation again."""

    def __init__(self) -> None:
        self._last: list[tuple[Message, int]] = []

    def __call__(self, messages: Sequence[Message]) -> int:
        last, now, total = self._last, [], 0
        for i, message in enumerate(messages):
            known = last[i] if i < len(last) else None
            tokens = known[1] if known is not None and known[0] is message else None
            if tokens is None:
                tokens = estimate_message(message)
            now.append((message, tokens))
            total += tokens
        self._last = now
        return total


def estimate_tools(tools: Sequence[ToolSpec]) -> int:
    """Tokens of the tool definitions (name, description, JSON schema)."""
    return sum(
        estimate_text(t.name + t.description)
        + estimate_text(json.dumps(t.input_schema, ensure_ascii=False))
        + _BLOCK_OVERHEAD
        for t in tools
    )


def estimate_request(request: ModelRequest) -> int:
    """Tokens of a whole request: system prompt, tools and messages."""
    return (
        estimate_text(request.system)
        + estimate_tools(request.tools)
        + estimate_messages(request.messages)
    )
