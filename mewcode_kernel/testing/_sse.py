"""Rendering scripted replies as Anthropic Messages and OpenAI Chat Completions SSE.

Pure functions from a reply (content blocks, stop reason, usage) to the list
of SSE frames a real server would send, with the quirks seen in recorded
traffic: fragments split mid-word and mid-token, ``ping`` after the first
block start, whitespace padding inside Anthropic JSON, an empty first
``input_json_delta``, tool-call arguments streamed by ``index`` on OpenAI.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..core.messages import Block, TextBlock, ThinkingBlock, ToolUseBlock
from ..core.usage import Usage

__all__ = [
    "anthropic_error_body",
    "anthropic_sse",
    "openai_error_body",
    "openai_sse",
    "sse_error_frame",
]

_SIZES = (5, 11, 3, 8, 13)


def fragments(text: str, sizes: Sequence[int] = _SIZES) -> Iterator[str]:
    """Split ``text`` into pieces of varying size (deterministic)."""
    i = n = 0
    while i < len(text):
        size = sizes[n % len(sizes)]
        yield text[i : i + size]
        i += size
        n += 1


def _frame(data: dict[str, Any], event: str | None = None, pad: int = 0) -> str:
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    if pad:
        body = body[:-1] + " " * pad + "}"
    return (f"event: {event}\n" if event else "") + f"data: {body}\n\n"


# --- Anthropic Messages ----------------------------------------------------------


def anthropic_sse(
    blocks: Sequence[Block],
    *,
    stop_reason: str,
    usage: Usage,
    model: str,
    message_id: str,
) -> list[str]:
    """The SSE frames of one streamed Anthropic message."""
    usage_json = {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    }
    start = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**usage_json, "output_tokens": 1, "service_tier": "standard"},
    }
    frames = [_frame({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(blocks):
        frames.extend(_anthropic_block(index, block))
        if index == 0:
            frames.insert(2, 'event: ping\ndata: {"type": "ping"}\n\n')
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {**usage_json, "output_tokens": usage.output_tokens},
    }
    frames.append(_frame(delta, "message_delta", pad=9))
    frames.append(_frame({"type": "message_stop"}, "message_stop"))
    return frames


def _anthropic_block(index: int, block: Block) -> list[str]:
    def start(content: dict[str, Any]) -> str:
        data = {"type": "content_block_start", "index": index, "content_block": content}
        return _frame(data, "content_block_start", pad=index % 3 * 4)

    def delta(payload: dict[str, Any], n: int) -> str:
        data = {"type": "content_block_delta", "index": index, "delta": payload}
        return _frame(data, "content_block_delta", pad=(n * 5) % 13)

    if isinstance(block, TextBlock):
        frames = [start({"type": "text", "text": ""})]
        pieces = list(fragments(block.text)) or [""]
        frames += [delta({"type": "text_delta", "text": p}, n) for n, p in enumerate(pieces)]
    elif isinstance(block, ThinkingBlock):
        frames = [start({"type": "thinking", "thinking": "", "signature": ""})]
        pieces = [*fragments(block.thinking), ""]
        frames += [
            delta({"type": "thinking_delta", "thinking": p}, n) for n, p in enumerate(pieces)
        ]
        signature = block.signature or "c2NyaXB0ZWQtc2lnbmF0dXJl"
        frames.append(delta({"type": "signature_delta", "signature": signature}, len(pieces)))
    elif isinstance(block, ToolUseBlock):
        content = {
            "type": "tool_use",
            "id": block.id,
            "name": block.name,
            "input": {},
            "caller": {"type": "direct"},
        }
        frames = [start(content)]
        arguments = json.dumps(block.input, ensure_ascii=False)
        pieces = ["", *fragments(arguments, (7, 3, 12, 5))]
        frames += [
            delta({"type": "input_json_delta", "partial_json": p}, n) for n, p in enumerate(pieces)
        ]
    else:
        raise TypeError(f"cannot stream a {type(block).__name__} from the model")
    frames.append(_frame({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return frames


def anthropic_error_body(error_type: str, message: str, request_id: str) -> dict[str, Any]:
    """An Anthropic error response body (HTTP error status)."""
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }


# --- OpenAI Chat Completions -----------------------------------------------------

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


def openai_sse(
    blocks: Sequence[Block],
    *,
    stop_reason: str,
    usage: Usage,
    model: str,
    completion_id: str,
    include_usage: bool,
) -> list[str]:
    """The SSE frames of one streamed chat completion (``data: [DONE]`` last).

    Thinking is sent as ``reasoning_content`` deltas, the convention of
    OpenAI-compatible servers (DeepSeek, vLLM); OpenAI itself sends none.
    The usage chunk (``choices: []``) is sent only when the request asked for
    it with ``stream_options.include_usage``, as OpenAI does.
    """

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _frame({**base, "choices": [choice]})

    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": model,
        "system_fingerprint": "fp_scripted",
    }
    frames = [chunk({"role": "assistant", "content": "", "refusal": None})]
    calls = 0
    for block in blocks:
        if isinstance(block, TextBlock):
            frames += [chunk({"content": p}) for p in fragments(block.text)]
        elif isinstance(block, ThinkingBlock):
            frames += [chunk({"reasoning_content": p}) for p in fragments(block.thinking)]
        elif isinstance(block, ToolUseBlock):
            head = {
                "index": calls,
                "id": block.id,
                "type": "function",
                "function": {"name": block.name, "arguments": ""},
            }
            frames.append(chunk({"tool_calls": [head]}))
            arguments = json.dumps(block.input, ensure_ascii=False)
            frames += [
                chunk({"tool_calls": [{"index": calls, "function": {"arguments": p}}]})
                for p in fragments(arguments, (7, 3, 12, 5))
            ]
            calls += 1
        else:
            raise TypeError(f"cannot stream a {type(block).__name__} from the model")
    frames.append(chunk({}, _FINISH.get(stop_reason, stop_reason)))
    if include_usage:
        prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_creation_tokens
        usage_json = {
            "prompt_tokens": prompt,
            "completion_tokens": usage.output_tokens,
            "total_tokens": prompt + usage.output_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
            "completion_tokens_details": {"reasoning_tokens": 0},
        }
        frames.append(_frame({**base, "choices": [], "usage": usage_json}))
    frames.append("data: [DONE]\n\n")
    return frames


def openai_error_body(error_type: str, message: str, code: str | None) -> dict[str, Any]:
    """An OpenAI error response body (HTTP error status or mid-stream)."""
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def sse_error_frame(protocol: str, error_type: str, message: str) -> str:
    """A mid-stream ``event: error`` frame (Anthropic's documented shape; Groq's for OpenAI)."""
    if protocol == "anthropic":
        data = {"type": "error", "error": {"type": error_type, "message": message}}
    else:
        data = openai_error_body(error_type, message, error_type)
    return _frame(data, "error")
