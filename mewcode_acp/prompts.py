"""An ACP prompt (content blocks) as the text of a MewCode turn.

Text blocks are the person's words. A resource link (a file the person
attached) becomes a line naming it, for the model to read with its own
tools (and the permission rules that hold for them). An embedded text
resource is put in whole, fenced with its URI; a binary one, an image or
audio is named, not shown (the agent advertises neither images nor audio).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

__all__ = ["command_text", "prompt_text"]


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence


def _block_text(block: Any) -> str:
    if isinstance(block, TextContentBlock):
        return block.text
    if isinstance(block, ResourceContentBlock):
        return f"\n[attached: {block.uri}]"
    if isinstance(block, EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            fence = _fence(resource.text)
            return f"\n\nAttached {resource.uri}:\n{fence}\n{resource.text}\n{fence}\n"
        if isinstance(resource, BlobResourceContents):
            kind = resource.mime_type or "binary"
            return f"\n[attached {resource.uri} ({kind}): not shown]"
    kind = getattr(block, "type", "content")
    return f"\n[{kind} attached: not shown, this agent takes text only]"


def prompt_text(blocks: Sequence[Any]) -> str:
    """The whole prompt as one text."""
    return "".join(_block_text(b) for b in blocks)


def command_text(blocks: Sequence[Any]) -> str | None:
    """The slash command the prompt is (``/name args``), or ``None``: only a
    prompt of text alone that starts with ``/`` can be one."""
    if not blocks or not all(isinstance(b, TextContentBlock) for b in blocks):
        return None
    text = "".join(b.text for b in blocks).strip()
    return text if text.startswith("/") and len(text) > 1 and not text[1].isspace() else None
