"""Record through the real SDKs against the scripted server, then replay offline."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import anthropic
import httpx2
import pytest

from mewcode_kernel.core.errors import ConfigError, ReplayMismatch
from mewcode_kernel.core.events import ResponseDone, RetryScheduled
from mewcode_kernel.core.messages import ToolResultBlock, user
from mewcode_kernel.core.providers._retry import RetryPolicy
from mewcode_kernel.core.providers.anthropic import AnthropicProvider
from mewcode_kernel.core.providers.base import ModelRequest, ToolSpec
from mewcode_kernel.core.providers.openai import OpenAIProvider
from mewcode_kernel.core.providers.openai_responses import OpenAIResponsesProvider
from mewcode_kernel.core.providers.recording.cassette import Cassette, json_diff, scrub
from mewcode_kernel.core.providers.recording.replay import (
    DEMO_CASSETTE,
    RecordingTransport,
    ReplayProvider,
    ReplayTransport,
    make_http_client,
)
from mewcode_kernel.core.redaction import looks_like_key
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, drop_after, reply, status
from tests._clients import Clients

SECRET = "sk-test-SECRET123"
NO_WAIT = RetryPolicy(base_delay=0.0, max_delay=0.0, jitter=0.0)
ARGS = {"path": "a.txt", "content": "hello"}
TOOLS = [ToolSpec(name="write_file", description="Write a file.", input_schema={"type": "object"})]


@pytest.fixture(name="http")
async def _http() -> AsyncIterator[Clients]:
    clients = Clients()
    yield clients
    await clients.aclose()


def _request(*extra: str) -> ModelRequest:
    return ModelRequest(system="Be brief.", messages=[user("write a.txt", *extra)], tools=TOOLS)


def _follow_up(done: ResponseDone) -> ModelRequest:
    call = done.message.tool_uses[0]
    result = user(ToolResultBlock(tool_use_id=call.id, content="ok"))
    return ModelRequest(
        system="Be brief.", messages=[user("write a.txt"), done.message, result], tools=TOOLS
    )


def _live(protocol: str, server: ScriptedServer, cassette: Path, http: Clients):
    client = http(make_http_client(record_to=cassette))
    if protocol == "anthropic":
        return AnthropicProvider(
            "live", "claude-x", SECRET, base_url=server.base_url, http_client=client, retry=NO_WAIT
        )
    kind = OpenAIResponsesProvider if protocol == "openai-responses" else OpenAIProvider
    return kind(
        "live", "gpt-x", SECRET, base_url=server.openai_base_url, http_client=client, retry=NO_WAIT
    )


async def _conversation(provider) -> list:
    first = await collect(provider.stream(_request()))
    second = await collect(provider.stream(_follow_up(first[-1])))
    return first + second


SCRIPT = [
    status(529, retry_after=0),
    reply(thinking="Plan.", text="Writing.", tool_calls=[("write_file", ARGS)]),
    reply(text="Done: a.txt written."),
]


# --- record, then replay through the providers -------------------------------------


@pytest.mark.parametrize("protocol", ["anthropic", "openai", "openai-responses"])
async def test_record_then_replay_gives_identical_events(
    protocol: str, tmp_path: Path, http: Clients
) -> None:
    cassette = tmp_path / "run.cassette.json"
    async with ScriptedServer(SCRIPT) as server:
        live_events = await _conversation(_live(protocol, server, cassette, http))
        server.assert_all_used()
    assert [type(e) for e in live_events].count(RetryScheduled) == 1

    async with ReplayProvider.from_cassette(cassette, retry=NO_WAIT) as replay:
        replay_events = await _conversation(replay)
        assert replay.unused == []
    assert replay_events == live_events

    data = json.loads(cassette.read_text())
    assert data["version"] == 1 and data["protocol"] == protocol
    assert data["model"] == ("claude-x" if protocol == "anthropic" else "gpt-x")
    assert [i["response"]["status"] for i in data["interactions"]] == [529, 200, 200]


@pytest.mark.parametrize("protocol", ["anthropic", "openai", "openai-responses"])
async def test_no_secret_reaches_the_cassette(protocol: str, tmp_path: Path, http: Clients) -> None:
    cassette = tmp_path / "c.json"
    async with ScriptedServer([reply(text=f"your key is {SECRET}")]) as server:
        provider = _live(protocol, server, cassette, http)
        await collect(provider.stream(_request(f"my key is {SECRET}")))
        assert SECRET in json.dumps(server.requests)  # it did go over the wire
    text = cassette.read_text()
    assert SECRET not in text and "SECRET123" not in text
    assert "[REDACTED]" in text
    for interaction in json.loads(text)["interactions"]:
        assert set(interaction["request"]) == {"method", "path", "body"}
        assert set(interaction["response"]["headers"]) <= {"content-type", "retry-after"}


async def test_replay_provider_label_name_and_model(tmp_path: Path, http: Clients) -> None:
    cassette = tmp_path / "demo-run.cassette.json"
    async with ScriptedServer([reply(text="hi")]) as server:
        await collect(_live("anthropic", server, cassette, http).stream(_request()))
    replay = ReplayProvider.from_cassette(cassette)
    date = json.loads(cassette.read_text())["recorded_at"][:10]
    assert replay.label == f"replay of demo-run.cassette.json (offline, recorded {date})"
    assert replay.name == "replay"
    assert replay.model == "claude-x"
    assert len(replay.unused) == 1
    await collect(replay.stream(_request()))
    await replay.aclose()


# --- mismatch and drift --------------------------------------------------------------


@pytest.fixture
async def recorded(tmp_path: Path, http: Clients) -> Path:
    cassette = tmp_path / "two.cassette.json"
    async with ScriptedServer(SCRIPT[1:]) as server:
        await _conversation(_live("anthropic", server, cassette, http))
    return cassette


async def test_changed_request_is_a_loud_readable_mismatch(recorded: Path) -> None:
    replay = ReplayProvider.from_cassette(recorded)
    changed = ModelRequest(system="Be brief.", messages=[user("write b.txt")], tools=TOOLS)
    with pytest.raises(ReplayMismatch) as err:
        await collect(replay.stream(changed))
    message = str(err.value)
    assert "request #1 (POST /v1/messages) does not match interaction #0" in message
    assert "body.messages[0].content[0].text" in message
    assert "'write a.txt'" in message and "'write b.txt'" in message
    assert replay.transport.failure is not None
    # Sticky: the run cannot carry on against the recording.
    with pytest.raises(ReplayMismatch):
        await collect(replay.stream(_request()))
    await replay.aclose()  # no drift error on top of the mismatch


async def test_mismatch_is_not_retried_or_swallowed(recorded: Path) -> None:
    replay = ReplayProvider.from_cassette(recorded)  # default policy: 4 attempts
    events: list = []
    with pytest.raises(ReplayMismatch):
        async for event in replay.stream(_request("and more")):
            events.append(event)
    assert events == []  # no RetryScheduled announced
    await replay.aclose(check=False)


async def test_exhausted_cassette(recorded: Path) -> None:
    async with ReplayProvider.from_cassette(recorded) as replay:
        await _conversation(replay)
        with pytest.raises(ReplayMismatch, match="cassette exhausted"):
            await collect(replay.stream(_request()))


async def test_unused_interactions_are_drift(recorded: Path) -> None:
    replay = ReplayProvider.from_cassette(recorded)
    await collect(replay.stream(_request()))
    assert len(replay.unused) == 1
    with pytest.raises(ReplayMismatch) as err:
        await replay.aclose()
    assert "1 recorded request(s) in two.cassette.json were never made" in str(err.value)
    assert "#1: POST /v1/messages" in str(err.value)
    with pytest.raises(ReplayMismatch, match="never made"):
        async with ReplayProvider.from_cassette(recorded):
            pass


# --- transports under the bare SDK ---------------------------------------------------


async def _sdk_message(
    client: anthropic.AsyncAnthropic, text: str = "hi"
) -> anthropic.types.Message:
    messages = [{"role": "user", "content": text}]
    async with client.messages.stream(model="m", max_tokens=9, messages=messages) as stream:
        return await stream.get_final_message()


async def test_transport_round_trip_with_the_bare_sdk(tmp_path: Path, http: Clients) -> None:
    path = tmp_path / "sdk.json"
    async with ScriptedServer([reply(text="one"), reply(text="two")]) as server:
        transport = RecordingTransport(httpx2.AsyncHTTPTransport(), path)
        client = anthropic.AsyncAnthropic(
            api_key=SECRET,
            base_url=server.base_url,
            http_client=http(httpx2.AsyncClient(transport=transport)),
            max_retries=0,
        )
        first = await _sdk_message(client)
        assert len(Cassette.load(path).interactions) == 1  # saved after each exchange
        second = await _sdk_message(client, "again")
    replay = ReplayTransport(Cassette.load(path))
    offline = anthropic.AsyncAnthropic(
        api_key="other",
        base_url="http://replay.invalid",
        http_client=http(httpx2.AsyncClient(transport=replay)),
        max_retries=0,
    )
    assert await _sdk_message(offline) == first
    assert await _sdk_message(offline, "again") == second
    replay.assert_all_used()
    # The SDK wraps a transport exception; the mismatch stays reachable as its cause.
    with pytest.raises(anthropic.APIConnectionError) as err:
        await _sdk_message(offline)
    assert isinstance(err.value.__cause__, ReplayMismatch)


async def test_a_broken_stream_is_recorded_and_replayed_broken(
    tmp_path: Path, http: Clients
) -> None:
    path = tmp_path / "broken.json"
    async with ScriptedServer([drop_after(4)]) as server:
        client = http(make_http_client(record_to=path))
        live = anthropic.AsyncAnthropic(
            api_key="k", base_url=server.base_url, http_client=client, max_retries=0
        )
        with pytest.raises(httpx2.RemoteProtocolError):
            await _sdk_message(live)
    recorded = Cassette.load(path).interactions[0].response
    assert recorded.error and "RemoteProtocolError" in recorded.error
    assert recorded.body.count("event: ") == 4
    offline = anthropic.AsyncAnthropic(
        api_key="k",
        base_url="http://replay.invalid",
        http_client=http(make_http_client(replay_from=path)),
        max_retries=0,
    )
    with pytest.raises(httpx2.RemoteProtocolError):
        await _sdk_message(offline)


async def test_replayed_retry_after_is_zeroed(tmp_path: Path, http: Clients) -> None:
    path = tmp_path / "limited.json"
    async with ScriptedServer([status(429, retry_after=30)]) as server:
        client = http(make_http_client(record_to=path))
        live = anthropic.AsyncAnthropic(
            api_key="k", base_url=server.base_url, http_client=client, max_retries=0
        )
        with pytest.raises(anthropic.RateLimitError):
            await _sdk_message(live)
    assert Cassette.load(path).interactions[0].response.headers["retry-after"] == "30"
    offline = anthropic.AsyncAnthropic(
        api_key="k",
        base_url="http://replay.invalid",
        http_client=http(make_http_client(replay_from=path)),
        max_retries=0,
    )
    with pytest.raises(anthropic.RateLimitError) as err:
        await _sdk_message(offline)
    assert err.value.response.headers["retry-after"] == "0"


# --- the cassette itself ---------------------------------------------------------------


def test_json_diff_is_canonical_and_readable() -> None:
    recorded = {"a": 1, "b": [1, 2], "c": {"d": "x" * 200 + "tail"}}
    assert json_diff(recorded, {"c": {"d": "x" * 200 + "tail"}, "b": [1, 2], "a": 1.0}) == []
    diff = json_diff(recorded, {"a": True, "b": [1], "c": {"d": "x" * 200 + "TAIL"}, "e": None})
    assert "body.a: recorded 1 != actual true" in diff
    assert any(d.startswith("body.b: recorded 2 items, actual 1") for d in diff)
    assert any(d.startswith("body.c.d: strings differ at char 200") for d in diff)
    assert "body.e: not recorded, actual null" in diff
    assert all(len(d) < 300 for d in diff)


def test_scrub_catches_key_shapes_and_exact_secrets() -> None:
    body = {
        "api_key": "plain-value",
        "max_tokens": 5,
        "text": "use sk-ant-api03-abcdefghijkl and Bearer abcdefghijklmnop and AKIAABCDEFGHIJKLMNOP",
        "n": ["my-own-token-value"],
    }
    out = scrub(body, ("my-own-token-value",))
    assert out["api_key"] == "[REDACTED]" and out["max_tokens"] == 5
    assert "abcdefghijkl" not in out["text"] and "AKIA" not in out["text"]
    assert out["n"] == ["[REDACTED]"]


def test_cassette_load_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such cassette"):
        Cassette.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 2, "protocol": "anthropic", "interactions": []}))
    with pytest.raises(ConfigError, match="unsupported version"):
        Cassette.load(bad)
    bad.write_text(json.dumps({"version": 1, "protocol": "anthropic", "interactions": [{}]}))
    with pytest.raises(ConfigError, match=r"interactions\[0\]"):
        Cassette.load(bad)


async def test_make_http_client_modes(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exclusive"):
        make_http_client(record_to=tmp_path / "a", replay_from=tmp_path / "b")
    async with make_http_client() as client:
        assert isinstance(client, httpx2.AsyncClient)


def test_demo_cassette_is_package_data() -> None:
    # that a built package holds it: tests/test_package_data.py
    assert DEMO_CASSETTE.name == "demo.cassette.json"
    assert DEMO_CASSETTE.parent == Path(__file__).resolve().parents[1] / "mewcode_kernel" / "data"
    assert DEMO_CASSETTE.is_file(), f"the bundled demo cassette is missing: {DEMO_CASSETTE}"
    cassette = Cassette.load(DEMO_CASSETTE)
    assert cassette.interactions
    # no key shape: "sk-" alone also starts the "sk-notification" of <task-notification>
    assert not looks_like_key(DEMO_CASSETTE.read_text())


async def test_reorder_is_opt_in(tmp_path: Path, http: Clients) -> None:
    path = tmp_path / "pair.json"
    async with ScriptedServer([reply(text="one"), reply(text="two")]) as server:
        live = anthropic.AsyncAnthropic(
            api_key="k",
            base_url=server.base_url,
            http_client=http(make_http_client(record_to=path)),
            max_retries=0,
        )
        await _sdk_message(live, "first")
        await _sdk_message(live, "second")

    def offline(transport: ReplayTransport) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key="k",
            base_url="http://replay.invalid",
            http_client=http(httpx2.AsyncClient(transport=transport)),
            max_retries=0,
        )

    strict = offline(ReplayTransport(Cassette.load(path)))
    with pytest.raises(anthropic.APIConnectionError) as err:
        await _sdk_message(strict, "second")
    assert "strings differ" in str(err.value.__cause__)
    tolerant = ReplayTransport(Cassette.load(path), allow_reorder=True)
    client = offline(tolerant)
    assert (await _sdk_message(client, "second")).content[0].text == "two"
    assert (await _sdk_message(client, "first")).content[0].text == "one"
    tolerant.assert_all_used()


async def test_replay_provider_is_a_provider(tmp_path: Path) -> None:
    from mewcode_kernel.core.providers.base import Provider

    path = tmp_path / "empty.json"
    Cassette(protocol="openai", model="gpt-x").save(path)
    replay = ReplayProvider.from_cassette(path, name="replay:demo")
    assert isinstance(replay, Provider)
    assert (replay.name, replay.model) == ("replay:demo", "gpt-x")
    await replay.aclose()


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
@pytest.mark.parametrize("attempts", [1, 4])
async def test_mismatch_surfaces_for_both_protocols(
    protocol: str, attempts: int, tmp_path: Path, http: Clients
) -> None:
    cassette = tmp_path / f"{protocol}.json"
    async with ScriptedServer([reply(text="hi")]) as server:
        await collect(_live(protocol, server, cassette, http).stream(_request()))
    policy = RetryPolicy(max_attempts=attempts, base_delay=0.0, max_delay=0.0, jitter=0.0)
    replay = ReplayProvider.from_cassette(cassette, retry=policy)
    with pytest.raises(ReplayMismatch, match=r"does not match interaction #0") as err:
        await collect(replay.stream(_request("extra")))
    assert "body.messages" in str(err.value)
    await replay.aclose(check=False)


def test_replay_notice_says_why_only_for_the_default_offline_provider(tmp_path: Path) -> None:
    from mewcode_kernel.core import open_session
    from mewcode_kernel.core.providers.recording.replay import DEMO_CASSETTE

    offline = open_session(tmp_path, home=tmp_path / "home", env={})
    chosen = open_session(
        tmp_path, home=tmp_path / "home", env={"ANTHROPIC_API_KEY": "k"}, replay_from=DEMO_CASSETTE
    )
    assert offline._pending_notices[-1].message.endswith(": no API key is set.")
    assert chosen._pending_notices[-1].message == f"Using {chosen.provider_label}."
    offline.provider.close(check=False)
    chosen.provider.close(check=False)
