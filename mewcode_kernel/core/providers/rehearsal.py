"""One request through the provider's SDK that never leaves the process
(``rehearse``), for a warm-up.

Importing an SDK is not all a first turn pays for: the first request loads
what the SDK loads lazily (its tracing propagators, the transforms of the
request's types) and the first response builds the validators of the stream's
event types, a third of a second for Anthropic's. A rehearsal streams one
canned reply, with a tool in the request, from an in-memory transport through
the same provider class and SDK calls a real turn uses (then makes, and
closes, a client with the real transport, whose HTTP stack loads on first
use), so a warm-up that runs it in the background leaves the first real turn
only its own work. Nothing is sent anywhere: the in-memory transport answers
every request itself, and the real one is never used.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2

from ..messages import Message, TextBlock
from .base import ModelRequest, ToolSpec

__all__ = ["rehearse"]

_TOOL = ToolSpec(
    name="rehearsal",
    description="Not a tool: the warm-up's request carries one, as real ones do.",
    input_schema={"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
)


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    frames = [
        (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
        for name, data in events
    ]
    return "".join(frames).encode()


def _anthropic_reply() -> bytes:
    usage = {"input_tokens": 1, "output_tokens": 1}
    message = {"id": "msg_rehearsal", "type": "message", "role": "assistant", "content": [],
               "model": "rehearsal", "stop_reason": None, "stop_sequence": None, "usage": usage}  # fmt: skip
    return _sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "ok"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_rehearsal", "name": _TOOL.name, "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {
            "type": "input_json_delta", "partial_json": '{"x": "y"}'}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use",
                           "stop_sequence": None}, "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ])  # fmt: skip


def _openai_reply() -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "chatcmpl-rehearsal", "object": "chat.completion.chunk", "created": 0,
                "model": "rehearsal", "choices": [choice], **extra}  # fmt: skip

    call = {"index": 0, "id": "call_rehearsal", "type": "function",
            "function": {"name": _TOOL.name, "arguments": '{"x": "y"}'}}  # fmt: skip
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    body = _sse([
        (None, chunk({"role": "assistant", "content": "ok"})),
        (None, chunk({"tool_calls": [call]})),
        (None, chunk({}, "tool_calls")),
        (None, {**chunk({}), "choices": [], "usage": usage}),
    ])  # fmt: skip
    return body + b"data: [DONE]\n\n"


def _transport(body: bytes) -> httpx2.MockTransport:
    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream; charset=utf-8"}, content=body
        )

    return httpx2.MockTransport(answer)


async def _stream_once(protocol: str) -> None:
    if protocol == "anthropic":
        from .anthropic import AnthropicProvider as Provider

        body = _anthropic_reply()
    else:
        from .openai import OpenAIProvider as Provider  # type: ignore[assignment]

        body = _openai_reply()
    # never through a proxy from the environment, whatever the HTTP library defaults to
    client = httpx2.AsyncClient(transport=_transport(body), trust_env=False)
    provider = Provider(
        "rehearsal", "rehearsal", "rehearsal-key", base_url="http://rehearsal.invalid",
        http_client=client,
    )  # fmt: skip
    request = ModelRequest(
        system="rehearsal",
        messages=[Message(role="user", content=[TextBlock(text="rehearsal")])],
        tools=[_TOOL],
        max_tokens=16,
    )
    try:
        async for _ in provider.stream(request):
            pass
    finally:
        await client.aclose()
    # the real client's transport: its HTTP stack is imported when the first one is made
    await httpx2.AsyncClient().aclose()


def rehearse(protocol: str) -> None:
    """Stream one canned reply through ``protocol``'s provider and SDK, offline
    (``anthropic`` or ``openai``). Blocking: run it in a thread without a loop."""
    asyncio.run(_stream_once(protocol))
