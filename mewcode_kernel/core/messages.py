"""Conversation messages: the provider-neutral shape stored in session JSONL.

Anthropic's content-block model is the lingua franca: a message is a role and
a list of blocks. Tool results travel in ``user`` messages; the OpenAI adapter
translates them to ``tool`` role messages on the wire.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Block",
    "Message",
    "RedactedThinkingBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "assistant",
    "user",
]


class _Block(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(_Block):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(_Block):
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class ToolUseBlock(_Block):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    # Set when the model's argument JSON could not be parsed (e.g. cut by max_tokens);
    # the loop answers such a call with an error result instead of running it.
    input_error: str | None = None


class ToolResultBlock(_Block):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool = False


Block = Annotated[
    TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock,
    Field(discriminator="type"),
]


class Message(BaseModel):
    """One conversation message. ``meta`` never reaches the model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["user", "assistant"]
    content: list[Block]
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]


def user(*blocks: Block | str, meta: dict[str, Any] | None = None) -> Message:
    """A user message; plain strings become text blocks."""
    return Message(
        role="user",
        content=[TextBlock(text=b) if isinstance(b, str) else b for b in blocks],
        meta=meta or {},
    )


def assistant(*blocks: Block | str, meta: dict[str, Any] | None = None) -> Message:
    """An assistant message; plain strings become text blocks."""
    return Message(
        role="assistant",
        content=[TextBlock(text=b) if isinstance(b, str) else b for b in blocks],
        meta=meta or {},
    )
