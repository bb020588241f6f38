"""The scripted wire server, driven by the real SDKs and providers over 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import anthropic
import httpx2
import openai
import pytest

from mewcode_kernel.core.errors import ProviderError
from mewcode_kernel.core.events import ResponseDone, RetryScheduled, TextDelta, ToolCallStarted
from mewcode_kernel.core.messages import TextBlock, ThinkingBlock, ToolUseBlock, user
from mewcode_kernel.core.providers._retry import RetryPolicy
from mewcode_kernel.core.providers.anthropic import AnthropicProvider
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.providers.openai import OpenAIProvider
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing import ScriptError, collect, tool_call
from mewcode_kernel.testing.wire import (
    ScriptedServer,
    drop_after,
    reply,
    sse_error,
    status,
)
from tests._clients import Clients

MESSAGES = [{"role": "user", "content": "hi"}]
ARGS = {"path": "notes/a b.txt", "content": 'line "one"\nligne deux: café ✓'}
NO_WAIT = RetryPolicy(base_delay=0.0, max_delay=0.0, jitter=0.0)


@pytest.fixture(name="http")
async def _http() -> AsyncIterator[Clients]:
    clients = Clients()
    yield clients
    await clients.aclose()


def _anthropic(server: ScriptedServer, http: Clients) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="k", base_url=server.base_url, http_client=http(), max_retries=0
    )


def _openai(server: ScriptedServer, http: Clients) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key="k", base_url=server.openai_base_url, http_client=http(), max_retries=0
    )


async def _anthropic_message(client: anthropic.AsyncAnthropic) -> anthropic.types.Message:
    async with client.messages.stream(model="claude-x", max_tokens=64, messages=MESSAGES) as s:
        return await s.get_final_message()


# --- through the SDKs --------------------------------------------------------------


async def test_anthropic_text_thinking_and_usage(http: Clients) -> None:
    usage = Usage(input_tokens=120, output_tokens=33, cache_read_tokens=7, cache_creation_tokens=2)
    async with ScriptedServer(
        [reply(text="Hello there, this is a longer answer.", thinking="Let me see.", usage=usage)]
    ) as server:
        message = await _anthropic_message(_anthropic(server, http))
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "Let me see."
    assert message.content[0].signature
    assert message.content[1].text == "Hello there, this is a longer answer."
    assert message.stop_reason == "end_turn"
    assert message.model == "claude-x"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (120, 33)
    assert message.usage.cache_read_input_tokens == 7
    assert message.usage.cache_creation_input_tokens == 2
    assert server.requests[0]["messages"] == MESSAGES
    assert server.requests[0]["stream"] is True
    server.assert_all_used()


async def test_anthropic_tool_call_arguments_arrive_whole(http: Clients) -> None:
    async with ScriptedServer(
        [reply(text="Writing it.", tool_calls=[("write_file", ARGS, "toolu_fixed")])]
    ) as server:
        message = await _anthropic_message(_anthropic(server, http))
    text, call = message.content
    assert text.text == "Writing it."
    assert (call.id, call.name, call.input) == ("toolu_fixed", "write_file", ARGS)
    assert message.stop_reason == "tool_use"


async def test_anthropic_stream_has_the_quirks_of_real_traffic() -> None:
    async with ScriptedServer([reply(tool_calls=[("write_file", ARGS)])]) as server:
        async with httpx2.AsyncClient() as client:
            raw = await client.post(
                server.base_url + "/v1/messages",
                json={"model": "m", "max_tokens": 5, "messages": MESSAGES, "stream": True},
            )
    assert raw.headers["content-type"].startswith("text/event-stream")
    events = [e for e in raw.text.split("\n\n") if e]
    names = [e.split("\n")[0].removeprefix("event: ") for e in events]
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    deltas = [e for e in events if "input_json_delta" in e]
    assert '"partial_json":""' in deltas[0]
    assert len(deltas) > 4
    assert any(e.rstrip().endswith(" }") for e in events)  # whitespace padding inside JSON


async def test_openai_text_tool_calls_and_usage(http: Clients) -> None:
    usage = Usage(input_tokens=50, output_tokens=9, cache_read_tokens=30)
    async with ScriptedServer(
        [
            reply(
                text="Two calls.",
                tool_calls=[("read_file", {"path": "a"}), ("write_file", ARGS)],
                usage=usage,
            )
        ]
    ) as server:
        stream = await _openai(server, http).chat.completions.create(
            model="gpt-x",
            messages=MESSAGES,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [c async for c in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Two calls."
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            entry = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] += tc.id or ""
            entry["name"] += (tc.function.name or "") if tc.function else ""
            entry["arguments"] += (tc.function.arguments or "") if tc.function else ""
    assert [c["name"] for c in calls.values()] == ["read_file", "write_file"]
    assert all(c["id"].startswith("call_") for c in calls.values())
    assert len({c["id"] for c in calls.values()}) == 2

    assert json.loads(calls[1]["arguments"]) == ARGS
    finish = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finish == ["tool_calls"]
    assert chunks[-1].choices == []
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (80, 9)
    assert chunks[-1].usage.prompt_tokens_details.cached_tokens == 30


async def test_openai_usage_chunk_only_when_asked(http: Clients) -> None:
    async with ScriptedServer([reply(text="x")]) as server:
        stream = await _openai(server, http).chat.completions.create(
            model="gpt-x", messages=MESSAGES, stream=True
        )
        chunks = [c async for c in stream]
    assert all(c.usage is None for c in chunks)


async def test_status_errors_carry_the_protocol_body_and_retry_after(http: Clients) -> None:
    async with ScriptedServer([status(529), status(429, retry_after=3)]) as server:
        client = _anthropic(server, http)
        with pytest.raises(anthropic.APIStatusError) as overloaded:
            await _anthropic_message(client)
        with pytest.raises(anthropic.RateLimitError) as limited:
            await _anthropic_message(client)
    assert overloaded.value.status_code == 529
    assert overloaded.value.body["error"]["type"] == "overloaded_error"
    assert limited.value.response.headers["retry-after"] == "3"
    assert limited.value.body["error"]["type"] == "rate_limit_error"


async def test_openai_status_error_body(http: Clients) -> None:
    async with ScriptedServer([status(400, message="bad tools")]) as server:
        with pytest.raises(openai.BadRequestError) as err:
            await _openai(server, http).chat.completions.create(
                model="gpt-x", messages=MESSAGES, stream=True
            )
    assert err.value.body["message"] == "bad tools"


async def test_mid_stream_error_event(http: Clients) -> None:
    async with ScriptedServer([sse_error("overloaded_error"), sse_error("overloaded_error")]) as s:
        with pytest.raises(anthropic.APIStatusError) as a_err:
            await _anthropic_message(_anthropic(s, http))
        stream = await _openai(s, http).chat.completions.create(
            model="gpt-x", messages=MESSAGES, stream=True
        )
        with pytest.raises(openai.APIError) as o_err:
            _ = [c async for c in stream]
    assert a_err.value.body["error"]["type"] == "overloaded_error"
    assert "Overloaded" in str(o_err.value)


async def test_drop_after_cuts_the_connection_mid_body(http: Clients) -> None:
    async with ScriptedServer([drop_after(3)]) as server:
        with pytest.raises(httpx2.RemoteProtocolError):
            await _anthropic_message(_anthropic(server, http))


async def test_unexpected_request_fails_loudly(http: Clients) -> None:
    async with ScriptedServer([reply(text="only one")]) as server:
        client = _anthropic(server, http)
        await _anthropic_message(client)
        with pytest.raises(anthropic.InternalServerError) as err:
            await _anthropic_message(client)
    assert "unexpected request #2" in str(err.value)
    assert len(server.errors) == 1 and "all used" in server.errors[0]
    assert len(server.requests) == 2
    with pytest.raises(ScriptError, match="unexpected request #2"):
        server.assert_all_used()


async def test_unused_steps_and_unknown_paths_are_reported() -> None:
    async with ScriptedServer([reply(text="never asked")]) as server:
        async with httpx2.AsyncClient() as client:
            missing = await client.post(server.base_url + "/v1/complete", json={"stream": True})
    assert missing.status_code == 404
    with pytest.raises(ScriptError) as err:
        server.assert_all_used()
    assert "1 scripted step(s) were never requested" in str(err.value)
    assert "/v1/complete" in str(err.value)


async def test_callable_step_sees_the_request(http: Clients) -> None:
    def echo(body: dict) -> object:
        return reply(text="you said " + body["messages"][-1]["content"])

    async with ScriptedServer([echo]) as server:
        message = await _anthropic_message(_anthropic(server, http))
    assert message.content[0].text == "you said hi"


def test_sync_context_manager_and_sync_sdk() -> None:
    with ScriptedServer([reply(text="sync")]) as server:
        with anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0) as client:
            with client.messages.stream(model="m", max_tokens=5, messages=MESSAGES) as stream:
                assert stream.get_final_text() == "sync"
    with pytest.raises(RuntimeError):
        _ = server.base_url


# --- through the providers ---------------------------------------------------------

REQUEST = ModelRequest(system="You are terse.", messages=[user("write the notes")])


def _providers(server: ScriptedServer, http: Clients) -> list[AnthropicProvider | OpenAIProvider]:
    return [
        AnthropicProvider(
            "a", "claude-x", "k", base_url=server.base_url, http_client=http(), retry=NO_WAIT
        ),
        OpenAIProvider(
            "o", "gpt-x", "k", base_url=server.openai_base_url, http_client=http(), retry=NO_WAIT
        ),
    ]


async def test_providers_fold_scripted_streams(http: Clients) -> None:
    usage = Usage(input_tokens=40, output_tokens=12)
    script = [
        reply(thinking="Plan.", text="On it.", tool_calls=[("write_file", ARGS)], usage=usage)
    ] * 2
    async with ScriptedServer(script) as server:
        for provider in _providers(server, http):
            events = await collect(provider.stream(REQUEST))
            done = events[-1]
            assert isinstance(done, ResponseDone)
            assert done.stop_reason == "tool_use"
            assert done.usage.input_tokens == 40 and done.usage.output_tokens == 12
            assert [type(b) for b in done.message.content] == [
                ThinkingBlock,
                TextBlock,
                ToolUseBlock,
            ]
            call = done.message.tool_uses[0]
            assert (call.name, call.input, call.input_error) == ("write_file", ARGS, None)
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "On it."
            assert [e.name for e in events if isinstance(e, ToolCallStarted)] == ["write_file"]
        server.assert_all_used()
    anthropic_body, openai_body = server.requests
    assert anthropic_body["system"][0]["text"] == "You are terse."
    assert openai_body["messages"][0] == {"role": "system", "content": "You are terse."}


async def test_providers_retry_scripted_failures(http: Clients) -> None:
    script = [status(529), drop_after(4), sse_error(), reply(text="finally")]
    async with ScriptedServer(script * 2) as server:
        for provider in _providers(server, http):
            events = await collect(provider.stream(REQUEST))
            retries = [e for e in events if isinstance(e, RetryScheduled)]
            assert [r.attempt for r in retries] == [2, 3, 4]
            assert events[-1].message.text == "finally"
        server.assert_all_used()


async def test_provider_gives_up_on_a_client_error(http: Clients) -> None:
    async with ScriptedServer([status(400, message="messages: too long")]) as server:
        provider = _providers(server, http)[0]
        with pytest.raises(ProviderError, match="too long") as err:
            await collect(provider.stream(REQUEST))
    assert err.value.status == 400 and not err.value.retryable


async def test_scripted_model_blocks_work_on_the_wire(http: Clients) -> None:
    async with ScriptedServer([reply(tool_call("ls", {"path": "."}, id="toolu_x"), "done")]) as s:
        done = (await collect(_providers(s, http)[0].stream(REQUEST)))[-1]
    assert done.message.tool_uses[0].id == "toolu_x"
    assert done.message.text == "done"
