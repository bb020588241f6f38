"""Retries: the policy, the shared loop, and both providers over scripted HTTP.

No real sleeping: every policy gets a recording no-op ``sleep``.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx2
import pytest

from mewcode_kernel.core.errors import ProviderError
from mewcode_kernel.core.events import (
    ModelEvent,
    ResponseDone,
    RetryScheduled,
    TextDelta,
    UsageReported,
)
from mewcode_kernel.core.messages import TextBlock, ToolUseBlock, user
from mewcode_kernel.core.providers import Provider
from mewcode_kernel.core.providers._retry import (
    Failure,
    RetryPolicy,
    StreamIncomplete,
    status_failure,
    stream_error_failure,
    stream_with_retry,
)
from mewcode_kernel.core.providers.anthropic import AnthropicProvider
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.providers.openai import OpenAIProvider
from tests._mock_http import Server, sse_response

REQUEST = ModelRequest(system="s", messages=[user("hi")])


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def policy(sleeps: Sleeps, **kwargs: Any) -> RetryPolicy:
    return RetryPolicy(jitter=0.0, sleep=sleeps, **kwargs)


def broken_sse(head: bytes) -> httpx2.Response:
    """A 200 stream whose connection drops after ``head``."""

    async def chunks() -> AsyncIterator[bytes]:
        yield head
        raise httpx2.ReadError("peer closed connection without sending complete message body")

    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=chunks())


def error_json(status: int, error_type: str, message: str, **headers: str) -> httpx2.Response:
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return httpx2.Response(
        status, headers={"content-type": "application/json", **headers}, json=body
    )


async def collect(provider: Provider) -> list[ModelEvent]:
    """The stream's events; the running token counts (``UsageReported``) are
    left out, as what is asserted here is what a retry does to the content."""
    return [e async for e in provider.stream(REQUEST) if not isinstance(e, UsageReported)]


def consume_like_the_loop(events: list[ModelEvent]) -> str:
    """The consumer contract: drop what was streamed when a retry is scheduled."""
    shown: list[str] = []
    for event in events:
        if isinstance(event, RetryScheduled):
            shown.clear()
        elif isinstance(event, TextDelta):
            shown.append(event.text)
    return "".join(shown)


# --- Anthropic wire ---------------------------------------------------------------


def frame(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


A_START = frame(
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 1},
        },
    }
) + frame(
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
)
A_HELLO = frame(
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}
)
A_REST = (
    frame(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": " world"},
        }
    )
    + frame({"type": "content_block_stop", "index": 0})
    + frame(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 5},
        }
    )
    + frame({"type": "message_stop"})
)
A_OK = A_START + A_HELLO + A_REST


def a_stream_error(error_type: str, message: str) -> bytes:
    return f'event: error\ndata: {{"type":"error","error":{{"type":"{error_type}","message":"{message}"}}}}\n\n'.encode()


def anthropic(server: Server, retry: RetryPolicy) -> AnthropicProvider:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    return AnthropicProvider(
        "claude",
        "claude-test",
        "sk-ant-key-123456",
        "http://a.test",
        http_client=client,
        retry=retry,
    )


def assert_hello_world(events: list[ModelEvent]) -> None:
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.message.content == [TextBlock(text="Hello world")]
    assert done.stop_reason == "end_turn"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (12, 5)
    assert consume_like_the_loop(events) == "Hello world"


async def test_anthropic_529_then_success() -> None:
    sleeps = Sleeps()
    server = Server(error_json(529, "overloaded_error", "Overloaded"), sse_response(A_OK))
    events = await collect(anthropic(server, policy(sleeps)))
    retry = events[0]
    assert retry == RetryScheduled(
        attempt=2,
        max_attempts=4,
        delay=1.0,
        reason="HTTP 529 overloaded_error: Overloaded",
        status=529,
    )
    assert sleeps.calls == [1.0]
    assert len(server.requests) == 2
    assert_hello_world(events)


@pytest.mark.parametrize(
    ("header", "value", "delay"), [("retry-after", "7", 7.0), ("retry-after", "120", 30.0)]
)
async def test_anthropic_429_honours_retry_after(header: str, value: str, delay: float) -> None:
    sleeps = Sleeps()
    server = Server(
        error_json(429, "rate_limit_error", "slow down", **{header: value}), sse_response(A_OK)
    )
    events = await collect(anthropic(server, policy(sleeps)))
    assert sleeps.calls == [delay]
    assert isinstance(events[0], RetryScheduled) and events[0].delay == delay
    assert "rate_limit_error" in events[0].reason
    assert_hello_world(events)


async def test_anthropic_500_every_time_gives_up() -> None:
    sleeps = Sleeps()
    server = Server(*[error_json(500, "api_error", "Internal server error") for _ in range(4)])
    events: list[ModelEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in anthropic(server, policy(sleeps)).stream(REQUEST):
            events.append(event)
    err = info.value
    assert (err.status, err.retryable, err.attempts) == (500, True, 4)
    assert str(err) == "claude: gave up after 4 attempts: HTTP 500 api_error: Internal server error"
    assert err.__cause__ is not None and "500" in str(err.__cause__)
    assert [e.attempt for e in events if isinstance(e, RetryScheduled)] == [2, 3, 4]
    assert sleeps.calls == [1.0, 2.0, 4.0]
    assert len(server.requests) == 4


async def test_anthropic_connection_dropped_mid_body_then_success() -> None:
    sleeps = Sleeps()
    server = Server(broken_sse(A_START + A_HELLO), sse_response(A_OK))
    events = await collect(anthropic(server, policy(sleeps)))
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["TextDelta", "RetryScheduled", "TextDelta", "TextDelta", "ResponseDone"]
    retry = events[1]
    assert isinstance(retry, RetryScheduled) and retry.reason.startswith("connection error")
    assert_hello_world(events)


async def test_anthropic_stream_ending_without_message_stop_is_retried() -> None:
    sleeps = Sleeps()
    server = Server(sse_response(A_START + A_HELLO), sse_response(A_OK))
    events = await collect(anthropic(server, policy(sleeps)))
    retry = events[1]
    assert isinstance(retry, RetryScheduled) and "incomplete stream" in retry.reason
    assert_hello_world(events)


async def test_anthropic_mid_stream_overloaded_then_success() -> None:
    sleeps = Sleeps()
    first = A_START + A_HELLO + a_stream_error("overloaded_error", "Overloaded")
    server = Server(sse_response(first), sse_response(A_OK))
    events = await collect(anthropic(server, policy(sleeps)))
    retry = events[1]
    assert isinstance(retry, RetryScheduled)
    assert retry.reason == "stream error overloaded_error: Overloaded"
    assert_hello_world(events)


async def test_anthropic_mid_stream_invalid_request_is_final() -> None:
    sleeps = Sleeps()
    server = Server(sse_response(A_START + a_stream_error("invalid_request_error", "bad thing")))
    with pytest.raises(ProviderError) as info:
        await collect(anthropic(server, policy(sleeps)))
    assert str(info.value) == "claude: stream error invalid_request_error: bad thing"
    assert info.value.retryable is False and sleeps.calls == []


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_anthropic_client_errors_are_not_retried(status: int) -> None:
    sleeps = Sleeps()
    server = Server(error_json(status, "invalid_request_error", "nope"))
    with pytest.raises(ProviderError) as info:
        await collect(anthropic(server, policy(sleeps)))
    assert (info.value.status, info.value.retryable, info.value.attempts) == (status, False, 1)
    assert sleeps.calls == [] and len(server.requests) == 1


async def test_anthropic_connect_error_then_success() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    sleeps = Sleeps()
    events = await collect(anthropic(Server(refuse, sse_response(A_OK)), policy(sleeps)))
    assert isinstance(events[0], RetryScheduled) and "connection error" in events[0].reason
    assert_hello_world(events)


# --- OpenAI wire --------------------------------------------------------------------


def chunk(
    delta: dict[str, Any] | None, finish: str | None = None, usage: dict[str, int] | None = None
) -> bytes:
    data: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage:
        data["usage"] = usage
    return f"data: {json.dumps(data)}\n\n".encode()


O_HEAD = chunk({"role": "assistant", "content": ""}) + chunk({"content": "Hel"})
O_TOOL = chunk(
    {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_x",
                "type": "function",
                "function": {"name": "ls", "arguments": "{}"},
            }
        ]
    }
)
O_OK = (
    O_HEAD
    + chunk({"content": "lo"})
    + O_TOOL
    + chunk({}, "tool_calls")
    + chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13})
    + b"data: [DONE]\n\n"
)


def openai(server: Server, retry: RetryPolicy) -> OpenAIProvider:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    return OpenAIProvider(
        "compat", "gpt-test", "sk-key-123456", "http://o.test/v1", http_client=client, retry=retry
    )


def assert_openai_ok(events: list[ModelEvent]) -> None:
    done = events[-1]
    assert isinstance(done, ResponseDone)
    assert done.message.content == [
        TextBlock(text="Hello"),
        ToolUseBlock(id="call_x", name="ls", input={}),
    ]
    assert done.stop_reason == "tool_use"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (10, 3)
    assert consume_like_the_loop(events) == "Hello"


async def test_openai_503_then_success() -> None:
    sleeps = Sleeps()
    server = Server(
        httpx2.Response(503, json={"error": {"message": "busy", "type": "server_error"}}),
        sse_response(O_OK),
    )
    events = await collect(openai(server, policy(sleeps)))
    assert events[0] == RetryScheduled(
        attempt=2, max_attempts=4, delay=1.0, reason="HTTP 503 server_error: busy", status=503
    )
    assert_openai_ok(events)


async def test_openai_429_retry_after_ms() -> None:
    sleeps = Sleeps()
    limited = httpx2.Response(
        429,
        headers={"retry-after-ms": "1500"},
        json={"error": {"message": "slow", "type": "rate_limit_exceeded"}},
    )
    events = await collect(openai(Server(limited, sse_response(O_OK)), policy(sleeps)))
    assert sleeps.calls == [1.5]
    assert_openai_ok(events)


async def test_openai_stream_without_finish_or_usage_is_retried() -> None:
    sleeps = Sleeps()
    server = Server(sse_response(O_HEAD + O_TOOL), sse_response(O_OK))
    events = await collect(openai(server, policy(sleeps)))
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert len(retries) == 1 and "incomplete stream" in retries[0].reason
    assert_openai_ok(events)


async def test_openai_connection_dropped_mid_body_then_success() -> None:
    sleeps = Sleeps()
    server = Server(broken_sse(O_HEAD), sse_response(O_OK))
    events = await collect(openai(server, policy(sleeps)))
    assert [type(e).__name__ for e in events][:2] == ["TextDelta", "RetryScheduled"]
    assert_openai_ok(events)


async def test_openai_mid_stream_server_error_is_retried() -> None:
    sleeps = Sleeps()
    bad = (
        O_HEAD + b'event: error\ndata: {"error":{"message":"overloaded","type":"server_error"}}\n\n'
    )
    events = await collect(openai(Server(sse_response(bad), sse_response(O_OK)), policy(sleeps)))
    retry = next(e for e in events if isinstance(e, RetryScheduled))
    assert retry.reason == "stream error server_error: overloaded"
    assert_openai_ok(events)


# --- the policy and the loop, directly -------------------------------------------------


def test_backoff_is_exponential_capped_and_jittered() -> None:
    plain = RetryPolicy(jitter=0.0)
    assert [plain.delay(n) for n in range(1, 8)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    jittered = RetryPolicy(jitter=0.5, rng=lambda: 1.0)
    assert jittered.delay(3) == 2.0
    assert RetryPolicy().delay(1, retry_after=999.0) == 30.0
    assert RetryPolicy().delay(1, retry_after=2.5) == 2.5
    with pytest.raises(ValueError):
        RetryPolicy(max_attempts=0)
    with pytest.raises(ValueError):
        RetryPolicy(jitter=2.0)


def test_status_classification() -> None:
    assert status_failure(529, "overloaded_error", "Overloaded").retryable
    assert status_failure(408, None, None).retryable
    assert not status_failure(400, "invalid_request_error", "x").retryable
    assert not status_failure(500, None, None, {"x-should-retry": "false"}).retryable
    assert status_failure(409, None, None, {"x-should-retry": "true"}).retryable
    assert status_failure(429, None, None, {"Retry-After": "3"}).retry_after == 3.0
    soon = email.utils.formatdate(time.time() + 60, usegmt=True)
    after = status_failure(503, None, None, {"retry-after": soon}).retry_after
    assert after is not None and 50 < after <= 61
    assert status_failure(429, None, None, {"retry-after": "whenever"}).retry_after is None
    assert status_failure(502, None, "").message == "HTTP 502"


def test_stream_error_classification() -> None:
    assert stream_error_failure("overloaded_error", "Overloaded").retryable
    assert stream_error_failure("rate_limit_error", "x").retryable
    assert stream_error_failure(None, "x", "503").retryable
    assert not stream_error_failure("invalid_request_error", "x").retryable
    assert not stream_error_failure("invalid_request_error", "x", 400).retryable


async def test_loop_passes_unknown_exceptions_through() -> None:
    async def attempt() -> AsyncGenerator[ModelEvent, None]:
        yield TextDelta(text="x")
        raise KeyError("a bug, not a provider failure")

    with pytest.raises(KeyError):
        async for _ in stream_with_retry(
            provider="p",
            policy=RetryPolicy(sleep=Sleeps()),
            attempt=attempt,
            classify=lambda e: None,
        ):
            pass


async def test_loop_retries_incomplete_streams_and_stops_after_success() -> None:
    sleeps = Sleeps()
    calls: list[int] = []

    async def attempt() -> AsyncGenerator[ModelEvent, None]:
        calls.append(1)
        yield TextDelta(text=f"try {len(calls)}")
        if len(calls) < 3:
            raise StreamIncomplete("cut")

    def classify(exc: Exception) -> Failure | None:
        return (
            Failure(message=str(exc), retryable=True) if isinstance(exc, StreamIncomplete) else None
        )

    events = [
        e
        async for e in stream_with_retry(
            provider="p",
            policy=RetryPolicy(max_attempts=3, jitter=0.0, sleep=sleeps),
            attempt=attempt,
            classify=classify,
        )
    ]
    assert consume_like_the_loop(events) == "try 3"
    assert [e.attempt for e in events if isinstance(e, RetryScheduled)] == [2, 3]
    assert sleeps.calls == [1.0, 2.0]
