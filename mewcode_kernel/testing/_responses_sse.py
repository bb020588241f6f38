"""Rendering scripted replies as OpenAI Responses API SSE.

The frames follow the recorded streams (``/work/shared/fixtures/streams/
openai_responses``): every frame has ``event:`` equal to its JSON ``type`` and
a ``sequence_number``; ``response.created`` and ``response.in_progress``
first; each output item opens with ``response.output_item.added`` and closes
with ``response.output_item.done`` carrying the whole item; text as
``output_text.delta``s inside a content part; tool arguments as
``function_call_arguments.delta``s with an ``obfuscation`` field; reasoning
as ``reasoning_summary_text.delta``s and an item with ``encrypted_content``;
``response.completed`` (or ``response.incomplete`` at the output limit) last,
with the usage and the whole output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..core.messages import Block, TextBlock, ThinkingBlock, ToolUseBlock
from ..core.usage import Usage
from ._sse import _frame, fragments

__all__ = ["responses_error_frame", "responses_sse"]


def responses_error_frame(code: str, message: str, sequence: int = 0) -> str:
    """A mid-stream ``event: error`` frame of the Responses API."""
    data = {
        "type": "error",
        "code": code,
        "message": message,
        "param": None,
        "sequence_number": sequence,
    }
    return _frame(data, "error")


class _Frames:
    def __init__(self) -> None:
        self.frames: list[str] = []

    def add(self, kind: str, **fields: Any) -> None:
        data = {"type": kind, **fields, "sequence_number": len(self.frames)}
        self.frames.append(_frame(data, kind))


def _response(rid: str, model: str, status: str, output: list[Any], usage: Any) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": 1767225600,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "low", "summary": None},
        "store": False,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
        "metadata": {},
    }


def _reasoning(out: _Frames, index: int, rid: str, block: ThinkingBlock) -> dict[str, Any]:
    item_id = f"rs_{rid}_{index}"
    encrypted = block.signature or f"gAAAAB-scripted-{rid}-{index}"
    out.add(
        "response.output_item.added",
        item={"id": item_id, "type": "reasoning", "encrypted_content": encrypted, "summary": []},
        output_index=index,
    )
    if block.thinking:
        part = {"type": "summary_text", "text": ""}
        out.add(
            "response.reasoning_summary_part.added",
            item_id=item_id,
            output_index=index,
            summary_index=0,
            part=part,
        )
        for piece in fragments(block.thinking):
            out.add(
                "response.reasoning_summary_text.delta",
                item_id=item_id,
                output_index=index,
                summary_index=0,
                delta=piece,
                obfuscation="scripted",
            )
        out.add(
            "response.reasoning_summary_text.done",
            item_id=item_id,
            output_index=index,
            summary_index=0,
            text=block.thinking,
        )
    summary = [{"type": "summary_text", "text": block.thinking}] if block.thinking else []
    item = {"id": item_id, "type": "reasoning", "encrypted_content": encrypted, "summary": summary}
    out.add("response.output_item.done", item=item, output_index=index)
    return item


def _message(out: _Frames, index: int, rid: str, text: str) -> dict[str, Any]:
    item_id = f"msg_{rid}_{index}"
    head = {"id": item_id, "type": "message", "status": "in_progress", "content": []}
    out.add("response.output_item.added", item=head, output_index=index, role="assistant")
    empty = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
    out.add(
        "response.content_part.added",
        item_id=item_id,
        output_index=index,
        content_index=0,
        part=empty,
    )
    for piece in fragments(text):
        out.add(
            "response.output_text.delta",
            item_id=item_id,
            output_index=index,
            content_index=0,
            delta=piece,
            logprobs=[],
            obfuscation="scripted",
        )
    out.add(
        "response.output_text.done",
        item_id=item_id,
        output_index=index,
        content_index=0,
        text=text,
        logprobs=[],
    )
    part = {**empty, "text": text}
    out.add(
        "response.content_part.done",
        item_id=item_id,
        output_index=index,
        content_index=0,
        part=part,
    )
    item = {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "content": [part],
        "role": "assistant",
    }
    out.add("response.output_item.done", item=item, output_index=index)
    return item


def _call(out: _Frames, index: int, rid: str, block: ToolUseBlock) -> dict[str, Any]:
    item_id = f"fc_{rid}_{index}"
    arguments = json.dumps(block.input, ensure_ascii=False)
    head = {
        "id": item_id,
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": block.id,
        "name": block.name,
    }
    out.add("response.output_item.added", item=head, output_index=index)
    for piece in fragments(arguments, (7, 3, 12, 5)):
        out.add(
            "response.function_call_arguments.delta",
            delta=piece,
            item_id=item_id,
            obfuscation="scripted",
            output_index=index,
        )
    out.add(
        "response.function_call_arguments.done",
        arguments=arguments,
        item_id=item_id,
        output_index=index,
    )
    item = {**head, "status": "completed", "arguments": arguments}
    out.add("response.output_item.done", item=item, output_index=index)
    return item


def responses_sse(
    blocks: Sequence[Block], *, stop_reason: str, usage: Usage, model: str, response_id: str
) -> list[str]:
    """The SSE frames of one streamed response (see the module docstring)."""
    out = _Frames()
    rid = response_id
    out.add("response.created", response=_response(rid, model, "in_progress", [], None))
    out.add("response.in_progress", response=_response(rid, model, "in_progress", [], None))
    output: list[Any] = []
    for index, block in enumerate(blocks):
        if isinstance(block, ThinkingBlock):
            output.append(_reasoning(out, index, rid, block))
        elif isinstance(block, TextBlock):
            output.append(_message(out, index, rid, block.text))
        elif isinstance(block, ToolUseBlock):
            output.append(_call(out, index, rid, block))
        else:
            raise TypeError(f"cannot stream a {type(block).__name__} from the model")
    total = usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens
    usage_json = {
        "input_tokens": total,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": total + usage.output_tokens,
    }
    status = "incomplete" if stop_reason == "max_tokens" else "completed"
    final = _response(rid, model, status, output, usage_json)
    out.add(f"response.{status}", response=final)
    return out.frames
