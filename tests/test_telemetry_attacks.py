# ruff: noqa: F811  (the otlp fixture is imported from tests._telemetry)
"""Getting secrets, prompts and answers out through telemetry: every byte a
collector receives is searched.

A hostile model puts the prompt and a key into every name it controls (a
tool it makes up, a subagent type, a model to route to, an ``Agent``
call's description); a hostile server into the response's model name and
stop reason; tool results, answers and errors carry the key plain and
encoded. By default none of it arrives. Opted in, texts arrive redacted:
the session's secrets in every form, credential-shaped text masked, each
value bounded. Also: the collector's header (its key) never reaches the
model; a project cannot turn telemetry on; the caller's ``TRACEPARENT`` in
any malformed spelling is ignored; the resource drops secret attributes;
the global OpenTelemetry providers are never MewCode's; a broken observer
or an unreachable collector never breaks a turn; concurrent sessions keep
their traces apart.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from pathlib import Path

import pytest
from opentelemetry import trace

from mewcode_kernel.core import open_session
from mewcode_kernel.core.events import Notice
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.telemetry import NullTelemetry, runs
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply, status
from tests._otlp import OtlpReceiver
from tests._telemetry import (
    by_name,
    forms_of,
    one,
    otlp,  # noqa: F401  (a fixture)
    project_on,
    received,
)

pytestmark = pytest.mark.usefixtures("trusted_projects")

KEY = "sk-local-9c1e5b7a3f2d4e6a8b0c"  # the provider key, known by value
TOKEN = "ghp_" + "Q" * 36  # credential-shaped, known to nobody
PHRASE = "marmalade-umbrella-octopus"  # prompt text, one word a name could hold
PROMPT = f"Summarise the {PHRASE} report, key {KEY} token {TOKEN}"
ENCODED = base64.b64encode(KEY.encode()).decode()


async def allow(request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(allow=True)


def hostile_script() -> list:
    leak = f"{PHRASE} {KEY} {TOKEN}"
    return [
        reply(
            text=f"Answer with {leak}",
            tool_calls=[
                (PHRASE, {"x": leak}),  # a tool the model made up, named as the prompt
                (f"{PHRASE}_{KEY}", {}),
                ("read_file", {"path": "secret.txt"}),
                ("bash", {"command": f"echo {leak} {ENCODED}"}),
                (
                    "Agent",
                    {
                        "description": leak,
                        "prompt": leak,
                        "subagent_type": PHRASE,  # no such role
                        "model": PHRASE,
                    },
                ),
            ],
            model=PHRASE,  # a hostile server names the model as it likes
        ),
        reply(text=f"Done: {leak}", stop_reason=PHRASE),
    ]


async def run_hostile(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text(f"{PHRASE}\n{KEY}\n{TOKEN}\n{ENCODED}\n")
    with ScriptedServer(hostile_script()) as server:
        project_on(tmp_path, server.base_url)
        session = open_session(
            tmp_path, approval_handler=allow, home=tmp_path / "home", env={"LOCAL_KEY": KEY}
        )
        async with session:
            await collect(session.run(PROMPT))


def leaked(raw: bytes, *texts: str) -> list[str]:
    return [t for t in texts if any(form in raw for form in forms_of(t))]


async def test_by_default_nothing_a_hostile_model_or_server_names_is_exported(
    tmp_path: Path, otlp: OtlpReceiver
) -> None:
    await run_hostile(tmp_path)
    spans = received(otlp)
    assert by_name(spans, "mewcode.turn")
    assert leaked(otlp.raw, PHRASE, KEY, TOKEN, ENCODED, "marmalade", "Summarise") == []
    tools = [s.attributes["gen_ai.tool.name"] for s in by_name(spans, "mewcode.tool")]
    assert sorted(tools) == ["Agent", "bash", "read_file", "unknown", "unknown"]
    chats = by_name(spans, "chat test-model")
    assert chats[0].attributes["gen_ai.response.model"] == "other"
    assert chats[-1].attributes["gen_ai.response.finish_reasons"] == ["other"]
    agent = one(spans, "mewcode.tool", **{"gen_ai.tool.name": "Agent"})
    assert agent.attributes.get("mewcode.subagent.type", "subagent") == "subagent"


async def test_opted_in_texts_arrive_redacted_masked_and_bounded(
    tmp_path: Path, otlp: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_LOG_USER_PROMPTS", "1")
    monkeypatch.setenv("MEWCODE_OTEL_LOG_TOOL_DETAILS", "1")
    (tmp_path / "big.txt").write_text("x" * 300_000)
    await run_hostile(tmp_path)
    spans = received(otlp)
    raw = otlp.raw
    assert PHRASE.encode() in raw  # opted in: the prompt and answers are there
    assert leaked(raw, KEY, TOKEN, ENCODED) == []  # but never a secret, in any form
    turn = one(spans, "mewcode.turn")
    assert "[REDACTED" in turn.attributes["mewcode.prompt"]
    for span in spans:
        for value in span.attributes.values():
            assert not isinstance(value, str) or len(value) <= 4096 + 64


async def test_a_huge_prompt_and_answer_are_cut(
    tmp_path: Path, otlp: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_LOG_USER_PROMPTS", "1")
    huge = "all work and no play " * 15_000
    with ScriptedServer([reply(text=huge)]) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            await collect(s.run(huge))
    spans = received(otlp)
    prompt = one(spans, "mewcode.turn").attributes["mewcode.prompt"]
    answer = one(spans, "chat test-model").attributes["mewcode.response.text"]
    for text in (prompt, answer):
        assert len(text) < 4200 and text.endswith(f"({len(huge):,} characters in all)")
    assert len(otlp.raw) < 60_000  # the prompt event's body is cut the same way


async def test_the_collectors_header_never_reaches_the_model(
    tmp_path: Path, otlp: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    header = "hc-team-7f3a9c2e5b1d"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"x-honeycomb-team={header}")
    (tmp_path / "leak.txt").write_text(f"found {header} and {base64.b64encode(header.encode())}\n")
    script = [reply(tool_calls=[("read_file", {"path": "leak.txt"})]), reply(text="ok")]
    with ScriptedServer(script) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            await collect(s.run("Read it"))
        bodies = str(server.requests)
    received(otlp)
    assert header not in bodies and "REDACTED" in bodies
    assert any(h.get("x-honeycomb-team") == header for h in otlp.headers)  # the collector's
    assert header.encode() not in otlp.raw


async def test_a_project_cannot_turn_telemetry_on(
    tmp_path: Path, otlp: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEWCODE_ENABLE_TELEMETRY")  # the collector is there; nothing says "on"
    with ScriptedServer([reply(text="hi")]) as server:
        project_on(tmp_path, server.base_url)
        with (tmp_path / ".mewcode.yaml").open("a") as f:
            f.write("telemetry:\n  enabled: true\n  log_user_prompts: true\n")
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            assert isinstance(s.telemetry, NullTelemetry)
            events = await collect(s.run(PROMPT))
    notices = " ".join(e.message for e in events if isinstance(e, Notice))
    assert "telemetry is read from ~/.mewcode/config.yaml only" in notices
    assert received(otlp) == [] and otlp.raw == b""


async def test_a_project_cannot_add_prompts_to_the_users_telemetry(
    tmp_path: Path, otlp: OtlpReceiver
) -> None:
    home = tmp_path / "home"
    (home / ".mewcode").mkdir(parents=True)
    (home / ".mewcode" / "config.yaml").write_text("telemetry:\n  enabled: true\n")
    with ScriptedServer([reply(text="hi")]) as server:
        project_on(tmp_path, server.base_url)
        with (tmp_path / ".mewcode.yaml").open("a") as f:
            f.write("telemetry:\n  log_user_prompts: true\n  log_tool_details: true\n")
        async with open_session(tmp_path, home=home, env={"LOCAL_KEY": KEY}) as s:
            await collect(s.run(PROMPT))
    assert by_name(received(otlp), "mewcode.turn")
    assert leaked(otlp.raw, PHRASE) == []


@pytest.mark.parametrize(
    "traceparent",
    [
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # an all-zero trace
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # an all-zero span
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # a forbidden version
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",  # upper case
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",  # no flags
        "00-xyz92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # not hex
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-" + "a" * 200,  # too long
        "\x01\n; drop",
    ],
)
async def test_a_malformed_traceparent_starts_a_trace_of_its_own(
    tmp_path: Path, otlp: OtlpReceiver, monkeypatch: pytest.MonkeyPatch, traceparent: str
) -> None:
    monkeypatch.setenv("TRACEPARENT", traceparent)
    with ScriptedServer([reply(text="hi")]) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            events = await collect(s.run("Hello"))
    assert events[-1].reason == "end_turn"
    turn = one(received(otlp), "mewcode.turn")
    assert turn.parent == "" and turn.trace_id not in traceparent.lower()
    assert any("TRACEPARENT" in e.message for e in events if isinstance(e, Notice))


async def test_the_resource_drops_secret_attributes(
    tmp_path: Path, otlp: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "OTEL_RESOURCE_ATTRIBUTES",
        f"deployment.environment=prod,api.token=tok-77aa88bb99cc,owner.note={TOKEN},"
        f"team.password=hunter2-hunter2",
    )
    with ScriptedServer([reply(text="hi")]) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            await collect(s.run("Hello"))
    resource = one(received(otlp), "mewcode.turn").resource
    assert resource["deployment.environment"] == "prod"
    assert "api.token" not in resource and "team.password" not in resource
    assert TOKEN not in resource["owner.note"]
    assert leaked(otlp.raw, TOKEN, "tok-77aa88bb99cc", "hunter2-hunter2") == []


async def test_the_global_providers_are_never_mewcodes(tmp_path: Path, otlp: OtlpReceiver) -> None:
    """A library tracing through the global API (the Anthropic and MCP SDKs,
    with request content when asked) exports nothing through MewCode."""
    with ScriptedServer([reply(text="hi")]) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            await collect(s.run("Hello"))
            theirs = trace.get_tracer("someone.else").start_span("their span")
            theirs.end()
    assert type(trace.get_tracer_provider()).__name__ == "ProxyTracerProvider"
    names = {s.name for s in received(otlp)}
    assert names == {"mewcode.turn", "chat test-model"}


async def test_a_broken_observer_never_breaks_a_turn(
    tmp_path: Path,
    otlp: OtlpReceiver,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(self: runs.Run, event: object) -> None:
        raise RuntimeError("observer bug")

    monkeypatch.setitem(runs._HANDLERS, "assistant_message", broken)
    with ScriptedServer([reply(text="hi")]) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            with caplog.at_level(logging.WARNING):
                events = await collect(s.run("Hello"))
                spans = received(otlp)  # what the worker built, after the failure too
    assert events[-1].reason == "end_turn" and events[-1].text == "hi"
    assert "telemetry: an event failed; the session goes on" in caplog.text
    assert one(spans, "mewcode.turn")  # the turn still ends its span


async def test_an_unreachable_collector_never_breaks_a_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mewcode_kernel.core import telemetry
    from mewcode_kernel.core.telemetry import pipeline

    monkeypatch.setenv("MEWCODE_ENABLE_TELEMETRY", "1")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    try:
        with ScriptedServer([reply(text="hi"), reply(text="again")]) as server:
            project_on(tmp_path, server.base_url)
            async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
                first = await collect(s.run("Hello"))
                telemetry.flush(timeout=5)
                second = await collect(s.run("Again"))
        assert (first[-1].text, second[-1].text) == ("hi", "again")
    finally:
        pipeline.shutdown_all()


async def test_concurrent_sessions_keep_their_traces_apart(
    tmp_path: Path, otlp: OtlpReceiver
) -> None:
    roots = [tmp_path / "a", tmp_path / "b"]
    servers = [ScriptedServer([reply(text=f"answer {i}")]) for i in range(2)]
    ids = []
    with servers[0], servers[1]:
        sessions = []
        for root, server in zip(roots, servers, strict=True):
            root.mkdir()
            project_on(root, server.base_url)
            sessions.append(open_session(root, home=tmp_path / "home", env={"LOCAL_KEY": KEY}))
        for s in sessions:
            await s.__aenter__()
        try:
            await asyncio.gather(*(collect(s.run("Hello")) for s in sessions))
            ids = [s.session_id for s in sessions]
        finally:
            for s in sessions:
                await s.aclose()
    spans = received(otlp)
    for session_id in ids:
        turn = one(spans, "mewcode.turn", **{"session.id": session_id})
        chats = [s for s in by_name(spans, "chat test-model") if s.parent == turn.span_id]
        assert len(chats) == 1 and chats[0].trace_id == turn.trace_id
    assert len({s.trace_id for s in by_name(spans, "mewcode.turn")}) == 2


async def test_a_failed_request_never_exports_the_servers_error_text(
    tmp_path: Path, otlp: OtlpReceiver
) -> None:
    leak = f"{PHRASE} {KEY} {TOKEN}"
    script = [status(529, message=leak, retry_after=0), status(400, message=leak)]
    with ScriptedServer(script) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            await collect(s.run("Hello"))
    received(otlp)
    assert leaked(otlp.raw, PHRASE, KEY, TOKEN) == []
