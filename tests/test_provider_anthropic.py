"""The Anthropic provider against recorded Messages streams, through the real SDK.

Every recorded ``.sse`` body is served by an ``httpx2.MockTransport``; the
expected message is computed here, independently, from the raw SSE text.
"""

from __future__ import annotations

import json
import re
import traceback
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mewcode_kernel.core.errors import ProviderError
from mewcode_kernel.core.events import (
    ModelEvent,
    ResponseDone,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    UsageReported,
)
from mewcode_kernel.core.messages import (
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    assistant,
    user,
)
from mewcode_kernel.core.providers import Provider
from mewcode_kernel.core.providers._retry import RetryPolicy
from mewcode_kernel.core.providers.anthropic import (
    AnthropicProvider,
    fold_anthropic_events,
    to_anthropic_request,
)
from mewcode_kernel.core.providers.base import ModelRequest, ToolSpec
from mewcode_kernel.core.usage import Usage
from tests._fixtures import FIXTURES
from tests._mock_http import (
    Server,
    collect,
    no_sleep,
    read,
    sse_params,
    sse_response,
)

STREAMS = FIXTURES / "streams" / "anthropic"
API_KEY = "sk-ant-test-SECRET-0123456789"


# --- helpers ------------------------------------------------------------------


def make_provider(server: Server, **kwargs: Any) -> AnthropicProvider:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    kwargs.setdefault("retry", RetryPolicy(max_attempts=1, sleep=no_sleep))
    return AnthropicProvider(
        "anthropic",
        "claude-test",
        API_KEY,
        base_url="http://anthropic.test",
        http_client=client,
        **kwargs,
    )


def parse_sse(raw: bytes) -> list[dict[str, Any]]:
    """A deliberately small SSE reader: blank-line separated frames, flushed at EOF."""
    events = []
    for frame in re.split(r"\r?\n\r?\n", raw.decode("utf-8")):
        data = [line[5:].lstrip() for line in frame.splitlines() if line.startswith("data:")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


def expected_from_sse(raw: bytes) -> dict[str, Any]:
    """What the assembled message must hold, computed straight from the wire."""
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, int] = {}
    stop = None
    model = ""
    for ev in parse_sse(raw):
        kind = ev["type"]
        if kind == "message_start":
            model = ev["message"]["model"]
            usage.update({k: v for k, v in ev["message"]["usage"].items() if isinstance(v, int)})
        elif kind == "content_block_start":
            cb = ev["content_block"]
            blocks[ev["index"]] = {
                "type": cb["type"],
                "text": cb.get("text") or "",
                "thinking": cb.get("thinking") or "",
                "signature": cb.get("signature") or "",
                "json": "",
                "cb": cb,
            }
        elif kind == "content_block_delta":
            b, d = blocks[ev["index"]], ev["delta"]
            field = {
                "text_delta": ("text", "text"),
                "thinking_delta": ("thinking", "thinking"),
                "signature_delta": ("signature", "signature"),
                "input_json_delta": ("json", "partial_json"),
            }.get(d["type"])
            if field and b["type"] in ("text", "thinking", "tool_use"):
                b[field[0]] += d[field[1]]
        elif kind == "message_delta":
            stop = ev["delta"]["stop_reason"]
            usage.update({k: v for k, v in (ev.get("usage") or {}).items() if isinstance(v, int)})
    ordered = [blocks[i] for i in sorted(blocks)]
    tools = []
    for b in ordered:
        if b["type"] != "tool_use":
            continue
        try:
            args = json.loads(b["json"]) if b["json"] else b["cb"]["input"]
        except json.JSONDecodeError:
            args = None
        tools.append((b["cb"]["id"], b["cb"]["name"], args))
    return {
        "text": "".join(b["text"] for b in ordered if b["type"] == "text"),
        "thinking": [(b["thinking"], b["signature"]) for b in ordered if b["type"] == "thinking"],
        "redacted": [b["cb"]["data"] for b in ordered if b["type"] == "redacted_thinking"],
        "tools": tools,
        "stop": stop,
        "usage": usage,
        "model": model,
    }


async def run_fixture(name: str) -> tuple[list[ModelEvent], ResponseDone]:
    server = Server(sse_response(read(STREAMS / name)))
    events = await collect(make_provider(server))
    done = events[-1]
    assert isinstance(done, ResponseDone)
    return events, done


# --- every recorded stream ----------------------------------------------------


@pytest.mark.parametrize("path", sse_params(STREAMS))
async def test_every_recorded_stream(path: Path) -> None:
    raw = read(path)
    want = expected_from_sse(raw)
    server = Server(sse_response(raw))
    events = await collect(make_provider(server))

    assert len(server.requests) == 1
    assert [type(e) for e in events].count(ResponseDone) == 1
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert not any(isinstance(e, RetryScheduled) for e in events)
    message = done.message
    assert message.role == "assistant"
    assert {b.type for b in message.content} <= {
        "text",
        "thinking",
        "redacted_thinking",
        "tool_use",
    }

    assert message.text == want["text"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == want["text"]
    thinking = [(b.thinking, b.signature) for b in message.content if isinstance(b, ThinkingBlock)]
    assert thinking == want["thinking"]
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "".join(
        t for t, _ in want["thinking"]
    )
    redacted = [b.data for b in message.content if isinstance(b, RedactedThinkingBlock)]
    assert redacted == want["redacted"]

    assert [(t.id, t.name) for t in message.tool_uses] == [(i, n) for i, n, _ in want["tools"]]
    assert [(e.id, e.name) for e in events if isinstance(e, ToolCallStarted)] == [
        (i, n) for i, n, _ in want["tools"]
    ]
    for block, (_, _, args) in zip(message.tool_uses, want["tools"], strict=True):
        if args is None:
            assert block.input == {} and block.input_error
        else:
            assert block.input == args and block.input_error is None

    assert done.stop_reason == want["stop"]
    assert done.model == want["model"]
    usage = want["usage"]
    assert done.usage.input_tokens == usage.get("input_tokens", 0)
    assert done.usage.output_tokens == usage.get("output_tokens", 0)
    assert done.usage.cache_read_tokens == usage.get("cache_read_input_tokens", 0)
    assert done.usage.cache_creation_tokens == usage.get("cache_creation_input_tokens", 0)


# --- hand-checked fixtures ----------------------------------------------------


async def test_tool_use_with_text_and_split_json() -> None:
    events, done = await run_fixture("anthropic-sdk-python__tool_use_response.sse")
    assert done.message.content == [
        TextBlock(text="I'll check the current weather in Paris for you."),
        ToolUseBlock(
            id="toolu_01NRLabsLyVHZPKxbKvkfSMn", name="get_weather", input={"location": "Paris"}
        ),
    ]
    assert done.stop_reason == "tool_use"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (377, 65)
    assert done.model == "claude-sonnet-4-20250514"
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started == [ToolCallStarted(id="toolu_01NRLabsLyVHZPKxbKvkfSMn", name="get_weather")]


async def test_two_parallel_tool_uses() -> None:
    _, done = await run_fixture("llm-anthropic__test_tools__0.sse")
    assert [(t.name, t.input) for t in done.message.tool_uses] == [
        ("pelican_name_generator", {}),
        ("pelican_name_generator", {}),
    ]
    assert len({t.id for t in done.message.tool_uses}) == 2


async def test_thinking_keeps_its_signature() -> None:
    events, done = await run_fixture("llm-anthropic__test_stream_events_thinking__0.sse")
    first = done.message.content[0]
    assert isinstance(first, ThinkingBlock)
    assert first.thinking.startswith("The user wants two names for a pet pelican")
    assert first.signature.startswith("EuYDCmMIDBgCKkC05Zda4P+Cdk/LQKE+")
    assert isinstance(done.message.content[1], TextBlock)
    assert not any(isinstance(e, ThinkingDelta) and not e.text for e in events)


async def test_redacted_thinking_blocks() -> None:
    _, done = await run_fixture(
        "pydantic-ai__test_anthropic_model_thinking_part_redacted_stream__0.sse"
    )
    kinds = [b.type for b in done.message.content]
    assert kinds == ["redacted_thinking", "redacted_thinking", "text"]
    first = done.message.content[0]
    assert isinstance(first, RedactedThinkingBlock)
    assert first.data.startswith("EqkECkYIBxgCKkA8AZ4noDfV5VcOJe/p3JTRB6Xz")


async def test_refusal_with_empty_text_block() -> None:
    events, done = await run_fixture("anthropic-sdk-python__refusal_response.sse")
    assert done.stop_reason == "refusal"
    assert done.message.content == []
    assert (done.usage.input_tokens, done.usage.output_tokens) == (20, 0)
    # the counts as they arrived (message_start, message_delta), then the response
    assert events == [
        UsageReported(usage=Usage(input_tokens=20, output_tokens=1)),
        UsageReported(usage=Usage(input_tokens=20, output_tokens=0)),
        done,
    ]


async def test_pause_turn_drops_server_tool_blocks_keeps_text() -> None:
    _, done = await run_fixture("pydantic-ai__test_pause_turn_web_search_streaming_vcr__0.sse")
    assert done.stop_reason == "pause_turn"
    assert [b.type for b in done.message.content] == ["thinking", "text", "text", "text"]
    assert done.message.text.startswith("I'll run these searches one at a time as requested.")
    assert done.message.tool_uses == []


async def test_max_tokens_leaves_truncated_tool_json_as_input_error() -> None:
    _, done = await run_fixture("anthropic-sdk-python__incomplete_partial_json_response.sse")
    assert done.stop_reason == "max_tokens"
    (call,) = done.message.tool_uses
    assert (call.id, call.name, call.input) == ("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file", {})
    assert call.input_error is not None
    assert "make_file" in call.input_error and "max_tokens" in call.input_error
    assert done.message.text.endswith("Let me do that for you now.")


async def test_stop_sequence_and_files_without_final_blank_line() -> None:
    _, done = await run_fixture("llm-anthropic__test_prompt_with_prefill_and_stop_sequences__0.sse")
    assert done.stop_reason == "stop_sequence"
    # basic_response.sse ends without "\n\n": the SDK never delivers message_stop,
    # the message_delta with a stop reason is enough to call it complete.
    _, basic = await run_fixture("anthropic-sdk-python__basic_response.sse")
    assert (basic.message.text, basic.stop_reason) == ("Hello there!", "end_turn")


@pytest.mark.parametrize(
    ("name", "status", "needle"),
    [
        (
            "pydantic-ai__test_anthropic_explicit_effort_xhigh_unsupported_model_errors__0.json",
            400,
            "invalid_request_error: This model does not support effort level 'xhigh'",
        ),
        (
            "pydantic-ai__test_model_name_suggestion_anthropic___0.json",
            404,
            "not_found_error: model: claude-sonet-4-5",
        ),
        (
            "pydantic-ai__test_anthropic_count_tokens_error__0.json",
            404,
            "not_found_error: model: claude-does-not-exist",
        ),
    ],
)
async def test_error_bodies_fail_at_once(name: str, status: int, needle: str) -> None:
    path = STREAMS / name
    response = httpx2.Response(
        status, headers={"content-type": "application/json"}, content=read(path)
    )
    server = Server(response)
    provider = make_provider(server, retry=RetryPolicy(sleep=no_sleep))
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    err = info.value
    assert (err.status, err.retryable, err.attempts) == (status, False, 1)
    assert str(err).startswith("anthropic: ")
    assert needle in str(err)
    assert len(server.requests) == 1


# --- the request ----------------------------------------------------------------


def _conversation() -> ModelRequest:
    return ModelRequest(
        system="You are MewCode.",
        tools=[
            ToolSpec(name="read", description="Read a file", input_schema={"type": "object"}),
            ToolSpec(name="bash", description="Run a command", input_schema={"type": "object"}),
        ],
        messages=[
            user("list files", meta={"ts": 1}),
            assistant(
                ThinkingBlock(thinking="let me look", signature="sig-1"),
                ThinkingBlock(thinking="unsigned reasoning from another provider"),
                RedactedThinkingBlock(data="opaque"),
                TextBlock(text=""),
                "Looking.",
                ToolUseBlock(id="toolu_1", name="bash", input={"cmd": "ls"}),
                ToolUseBlock(id="llm_version:0", name="read", input={"path": "a"}),
            ),
            user(
                ToolResultBlock(tool_use_id="toolu_1", content="a.txt"),
                ToolResultBlock(tool_use_id="llm_version:0", content="boom", is_error=True),
            ),
        ],
    )


def test_request_conversion_and_cache_breakpoints() -> None:
    body = to_anthropic_request(_conversation(), "claude-x", 1024)
    assert list(body) == ["model", "max_tokens", "system", "messages", "tools"]
    assert body["system"] == [
        {"type": "text", "text": "You are MewCode.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][0] == {
        "name": "read",
        "description": "Read a file",
        "input_schema": {"type": "object"},
    }
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    first, second, third = body["messages"]
    # the user message before the newest assistant one: where the previous request's tail was
    assert first == {
        "role": "user",
        "content": [{"type": "text", "text": "list files", "cache_control": {"type": "ephemeral"}}],
    }
    assert second["content"] == [
        {"type": "thinking", "thinking": "let me look", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"cmd": "ls"}},
        {"type": "tool_use", "id": "llm_version_0", "name": "read", "input": {"path": "a"}},
    ]
    assert third["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"},
        {
            "type": "tool_result",
            "tool_use_id": "llm_version_0",
            "content": "boom",
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ]
    assert json.dumps(body).count("cache_control") == 4  # the API's maximum


def test_request_without_system_or_tools_and_empty_messages() -> None:
    request = ModelRequest(system="", messages=[assistant(""), user("hi")])
    body = to_anthropic_request(request, "m", 10)
    assert "system" not in body and "tools" not in body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]


def test_tail_breakpoint_skips_thinking() -> None:
    request = ModelRequest(
        system="s",
        messages=[user("q"), assistant("answer", ThinkingBlock(thinking="t", signature="s"))],
    )
    content = to_anthropic_request(request, "m", 10)["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "answer", "cache_control": {"type": "ephemeral"}}
    assert "cache_control" not in content[1]


async def test_the_sdk_sends_our_body_byte_stable() -> None:
    raw = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
        b'"role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,'
        b'"usage":{"input_tokens":3,"output_tokens":1}}}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
        b'"usage":{"output_tokens":1}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    server = Server(sse_response(raw), sse_response(raw))
    provider = make_provider(server, max_tokens=1024)
    await collect(provider, _conversation())
    await collect(provider, _conversation())
    one, two = server.requests
    assert one.content == two.content
    assert one.url.path == "/v1/messages"
    sent = json.loads(one.content)
    expected = to_anthropic_request(_conversation(), "claude-test", 1024)
    assert sent == {**expected, "stream": True}
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert sent["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sent["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    # The SDK decides the auth header (x-api-key or a bearer token); the key is sent.
    assert API_KEY in one.headers.get("x-api-key", "") + one.headers.get("authorization", "")


async def test_request_model_and_max_tokens_override() -> None:
    server = Server(sse_response(read(STREAMS / "anthropic-sdk-python__basic_response.sse")))
    request = ModelRequest(system="s", messages=[user("x")], model="claude-other", max_tokens=77)
    await collect(make_provider(server), request)
    sent = server.bodies()[0]
    assert (sent["model"], sent["max_tokens"]) == ("claude-other", 77)


# --- odds and ends ----------------------------------------------------------------


def test_fold_accepts_plain_dicts_and_unknown_blocks() -> None:
    events = fold_anthropic_events(
        [
            {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 5}}},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": "A"},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "B"},
            },
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "brand_new", "x": 1},
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "brand_new_delta", "y": 2},
            },
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "tool_use", "id": "t", "name": "n", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": "[1]"},
            },
            {"type": "something_else"},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 9},
            },
        ]
    )
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert events[:-1] == [
        UsageReported(usage=Usage(input_tokens=5)),
        TextDelta(text="A"),
        TextDelta(text="B"),
        ToolCallStarted(id="t", name="n"),
        UsageReported(usage=Usage(input_tokens=5, output_tokens=9)),
    ]
    assert done.message.text == "AB"
    (call,) = done.message.tool_uses
    assert call.input == {} and call.input_error and "JSON object" in call.input_error
    assert (done.usage.input_tokens, done.usage.output_tokens) == (5, 9)


def test_secrets_stay_out_of_repr() -> None:
    provider = AnthropicProvider("anthropic", "claude-x", API_KEY)
    assert API_KEY not in repr(provider)
    assert isinstance(provider, Provider)
    assert (provider.name, provider.model) == ("anthropic", "claude-x")


async def test_secrets_stay_out_of_errors() -> None:
    body = json.dumps(
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": f"invalid x-api-key {API_KEY}"},
        }
    ).encode()
    server = Server(
        httpx2.Response(401, headers={"content-type": "application/json"}, content=body)
    )
    with pytest.raises(ProviderError) as info:
        await collect(make_provider(server))
    assert API_KEY not in "".join(traceback.format_exception(info.value))
    assert "authentication_error" in str(info.value)
    assert info.value.retryable is False


def test_consecutive_same_role_messages_are_merged() -> None:
    from mewcode_kernel.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
    from mewcode_kernel.core.providers.anthropic import to_anthropic_request
    from mewcode_kernel.core.providers.base import ModelRequest

    msgs = [
        Message(role="user", content=[TextBlock(text="go")]),
        Message(role="assistant", content=[ToolUseBlock(id="t1", name="bash", input={})]),
        Message(
            role="user", content=[ToolResultBlock(tool_use_id="t1", content="x", is_error=True)]
        ),
        Message(role="user", content=[TextBlock(text="next")]),
    ]
    body = to_anthropic_request(ModelRequest(system="s", messages=msgs), "m", 100)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]
    last = body["messages"][-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "text"]
