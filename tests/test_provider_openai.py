"""The OpenAI Chat Completions provider against recorded streams, through the real SDK.

Every recorded ``.sse`` body is served by an ``httpx2.MockTransport``; the
expected message is computed here, independently, from the raw SSE text.
"""

from __future__ import annotations

import json
import re
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
)
from mewcode_kernel.core.messages import (
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    assistant,
    user,
)
from mewcode_kernel.core.providers import Provider
from mewcode_kernel.core.providers._retry import RetryPolicy
from mewcode_kernel.core.providers.base import ModelRequest, ToolSpec
from mewcode_kernel.core.providers.openai import (
    OpenAIProvider,
    fold_openai_chunks,
    to_openai_request,
)
from tests._fixtures import FIXTURES
from tests._mock_http import (
    Server,
    collect,
    no_sleep,
    read,
    sse_params,
    sse_response,
)

STREAMS = FIXTURES / "streams" / "openai_chat"
API_KEY = "sk-openai-test-SECRET-0123456789"
FINISH = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


# --- helpers ------------------------------------------------------------------


def make_provider(server: Server, **kwargs: Any) -> OpenAIProvider:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    kwargs.setdefault("retry", RetryPolicy(max_attempts=1, sleep=no_sleep))
    kwargs.setdefault("base_url", "http://compat.test/v1")
    return OpenAIProvider("openai", "gpt-test", API_KEY, http_client=client, **kwargs)


def parse_sse(raw: bytes) -> list[tuple[str | None, Any]]:
    """A deliberately small SSE reader: (event name, JSON or "[DONE]") per frame."""
    frames = []
    for frame in re.split(r"\r?\n\r?\n", raw.decode("utf-8")):
        name = None
        data = []
        for line in frame.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())
        if data:
            text = "\n".join(data)
            frames.append((name, text if text == "[DONE]" else json.loads(text)))
    return frames


def expected_from_sse(raw: bytes) -> dict[str, Any]:
    """What the assembled message must hold, computed straight from the wire."""
    text, refusal, reasoning = "", "", ""
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    usage = None
    error = None
    for _, data in parse_sse(raw):
        if data == "[DONE]":
            break
        if data.get("error"):
            error = data["error"]
            break
        usage = data.get("usage") or usage
        for choice in data.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            refusal += delta.get("refusal") or ""
            reasoning += delta.get("reasoning") or delta.get("reasoning_content") or ""
            for tc in delta.get("tool_calls") or []:
                call = calls.setdefault(tc["index"], {"id": "", "name": "", "args": ""})
                fn = tc.get("function") or {}
                call["id"] = call["id"] or tc.get("id") or ""
                call["name"] = call["name"] or fn.get("name") or ""
                call["args"] += fn.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    tools = [calls[i] for i in sorted(calls)]
    if finish in (None, "stop") and tools:
        stop = "tool_use"
    elif finish in (None, "stop") and refusal:
        stop = "refusal"
    else:
        stop = FINISH.get(finish, finish) if finish else "end_turn"
    return {
        "text": text + refusal,
        "reasoning": reasoning,
        "tools": tools,
        "stop": stop,
        "usage": usage,
        "error": error,
    }


async def run_fixture(
    name: str, request: ModelRequest | None = None
) -> tuple[list[ModelEvent], ResponseDone]:
    server = Server(sse_response(read(STREAMS / name)))
    events = await collect(make_provider(server), request)
    done = events[-1]
    assert isinstance(done, ResponseDone)
    return events, done


# --- every recorded stream ----------------------------------------------------


@pytest.mark.parametrize("path", sse_params(STREAMS))
async def test_every_recorded_stream(path: Path) -> None:
    raw = read(path)
    want = expected_from_sse(raw)
    server = Server(sse_response(raw))
    provider = make_provider(server)

    if want["error"] is not None:
        with pytest.raises(ProviderError) as info:
            await collect(provider)
        assert want["error"]["message"] in str(info.value)
        assert info.value.retryable is False and info.value.attempts == 1
        return

    events = await collect(provider)
    assert len(server.requests) == 1
    assert [type(e) for e in events].count(ResponseDone) == 1
    assert not any(isinstance(e, RetryScheduled) for e in events)
    done = events[-1]
    assert isinstance(done, ResponseDone)
    message = done.message

    assert message.text == want["text"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == want["text"]
    thinking = "".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock))
    assert thinking == want["reasoning"]
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == want["reasoning"]

    assert [t.name for t in message.tool_uses] == [c["name"] for c in want["tools"]]
    assert [t.input for t in message.tool_uses] == [
        json.loads(c["args"] or "{}") for c in want["tools"]
    ]
    assert all(t.input_error is None for t in message.tool_uses)
    for block, call in zip(message.tool_uses, want["tools"], strict=True):
        assert block.id == (call["id"] or block.id) and block.id
    assert len({t.id for t in message.tool_uses}) == len(message.tool_uses)
    started = [(e.id, e.name) for e in events if isinstance(e, ToolCallStarted)]
    assert started == [(t.id, t.name) for t in message.tool_uses]

    assert done.stop_reason == want["stop"]
    usage = want["usage"]
    if usage is not None:
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        assert done.usage.input_tokens == usage["prompt_tokens"] - cached
        assert done.usage.cache_read_tokens == cached
        assert done.usage.output_tokens == usage["completion_tokens"]


# --- hand-checked fixtures ----------------------------------------------------


async def test_parallel_tool_calls_assembled_by_index() -> None:
    events, done = await run_fixture(
        "openai-python__f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.sse"
    )
    assert done.stop_reason == "tool_use"
    assert [(t.id, t.name, t.input) for t in done.message.tool_uses] == [
        (
            "call_JMW1whyEaYG438VE1OIflxA2",
            "GetWeatherArgs",
            {"city": "Edinburgh", "country": "GB", "units": "c"},
        ),
        (
            "call_DNYTawLBoN8fj3KN6qU9N1Ou",
            "get_stock_price",
            {"ticker": "AAPL", "exchange": "NASDAQ"},
        ),
    ]
    assert [e.name for e in events if isinstance(e, ToolCallStarted)] == [
        "GetWeatherArgs",
        "get_stock_price",
    ]
    assert (done.usage.input_tokens, done.usage.output_tokens) == (149, 60)


async def test_parallel_calls_with_obfuscation_fields() -> None:
    _, done = await run_fixture("pydantic-ai__test_complex_agent_run__0.sse")
    assert [(t.id, t.name, t.input) for t in done.message.tool_uses] == [
        ("call_q2UyBRP7eXNTzAoR8lEhjc9Z", "get_country", {}),
        ("call_b51ijcpFkDiTQG1bQzsrmtW5", "get_product_name", {}),
    ]


async def test_openrouter_variant_id_zero_repeated_and_no_finish_reason() -> None:
    events, done = await run_fixture("llm__test_tools_streaming_variant_a__0.sse")
    assert done.stop_reason == "tool_use"
    assert done.message.content == [ToolUseBlock(id="0", name="llm_version", input={})]
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [
        ToolCallStarted(id="0", name="llm_version")
    ]
    assert (done.usage.input_tokens, done.usage.output_tokens) == (57, 17)


async def test_id_already_used_in_the_conversation_is_replaced_consistently() -> None:
    earlier = ModelRequest(
        system="s",
        messages=[
            user("version?"),
            assistant(ToolUseBlock(id="0", name="llm_version", input={})),
            user(ToolResultBlock(tool_use_id="0", content="1.0")),
            user("and again?"),
        ],
    )
    events, done = await run_fixture("llm__test_tools_streaming_variant_b__0.sse", earlier)
    (call,) = done.message.tool_uses
    assert call.id == "call_1"
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [
        ToolCallStarted(id="call_1", name="llm_version")
    ]


async def test_arguments_null_and_id_without_type() -> None:
    _, d = await run_fixture("llm__test_tools_streaming_variant_d__0.sse")
    assert d.message.content == [ToolUseBlock(id="0", name="llm_version", input={})]
    _, c = await run_fixture("llm__test_tools_streaming_variant_c__0.sse")
    assert c.message.content == [ToolUseBlock(id="llm_version:0", name="llm_version", input={})]
    assert c.stop_reason == "tool_use"


async def test_refusal_becomes_text_with_refusal_stop() -> None:
    _, done = await run_fixture(
        "openai-python__173417d553406f034f643e5db3f8d591fb691ebac56f5ae39a22cc7d455c5353.sse"
    )
    assert done.stop_reason == "refusal"
    assert done.message.content == [TextBlock(text="I'm sorry, I can't assist with that request.")]


async def test_length_and_n_greater_than_one() -> None:
    _, done = await run_fixture(
        "openai-python__4cc50a6135d254573a502310e6af1246f55edb6ad95fa24059f160996b68866d.sse"
    )
    assert (done.stop_reason, done.message.text) == ("max_tokens", '{"')
    _, multi = await run_fixture(
        "openai-python__a491adda08c3d4fde95f5b2ee3f60f7f745f1a56d82e62f58031cc2add502380.sse"
    )
    assert multi.message.text == '{"city":"San Francisco","temperature":65,"units":"f"}'


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("pydantic-ai__test_tool_use_failed_error_streaming__0.sse", "Tool call validation failed"),
        (
            "pydantic-ai__test_tool_use_failed_error_streaming_with_text__0.sse",
            "Tool choice is required",
        ),
    ],
)
async def test_groq_mid_stream_error_event(name: str, needle: str) -> None:
    server = Server(sse_response(read(STREAMS / name)))
    provider = make_provider(server, retry=RetryPolicy(sleep=no_sleep))
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    err = info.value
    assert str(err).startswith("openai: stream error 400 invalid_request_error: ")
    assert needle in str(err)
    assert (err.status, err.retryable, err.attempts) == (400, False, 1)
    assert len(server.requests) == 1


async def test_groq_reasoning_streams_as_thinking() -> None:
    events, done = await run_fixture("pydantic-ai__test_tool_use_failed_error_streaming__1.sse")
    thinking = done.message.content[0]
    assert isinstance(thinking, ThinkingBlock) and thinking.thinking and thinking.signature == ""
    assert any(isinstance(e, ThinkingDelta) for e in events)
    (call,) = done.message.tool_uses
    assert (call.name, call.input) == ("get_something_by_name", {"name": "example"})


async def test_openrouter_comments_then_error_chunk() -> None:
    server = Server(
        sse_response(read(STREAMS / "pydantic-ai__test_openrouter_stream_error__0.sse"))
    )
    with pytest.raises(ProviderError) as info:
        await collect(make_provider(server, retry=RetryPolicy(sleep=no_sleep)))
    assert str(info.value) == "openai: stream error 400: Token limit reached"
    assert info.value.retryable is False


async def test_404_error_body() -> None:
    body = read(STREAMS / "pydantic-ai__test_model_name_suggestion_openai-chat___0.json")
    server = Server(
        httpx2.Response(404, headers={"content-type": "application/json"}, content=body)
    )
    with pytest.raises(ProviderError) as info:
        await collect(make_provider(server, retry=RetryPolicy(sleep=no_sleep)))
    err = info.value
    assert (err.status, err.retryable, err.attempts) == (404, False, 1)
    assert "HTTP 404 invalid_request_error: The model `gpt-5.2-proo` does not exist" in str(err)


# --- the request ----------------------------------------------------------------


def _conversation() -> ModelRequest:
    return ModelRequest(
        system="You are MewCode.",
        tools=[ToolSpec(name="bash", description="Run a command", input_schema={"type": "object"})],
        messages=[
            user("list files", meta={"ts": 1}),
            assistant(
                ThinkingBlock(thinking="hmm", signature="sig"),
                "Looking.",
                ToolUseBlock(id="call_a", name="bash", input={"cmd": "ls", "note": "é"}),
                ToolUseBlock(id="call_b", name="bash", input={}),
            ),
            user(
                "a reminder",
                ToolResultBlock(tool_use_id="call_a", content="a.txt"),
                ToolResultBlock(tool_use_id="call_b", content="boom", is_error=True),
            ),
        ],
    )


def test_request_conversion() -> None:
    body = to_openai_request(_conversation(), "gpt-x", 100)
    assert list(body) == ["model", "messages", "max_tokens", "tools"]
    assert body["messages"] == [
        {"role": "system", "content": "You are MewCode."},
        {"role": "user", "content": "list files"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"cmd": "ls", "note": "é"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "bash", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "a.txt"},
        {"role": "tool", "tool_call_id": "call_b", "content": "Error: boom"},
        {"role": "user", "content": "a reminder"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "bash",
                "description": "Run a command",
                "parameters": {"type": "object"},
            },
        }
    ]
    assert "max_completion_tokens" in to_openai_request(
        _conversation(), "gpt-x", 100, max_tokens_field="max_completion_tokens"
    )


def test_assistant_with_only_tool_calls_has_null_content() -> None:
    request = ModelRequest(
        system="", messages=[user("x"), assistant(ToolUseBlock(id="c", name="t", input={}))]
    )
    messages = to_openai_request(request, "m", 1)["messages"]
    assert messages[0] == {"role": "user", "content": "x"}
    assert messages[1]["content"] is None


_MINI = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":'
    b'[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}\n\n'
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-x","choices":[],'
    b'"usage":{"prompt_tokens":100,"completion_tokens":2,"total_tokens":102,'
    b'"prompt_tokens_details":{"cached_tokens":64}}}\n\ndata: [DONE]\n\n'
)


async def test_the_sdk_sends_our_body_byte_stable_and_cached_usage() -> None:
    server = Server(sse_response(_MINI), sse_response(_MINI))
    provider = make_provider(server, max_tokens=100)
    first = await collect(provider, _conversation())
    await collect(provider, _conversation())
    one, two = server.requests
    assert one.content == two.content
    assert one.url.path == "/v1/chat/completions"
    sent = json.loads(one.content)
    expected = to_openai_request(_conversation(), "gpt-test", 100)
    assert sent == {**expected, "stream": True, "stream_options": {"include_usage": True}}
    assert one.headers["authorization"] == f"Bearer {API_KEY}"
    done = first[-1]
    assert isinstance(done, ResponseDone)
    assert (done.usage.input_tokens, done.usage.cache_read_tokens, done.usage.output_tokens) == (
        36,
        64,
        2,
    )


async def test_max_tokens_field_follows_the_host() -> None:
    server = Server(sse_response(_MINI), sse_response(_MINI))
    await collect(make_provider(server, base_url=None))
    await collect(make_provider(server, base_url="http://localhost:11434/v1", max_tokens=5))
    official, local = server.bodies()
    assert server.requests[0].url.host == "api.openai.com"
    assert official["max_completion_tokens"] == 8192 and "max_tokens" not in official
    assert local["max_tokens"] == 5 and "max_completion_tokens" not in local


async def test_local_server_without_key() -> None:
    server = Server(sse_response(_MINI))
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    provider = OpenAIProvider(
        "local", "llama", None, base_url="http://localhost:8000/v1", http_client=client
    )
    events = await collect(provider)
    assert isinstance(events[-1], ResponseDone)


async def test_missing_key_for_openai_is_a_provider_error() -> None:
    provider = OpenAIProvider("openai", "gpt-x", None)
    with pytest.raises(ProviderError) as info:
        await collect(provider)
    assert "cannot create the client" in str(info.value)


# --- odds and ends ----------------------------------------------------------------


def test_fold_quirks_on_plain_dicts() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events = fold_openai_chunks(
        [
            chunk({"role": "assistant", "content": None}),
            chunk({"role": "assistant", "content": ""}),
            chunk({"reasoning_content": "think"}),
            chunk({"content": "Hi"}),
            # an empty id, a name, whole arguments at once
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "", "function": {"name": "a", "arguments": '{"x": 1}'}}
                    ]
                }
            ),
            # a server that sends index 0 for every call, told apart by id
            chunk(
                {
                    "tool_calls": [
                        {"index": 1, "id": "dup", "function": {"name": "b", "arguments": "{"}}
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": "}"}}]}),
            chunk(
                {
                    "tool_calls": [
                        {"index": 1, "id": "other", "function": {"name": "c", "arguments": "[]"}}
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {"index": 2, "id": "t", "function": {"name": "d", "arguments": '{"a":'}}
                    ]
                }
            ),
            chunk({}, "length"),
        ],
        taken_ids={"dup", "call_1"},
    )
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert [type(e).__name__ for e in events[:-1]] == [
        "ThinkingDelta",
        "TextDelta",
        "ToolCallStarted",
        "ToolCallStarted",
        "ToolCallStarted",
        "ToolCallStarted",
    ]
    calls = done.message.tool_uses
    assert [(c.id, c.name, c.input) for c in calls] == [
        ("call_2", "a", {"x": 1}),
        ("call_3", "b", {}),
        ("other", "c", {}),
        ("t", "d", {}),
    ]
    assert calls[0].input_error is None and calls[1].input_error is None
    assert calls[2].input_error and "JSON object" in calls[2].input_error
    assert calls[3].input_error and "output limit" in calls[3].input_error
    assert done.stop_reason == "max_tokens"
    assert isinstance(done.message.content[0], ThinkingBlock)


def test_unknown_finish_reason_passes_through() -> None:
    events = fold_openai_chunks(
        [{"choices": [{"index": 0, "delta": {"content": "x"}, "finish_reason": "eos"}]}]
    )
    done = events[-1]
    assert isinstance(done, ResponseDone) and done.stop_reason == "eos"


def test_secrets_stay_out_of_repr() -> None:
    provider = OpenAIProvider("openai", "gpt-x", API_KEY)
    assert API_KEY not in repr(provider)
    assert isinstance(provider, Provider)
