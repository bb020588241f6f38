"""Conversation messages: the provider-neutral shape stored in session JSONL.

Anthropic's content-block model is the lingua franca: a message is a role and
a list of blocks. Tool results travel in ``user`` messages; the OpenAI adapter
translates them to ``tool`` role messages on the wire.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Block",
    "ImageBlock",
    "ImageSource",
    "Message",
    "RedactedThinkingBlock",
    "ResultPart",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "assistant",
    "scrub_message",
    "scrub_surrogates",
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


class ImageSource(_Block):
    """An image's bytes, base64-encoded (Anthropic's ``source`` shape)."""

    type: Literal["base64"] = "base64"
    media_type: str
    data: str


class ImageBlock(_Block):
    """An image in a tool result (e.g. from an MCP tool). ``note`` names where
    it came from, for providers that cannot take images and for transcripts."""

    type: Literal["image"] = "image"
    source: ImageSource
    note: str = ""

    @property
    def size(self) -> int:
        """Decoded size in bytes (approximate, from the base64 length)."""
        return len(self.source.data) * 3 // 4

    def describe(self) -> str:
        """A one-line text stand-in for the image."""
        what = f"[image: {self.source.media_type}, {self.size:,} bytes"
        return what + (f", {self.note}]" if self.note else "]")


ResultPart = Annotated[TextBlock | ImageBlock, Field(discriminator="type")]


class ToolResultBlock(_Block):
    """A tool's answer. ``content`` is plain text, or a list of text and image
    parts when the tool returned more than text (``text`` reads either)."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[ResultPart]
    is_error: bool = False

    @property
    def parts(self) -> list[TextBlock | ImageBlock]:
        """The content as parts (plain text is one text part)."""
        if isinstance(self.content, str):
            return [TextBlock(text=self.content)]
        return list(self.content)

    @property
    def text(self) -> str:
        """The content as text; images are described in one line each."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(p.text if isinstance(p, TextBlock) else p.describe() for p in self.content)

    @property
    def images(self) -> list[ImageBlock]:
        return [p for p in self.parts if isinstance(p, ImageBlock)]

    def with_text(self, text: str) -> ToolResultBlock:
        """The same result with its text replaced by ``text``; images are kept."""
        images = self.images
        content: str | list[TextBlock | ImageBlock] = (
            [TextBlock(text=text), *images] if images else text
        )
        return ToolResultBlock(
            tool_use_id=self.tool_use_id, content=content, is_error=self.is_error
        )


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


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(text: str) -> tuple[str, int]:
    """``text`` with its surrogate code points repaired, and how many were lone.

    A high and low surrogate in a row (text that went through UTF-16 badly)
    become the character they encode; a lone one, which no provider accepts
    and which would break every later request, becomes U+FFFD.
    """
    if not _SURROGATE.search(text):
        return text, 0
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count("\ufffd") - text.count("\ufffd")


def scrub_message(message: Message) -> tuple[Message, int]:
    """``message`` with the text of its blocks repaired (``scrub_surrogates``)."""
    fixed = 0
    blocks: list[Any] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            text, n = scrub_surrogates(block.text)
            blocks.append(block.model_copy(update={"text": text}) if n else block)
        elif isinstance(block, ToolResultBlock):
            text, n = scrub_surrogates(block.text)
            blocks.append(block.with_text(text) if n else block)
        else:
            n = 0
            blocks.append(block)
        fixed += n
    if not fixed:
        return message, 0
    return message.model_copy(update={"content": blocks}), fixed
