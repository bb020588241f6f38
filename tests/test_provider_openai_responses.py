"""The OpenAI Responses provider (``protocol: openai-responses``), through the
real ``openai`` SDK: every recorded stream, a scripted server on 127.0.0.1
speaking the Responses SSE wire format, and malformed streams."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mewcode_kernel.core import open_session
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.errors import ProviderError
from mewcode_kernel.core.events import (
    ResponseDone,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    TurnDone,
)
from mewcode_kernel.core.messages import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    user,
)
from mewcode_kernel.core.pricing import estimate_cost
from mewcode_kernel.core.providers._common import REASONING_SIGNATURE
from mewcode_kernel.core.providers._retry import RetryPolicy
from mewcode_kernel.core.providers.anthropic import to_anthropic_request
from mewcode_kernel.core.providers.base import ModelRequest, ToolSpec
from mewcode_kernel.core.providers.factory import build_provider
from mewcode_kernel.core.providers.openai import to_openai_request
from mewcode_kernel.core.providers.openai_responses import (
    OpenAIResponsesProvider,
    to_responses_request,
)
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, raw_stream, reply, sse_error
from tests._fixtures import FIXTURES
from tests._mock_http import Server, no_sleep, read, sse_params, sse_response

STREAMS = FIXTURES / "streams" / "openai_responses"
KEY = "sk-responses-test-SECRET-0123456789"
# the projects here are the user's own (their model on a local test server)
trusted = pytest.mark.usefixtures("trusted_projects")
NO_WAIT = RetryPolicy(base_delay=0.0, max_delay=0.0, jitter=0.0, sleep=no_sleep)
TOOLS = [
    ToolSpec(name="read_file", description="Read a file.", input_schema={"type": "object"}),
    ToolSpec(name="glob", description="Find files.", input_schema={"type": "object"}),
]


def mocked(handler: Server, **kw: Any) -> OpenAIResponsesProvider:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    kw.setdefault("retry", NO_WAIT)
    return OpenAIResponsesProvider("r", "gpt-5", KEY, http_client=client, **kw)


def frames_of(raw: str) -> list[dict[str, Any]]:
    out = []
    for block in raw.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                out.append(json.loads(line[6:]))
    return out


# --- every recorded stream, through the SDK --------------------------------------------


@pytest.mark.parametrize("path", sse_params(STREAMS))
async def test_recorded_streams_fold_to_what_their_final_event_says(path: Path) -> None:
    body = read(path)
    provider = mocked(Server(sse_response(body)))
    events = [e async for e in provider.stream(ModelRequest(system="s", messages=[user("hi")]))]
    done = events[-1]
    assert isinstance(done, ResponseDone)

    # what the final response.completed says, computed here from the raw text
    final = next(f for f in frames_of(body.decode()) if f["type"] == "response.completed")
    output = final["response"]["output"]
    calls = [i for i in output if i["type"] == "function_call"]
    texts = [
        p["text"]
        for i in output
        if i["type"] == "message"
        for p in i["content"]
        if p["type"] == "output_text"
    ]
    reasoning = [i for i in output if i["type"] == "reasoning"]
    got_calls = [b for b in done.message.content if isinstance(b, ToolUseBlock)]
    assert [(c.id, c.name, c.input) for c in got_calls] == [
        (c["call_id"], c["name"], json.loads(c["arguments"])) for c in calls
    ]
    assert [b.text for b in done.message.content if isinstance(b, TextBlock)] == [
        t for t in texts if t
    ] or texts == []
    thinking = [b for b in done.message.content if isinstance(b, ThinkingBlock)]
    assert len(thinking) == len(reasoning)
    for block, item in zip(thinking, reasoning, strict=True):
        saved = json.loads(block.signature.removeprefix(REASONING_SIGNATURE))
        assert saved["id"] == item["id"]
        assert saved["encrypted_content"] == item.get("encrypted_content")
    assert done.stop_reason == ("tool_use" if calls else "end_turn")
    usage = final["response"]["usage"]
    cached = usage["input_tokens_details"]["cached_tokens"]
    assert done.usage == Usage(
        input_tokens=usage["input_tokens"] - cached,
        output_tokens=usage["output_tokens"],
        cache_read_tokens=cached,
    )
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed == "".join(texts)
    assert [e.id for e in events if isinstance(e, ToolCallStarted)] == [c["call_id"] for c in calls]


async def test_the_recorded_http_error_is_reported_with_the_servers_words() -> None:
    body = read(STREAMS / "pydantic-ai__test_model_name_suggestion_openai-responses___0.json")
    server = Server(
        httpx2.Response(400, content=body, headers={"content-type": "application/json"})
    )
    with pytest.raises(ProviderError) as caught:
        await collect(mocked(server).stream(ModelRequest(system="", messages=[user("hi")])))
    assert "does not exist" in str(caught.value) and not caught.value.retryable
    assert KEY not in str(caught.value)


# --- the request ------------------------------------------------------------------------


def test_the_request_carries_items_in_order_and_stores_nothing() -> None:
    reasoning = ThinkingBlock(
        thinking="I should look.",
        signature=REASONING_SIGNATURE + json.dumps({"id": "rs_1", "encrypted_content": "ENC"}),
    )
    messages = [
        user("find it"),
        Message(
            role="assistant",
            content=[
                reasoning,
                TextBlock(text="Looking."),
                ToolUseBlock(id="call_a", name="glob", input={"pattern": "*.py"}),
            ],
        ),
        user(ToolResultBlock(tool_use_id="call_a", content="boom", is_error=True)),
    ]
    body = to_responses_request(
        ModelRequest(system="Be brief.", messages=messages, tools=TOOLS), "gpt-5", 100
    )
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["instructions"] == "Be brief." and body["max_output_tokens"] == 100
    assert body["input"] == [
        {"role": "user", "content": "find it"},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "I should look."}],
            "encrypted_content": "ENC",
        },
        {"role": "assistant", "content": "Looking."},
        {
            "type": "function_call",
            "call_id": "call_a",
            "name": "glob",
            "arguments": '{"pattern": "*.py"}',
        },
        {"type": "function_call_output", "call_id": "call_a", "output": "Error: boom"},
    ]
    assert [t["name"] for t in body["tools"]] == ["read_file", "glob"]


@pytest.mark.parametrize(
    "signature",
    [
        "",
        "anthropic-signature-abc",
        REASONING_SIGNATURE + "not json",
        REASONING_SIGNATURE + "[1, 2]",
        REASONING_SIGNATURE + '{"id": 5}',
        REASONING_SIGNATURE.upper() + '{"id": "rs_x"}',
    ],
)
def test_thinking_that_is_not_a_reasoning_item_is_never_sent_as_one(signature: str) -> None:
    messages = [
        user("q"),
        Message(role="assistant", content=[ThinkingBlock(thinking="t", signature=signature)]),
    ]
    body = to_responses_request(ModelRequest(system="", messages=messages), "m", 10)
    assert [i for i in body["input"] if i.get("type") == "reasoning"] == []


def test_other_providers_leave_a_reasoning_item_out() -> None:
    item = ThinkingBlock(
        thinking="private", signature=REASONING_SIGNATURE + '{"id":"rs_1","encrypted_content":"E"}'
    )
    messages = [
        user("q"),
        Message(role="assistant", content=[item, TextBlock(text="a")]),
        user("n"),
    ]
    request = ModelRequest(system="", messages=messages)
    anthropic_body = to_anthropic_request(request, "claude-x", 100)
    assert "rs_1" not in json.dumps(anthropic_body) and "thinking" not in json.dumps(anthropic_body)
    assert "rs_1" not in json.dumps(to_openai_request(request, "gpt-x", 100))


# --- a two-tool-call turn with a reasoning item, over a real socket --------------------------


def project(root: Path, server: ScriptedServer, model: str = "gpt-4.1") -> None:
    (root / ".mewcode.yaml").write_text(
        "default_provider: resp\n"
        "providers:\n"
        "  resp:\n"
        "    protocol: openai-responses\n"
        f"    model: {model}\n"
        f"    base_url: {server.openai_base_url}\n"
        f"    api_key: {KEY}\n"
    )
    (root / "a.txt").write_text("alpha\n")


@trusted
async def test_two_tool_calls_and_reasoning_round_trip(tmp_path: Path) -> None:
    calls = [("read_file", {"path": "a.txt"}, "call_r1"), ("glob", {"pattern": "*.txt"}, "call_g1")]
    script = [
        reply(
            thinking="Read the file and list the others.",
            tool_calls=calls,
            usage=Usage(input_tokens=900, output_tokens=40, cache_read_tokens=100),
        ),
        reply(text="a.txt says alpha.", usage=Usage(input_tokens=50, output_tokens=8)),
    ]
    with ScriptedServer(script) as server:
        project(tmp_path, server)
        async with open_session(tmp_path, home=tmp_path / "home") as s:
            events = await collect(s.run("What does a.txt say?"))
        server.assert_all_used()
        first, second = server.received

    assert first.path == "/v1/responses" and second.path == "/v1/responses"
    assert first.headers.get("authorization") == f"Bearer {KEY}"
    body = second.body
    assert body["stream"] is True and body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    kinds = [i.get("type") or i["role"] for i in body["input"]]
    assert kinds == [
        "user",
        "reasoning",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    reasoning = body["input"][1]
    assert reasoning["id"].startswith("rs_") and reasoning["encrypted_content"]
    assert reasoning["summary"] == [
        {"type": "summary_text", "text": "Read the file and list the others."}
    ]
    outputs = {
        i["call_id"]: i["output"] for i in body["input"] if i.get("type") == "function_call_output"
    }
    assert set(outputs) == {"call_r1", "call_g1"}
    assert "alpha" in outputs["call_r1"] and "a.txt" in outputs["call_g1"]
    assert [i["call_id"] for i in body["input"] if i.get("type") == "function_call"] == [
        "call_r1",
        "call_g1",
    ]

    # the turn: thinking shown, two calls, the answer; usage and cost as for the others
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)).startswith("Read the")
    done = next(e for e in events if isinstance(e, TurnDone))
    assert done.text == "a.txt says alpha." and done.reason == "end_turn"
    assert done.usage == Usage(input_tokens=950, output_tokens=48, cache_read_tokens=100)
    cost = estimate_cost("gpt-4.1", done.usage)
    assert cost is not None and cost > 0


@trusted
async def test_a_malformed_stream_ends_with_a_clear_message_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    bad = [
        raw_stream("event: response.created\ndata: {not json\n\n"),
        raw_stream('data: {"sequence_number": 1}\n\n'),
        raw_stream(
            'event: response.output_item.done\ndata: {"type":"response.output_item.done",'
            '"output_index":0,"item":{"type":"reasoning","id":"rs","summary":7}}\n\n'
        ),
        raw_stream(
            'event: response.failed\ndata: {"type":"response.failed","response":'
            '{"status":"failed","error":{"code":"invalid_prompt","message":"prompt refused"}}}\n\n'
        ),
        sse_error("invalid_request_error", "the stream broke", after=2),
    ]
    script = []
    for step in bad:
        script += [step, reply(text="fine again")]
    with ScriptedServer(script) as server:
        project(tmp_path, server)
        async with open_session(tmp_path, home=tmp_path / "home") as s:
            outcomes = []
            for n in range(len(bad)):
                broken = next(
                    e for e in await collect(s.run(f"try {n}")) if isinstance(e, TurnDone)
                )
                fine = next(e for e in await collect(s.run("again")) if isinstance(e, TurnDone))
                outcomes.append((broken, fine))
        server.assert_all_used()
    messages = [broken.error or "" for broken, _ in outcomes]
    assert all(broken.reason == "error" for broken, _ in outcomes), messages
    assert "malformed Responses stream" in messages[0]
    assert "malformed Responses stream" in messages[1]
    assert "malformed Responses stream" in messages[2]
    assert "prompt refused" in messages[3]
    assert "the stream broke" in messages[4]
    assert all("internal error" not in m for m in messages)
    assert all(fine.text == "fine again" for _, fine in outcomes)


async def test_a_cut_stream_is_retried_then_reported() -> None:
    frames = [
        'event: response.created\ndata: {"type":"response.created","response":{"id":"r",'
        '"status":"in_progress","model":"gpt-5","output":[]},"sequence_number":0}\n\n',
        'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
        '"item_id":"m","output_index":0,"content_index":0,"delta":"Hal","sequence_number":1}\n\n',
    ]
    body = "".join(frames).encode()
    server = Server(*[sse_response(body) for _ in range(4)])
    events = []
    with pytest.raises(ProviderError) as caught:
        async for event in mocked(server).stream(ModelRequest(system="", messages=[user("hi")])):
            events.append(event)
    assert "gave up after 4 attempts" in str(caught.value)
    assert "ended before response.completed" in str(caught.value)
    assert sum(isinstance(e, RetryScheduled) for e in events) == 3


# --- config ------------------------------------------------------------------------------


def test_the_protocol_is_chosen_per_provider_and_reads_openais_variables(tmp_path: Path) -> None:
    (tmp_path / ".mewcode.yaml").write_text(
        "providers:\n  resp:\n    protocol: openai-responses\n    model: gpt-5\n"
    )
    env = {"OPENAI_API_KEY": KEY}
    config = load_config(tmp_path, home=tmp_path / "home", env=env)
    settings = config.select_provider("resp")
    assert settings.protocol == "openai-responses" and settings.context_window == 400_000
    provider = build_provider(settings)
    assert isinstance(provider, OpenAIResponsesProvider)
    assert KEY not in repr(provider)


@pytest.mark.parametrize(("line", "store"), [("", False), ("    store: true\n", True)])
async def test_store_is_false_unless_the_provider_entry_says_so(
    tmp_path: Path, line: str, store: bool
) -> None:
    (tmp_path / ".mewcode.yaml").write_text(
        "providers:\n  resp:\n    protocol: openai-responses\n    model: gpt-5\n" + line
    )
    config = load_config(tmp_path, home=tmp_path / "home", env={"OPENAI_API_KEY": KEY})
    server = Server(sse_response(read(STREAMS / "llm__test_responses_basic_streaming__0.sse")))
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    settings = config.select_provider("resp")
    provider = OpenAIResponsesProvider(
        "r", "gpt-5", KEY, http_client=client, retry=NO_WAIT, store=settings.store
    )
    assert isinstance(build_provider(settings), OpenAIResponsesProvider)
    await collect(provider.stream(ModelRequest(system="", messages=[user("hi")])))
    [body] = server.bodies()
    assert body["store"] is store
    assert ("include" in body) is not store


def test_a_store_that_is_not_a_boolean_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".mewcode.yaml").write_text(
        "providers:\n  resp:\n    protocol: openai-responses\n    model: gpt-5\n    store: 'yes'\n"
    )
    config = load_config(tmp_path, home=tmp_path / "home", env={"OPENAI_API_KEY": KEY})
    assert any("store" in str(w) for w in config.warnings)
    assert "resp" not in config.providers or not config.providers["resp"].store


# --- what a hostile or broken server may send ------------------------------------------


def scripted_body(*blocks: Any, stop_reason: str = "tool_use") -> bytes:
    from mewcode_kernel.testing._responses_sse import responses_sse

    frames = responses_sse(
        blocks, stop_reason=stop_reason, usage=Usage(input_tokens=3), model="m", response_id="r1"
    )
    return "".join(frames).encode()


async def test_reused_or_empty_call_ids_are_replaced_consistently() -> None:
    body = scripted_body(
        ToolUseBlock(id="call_old", name="glob", input={}),
        ToolUseBlock(id="", name="glob", input={}),
        ToolUseBlock(id="call_dup", name="glob", input={}),
        ToolUseBlock(id="call_dup", name="glob", input={}),
    )
    earlier = Message(role="assistant", content=[ToolUseBlock(id="call_old", name="glob")])
    request = ModelRequest(
        system="",
        messages=[
            user("a"),
            earlier,
            user(ToolResultBlock(tool_use_id="call_old", content="x")),
        ],
    )
    events = await collect(mocked(Server(sse_response(body))).stream(request))
    done = events[-1]
    ids = [b.id for b in done.message.content if isinstance(b, ToolUseBlock)]
    assert len(set(ids)) == 4 and "call_old" not in ids and "" not in ids
    assert [e.id for e in events if isinstance(e, ToolCallStarted)] == ids


@pytest.mark.parametrize(
    "arguments", ['{"pattern": "*.py"', "[1, 2]", "not json", '"just a string"']
)
async def test_arguments_that_are_not_an_object_reach_the_model_as_an_error(
    arguments: str,
) -> None:
    frames = [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "function_call", "id": "fc", "call_id": "c1", "name": "glob"},
        },
        {
            "type": "response.function_call_arguments.delta",
            "output_index": 0,
            "item_id": "fc",
            "delta": arguments,
        },
        {"type": "response.completed", "response": {"id": "r", "status": "completed"}},
    ]
    body = "".join(f"event: {f['type']}\ndata: {json.dumps(f)}\n\n" for f in frames).encode()
    events = await collect(
        mocked(Server(sse_response(body))).stream(ModelRequest(system="", messages=[user("a")]))
    )
    [call] = [b for b in events[-1].message.content if isinstance(b, ToolUseBlock)]
    assert call.id == "c1" and call.input == {} and call.input_error


async def test_an_incomplete_response_says_why() -> None:
    body = scripted_body(TextBlock(text="cut sh"), stop_reason="max_tokens")
    events = await collect(
        mocked(Server(sse_response(body))).stream(ModelRequest(system="", messages=[user("a")]))
    )
    assert events[-1].stop_reason == "max_tokens"
    assert events[-1].message.content == [TextBlock(text="cut sh")]


@pytest.mark.parametrize(
    "error",
    [
        {"type": "error", "code": "server_error", "message": "try later"},
        {
            "type": "response.failed",
            "response": {"error": {"code": "server_error", "message": "try later"}},
        },
    ],
)
async def test_transient_stream_errors_are_retried(error: dict[str, Any]) -> None:
    broken = f"event: {error['type']}\ndata: {json.dumps(error)}\n\n".encode()
    good = scripted_body(TextBlock(text="ok"), stop_reason="end_turn")
    server = Server(sse_response(broken), sse_response(good))
    events = await collect(mocked(server).stream(ModelRequest(system="", messages=[user("a")])))
    assert sum(isinstance(e, RetryScheduled) for e in events) == 1
    assert "try later" in next(e for e in events if isinstance(e, RetryScheduled)).reason
    assert events[-1].message.content == [TextBlock(text="ok")]


def test_a_reasoning_item_left_alone_is_not_sent() -> None:
    lone = ThinkingBlock(
        thinking="cut", signature=REASONING_SIGNATURE + '{"id":"rs_9","encrypted_content":"E"}'
    )
    messages = [user("q"), Message(role="assistant", content=[lone]), user("go on")]
    body = to_responses_request(ModelRequest(system="", messages=messages), "m", 10)
    assert body["input"] == [{"role": "user", "content": "q"}, {"role": "user", "content": "go on"}]


def test_images_in_tool_results_follow_the_outputs() -> None:
    from mewcode_kernel.core.messages import ImageBlock, ImageSource

    pixel = ImageBlock(source=ImageSource(media_type="image/png", data="iVBORw0KGgo="))
    result = ToolResultBlock(tool_use_id="c1", content=[TextBlock(text="a pixel:"), pixel])
    messages = [
        user("q"),
        Message(role="assistant", content=[ToolUseBlock(id="c1", name="glob")]),
        user(result, "and now?"),
    ]
    body = to_responses_request(ModelRequest(system="", messages=messages), "m", 10)
    output, follow = body["input"][-2:]
    assert (
        output["type"] == "function_call_output"
        and "attached in the next message" in output["output"]
    )
    assert follow["role"] == "user"
    assert follow["content"][1] == {
        "type": "input_image",
        "image_url": "data:image/png;base64,iVBORw0KGgo=",
    }
    assert follow["content"][-1] == {"type": "input_text", "text": "and now?"}
