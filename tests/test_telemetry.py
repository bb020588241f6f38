# ruff: noqa: F811  (the otlp fixture is imported from tests._telemetry)
"""OpenTelemetry export through the plain-Python API: a session on a local
model server (the real Anthropic SDK), its telemetry sent over OTLP/HTTP to
a receiver this test starts. The spans arrive with the GenAI attributes and
their parent links (turn → model requests, tool calls → hooks, an ``Agent``
call → its subagent's turn; a background subagent in a trace of its own,
linked to the call); metrics and events arrive too."""

from __future__ import annotations

from pathlib import Path

import pytest

from mewcode_kernel.core import open_session
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply, stall_after, status, usage
from tests._mcp import fixture_entry, servers_yaml
from tests._otlp import OtlpReceiver
from tests._telemetry import (
    Router,
    by_name,
    children,
    forms_of,
    one,
    otlp,  # noqa: F401  (a fixture)
    project_on,
    received,
)

pytestmark = pytest.mark.usefixtures("trusted_projects")

KEY = "sk-local-secret-4f1c2a9e7b3d"
PROMPT = "Please tidy the flamingo ledger in stats.py"
SOURCE = "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0\n"
HOOKS = (
    "hooks:\n"
    "  - name: check-call\n    event: PreToolUse\n    action: {type: prompt, text: checked}\n"
    "  - name: after-call\n    event: PostToolUse\n    action: {type: prompt, text: noted}\n"
)


async def allow(request: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(allow=True)


def home_with_hooks(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".mewcode").mkdir(parents=True)
    (home / ".mewcode" / "hooks.yaml").write_text(HOOKS)
    return home


async def test_a_turn_through_the_plain_api_arrives_as_spans_metrics_and_events(
    tmp_path: Path, otlp: OtlpReceiver
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "stats.py").write_text(SOURCE)
    script = [
        reply(text="Let me look.", tool_calls=[("read_file", {"path": "stats.py"})]),
        status(529, retry_after=0),  # overloaded once: retried
        reply(
            tool_calls=[
                (
                    "edit_file",
                    {
                        "path": "stats.py",
                        "old_string": "def mean(xs):\n",
                        "new_string": 'def mean(xs):\n    """The mean."""\n',
                    },
                )
            ]
        ),
        reply(text="Added a docstring.", usage=usage(4, 6, 2, 5)),  # a cached prompt
    ]
    with ScriptedServer(script) as server:
        project_on(root, server.base_url)
        session = open_session(
            root, approval_handler=allow, home=home_with_hooks(tmp_path), env={"LOCAL_KEY": KEY}
        )
        async with session:
            events = await collect(session.run(PROMPT))
            session_id = session.session_id
    assert events[-1].reason == "end_turn"
    spans = received(otlp)

    turn = one(spans, "mewcode.turn")
    assert turn.parent == ""
    assert turn.attributes["session.id"] == session_id
    assert turn.attributes["mewcode.agent.name"] == "main"
    assert turn.attributes["gen_ai.provider.name"] == "anthropic"
    assert turn.attributes["mewcode.turn.reason"] == "end_turn"
    assert turn.attributes["mewcode.turn.model_requests"] == 3
    assert turn.attributes["mewcode.prompt.length"] == len(PROMPT)

    chats = by_name(spans, "chat test-model")
    assert len(chats) == 3
    cached = chats.pop().attributes  # the last request read most of its prompt from the cache
    assert (cached["gen_ai.usage.input_tokens"], cached["gen_ai.usage.output_tokens"]) == (12, 5)
    assert cached["gen_ai.usage.cache_read.input_tokens"] == 6
    assert cached["gen_ai.usage.cache_creation.input_tokens"] == 2
    for chat in chats:
        assert chat.parent == turn.span_id and chat.trace_id == turn.trace_id
        assert "gen_ai.usage.cache_read.input_tokens" not in chat.attributes
        a = chat.attributes
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.provider.name"] == "anthropic"
        assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == "test-model"
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (10, 5)
        assert a["mewcode.time_to_first_token_ms"] >= 0
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in chats] == [
        ["tool_use"],
        ["tool_use"],
    ]
    assert cached["gen_ai.response.finish_reasons"] == ["end_turn"]
    assert [e for c in chats for e in c.events] == [("retry", {"attempt": 2, "status": "529"})]

    read = one(spans, "mewcode.tool", **{"gen_ai.tool.name": "read_file"})
    edit = one(spans, "mewcode.tool", **{"gen_ai.tool.name": "edit_file"})
    for call in (read, edit):
        assert call.parent == turn.span_id
        assert call.attributes["gen_ai.operation.name"] == "execute_tool"
        assert call.attributes["mewcode.tool.decision"] == "allow"
        assert call.attributes["mewcode.tool.outcome"] == "ok"
    assert read.attributes["mewcode.tool.decision.source"] == "mode"
    assert edit.attributes["mewcode.tool.decision.source"] == "person"
    assert edit.attributes["mewcode.tool.wait_ms"] >= 0
    assert (edit.attributes["mewcode.lines.added"], edit.attributes["mewcode.lines.removed"]) == (
        1,
        0,
    )
    for call in (read, edit):
        hooks = {h.attributes["mewcode.hook.name"]: h for h in children(spans, call)}
        assert set(hooks) == {"check-call", "after-call"}
        assert hooks["check-call"].attributes["mewcode.hook.event"] == "PreToolUse"
        assert hooks["after-call"].attributes["mewcode.hook.event"] == "PostToolUse"
        assert call.start <= hooks["check-call"].start and hooks["after-call"].end <= call.end

    names = [e["event_name"] for e in otlp.events()]
    for name in ("user_prompt", "model_request", "model_error", "tool_decision", "tool_result"):
        assert f"mewcode.{name}" in names, names
    assert names.count("mewcode.model_request") == 3
    assert {e["trace_id"] for e in otlp.events()} == {turn.trace_id}
    error = next(e for e in otlp.events() if e["event_name"] == "mewcode.model_error")
    assert (error["status"], error["retried"]) == ("529", True)

    metrics = otlp.metrics()
    tokens = {(a["type"], a["model"]): v for a, v in metrics["mewcode.token.usage"]}
    assert tokens[("input", "test-model")] == 24 and tokens[("output", "test-model")] == 15
    assert tokens[("cache_read", "test-model")] == 6
    assert tokens[("cache_creation", "test-model")] == 2
    decisions = {(a["tool"], a["source"]) for a, _ in metrics["mewcode.tool.decisions"]}
    assert {("read_file", "mode"), ("edit_file", "person")} <= decisions
    assert ({"type": "added"}, 1) in metrics["mewcode.lines_of_code.count"]
    assert ({"reason": "end_turn", "agent": "main"}, 1) in metrics["mewcode.turn.count"]
    errors = metrics["mewcode.model_request.errors"]
    assert ({"model": "test-model", "status": "529", "retried": True}, 1) in errors
    assert sum(v for _, v in metrics["gen_ai.client.operation.duration"]) >= 3
    assert "mewcode.session.active" in metrics

    raw = otlp.raw
    for secret in (PROMPT, "flamingo", KEY, "The mean.", "Added a docstring"):
        assert not any(form in raw for form in forms_of(secret)), secret


async def test_a_subagents_spans_sit_under_the_agent_call_that_started_it(
    tmp_path: Path, otlp: OtlpReceiver
) -> None:
    router = Router()
    router.parent.extend(
        [
            reply(
                tool_calls=[
                    (
                        "Agent",
                        {
                            "description": "look",
                            "prompt": "List the files",
                            "subagent_type": "general-purpose",
                        },
                    )
                ]
            ),
            reply(
                tool_calls=[
                    (
                        "Agent",
                        {
                            "description": "count",
                            "prompt": "Count the files",
                            "subagent_type": "Explore",
                            "run_in_background": True,
                        },
                    )
                ]
            ),
            reply(text="Both asked."),
        ]
    )
    router.child.extend(
        [
            reply(tool_calls=[("glob", {"pattern": "*.py"})]),
            reply(text="stats.py"),
            reply(text="one file"),
        ]
    )
    root = tmp_path / "project"
    root.mkdir()
    (root / "stats.py").write_text(SOURCE)
    with ScriptedServer([router] * 10) as server:
        project_on(root, server.base_url)
        session = open_session(root, home=tmp_path / "home", env={"LOCAL_KEY": KEY})
        async with session:
            await collect(session.run("Who is there?"))
            await session.tasks.wait(timeout=60)
    spans = received(otlp)

    main = one(spans, "mewcode.turn", **{"mewcode.agent.name": "main"})
    agent_call = one(spans, "mewcode.tool", **{"mewcode.subagent.type": "general-purpose"})
    assert agent_call.parent == main.span_id
    child = one(spans, "mewcode.turn", **{"mewcode.agent.name": "general-purpose"})
    assert child.parent == agent_call.span_id and child.trace_id == main.trace_id
    assert child.attributes["mewcode.subagent"] is True
    inside = children(spans, child)
    assert sorted(s.name for s in inside) == ["chat test-model", "chat test-model", "mewcode.tool"]
    glob = next(s for s in inside if s.name == "mewcode.tool")
    assert glob.attributes["gen_ai.tool.name"] == "glob"

    background = one(spans, "mewcode.turn", **{"mewcode.agent.name": "Explore"})
    launcher = next(
        s
        for s in by_name(spans, "mewcode.tool")
        if s.attributes["gen_ai.tool.name"] == "Agent" and s is not agent_call
    )
    assert background.trace_id != main.trace_id and background.parent == ""
    assert background.links == [(launcher.trace_id, launcher.span_id)]
    assert background.attributes["mewcode.task.id"].startswith("task_")
    [routed] = children(spans, background)  # Explore asks for its own model (haiku)
    assert routed.name == f"chat {routed.attributes['gen_ai.request.model']}" != "chat test-model"
    raw = otlp.raw
    for text in ("List the files", "Count the files", "one file", "stats.py"):
        assert not any(form in raw for form in forms_of(text)), text


async def test_traceparent_makes_the_turn_a_child_of_the_callers_trace(
    tmp_path: Path, otlp: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    monkeypatch.setenv("TRACEPARENT", f"00-{trace_id}-{span_id}-01")
    with ScriptedServer([reply(text="hi")]) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            await collect(s.run("Hello"))
    turn = one(received(otlp), "mewcode.turn")
    assert (turn.trace_id, turn.parent) == (trace_id, span_id)


async def test_a_failed_model_request_is_an_error_span_event_and_metric(
    tmp_path: Path, otlp: OtlpReceiver
) -> None:
    with ScriptedServer([status(400, message=f"bad request, your key {KEY} is wrong")]) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            events = await collect(s.run("Hello"))
    assert events[-1].reason == "error" and events[-1].status == 400
    spans = received(otlp)
    chat = one(spans, "chat test-model")
    assert chat.status == 2 and chat.attributes["error.type"] == "400"
    turn = one(spans, "mewcode.turn")
    assert turn.status == 2 and turn.attributes["mewcode.turn.reason"] == "error"
    error = next(e for e in otlp.events() if e["event_name"] == "mewcode.model_error")
    assert (error["status"], error["retried"], error["body"]) == ("400", False, None)
    assert ({"model": "test-model", "status": "400", "retried": False}, 1) in otlp.metrics()[
        "mewcode.model_request.errors"
    ]
    assert KEY.encode() not in otlp.raw and b"bad request" not in otlp.raw


async def test_mode_changes_and_compactions_are_told(tmp_path: Path, otlp: OtlpReceiver) -> None:
    script = [reply(text="one"), reply(text="A summary of it all."), reply(text="two")]
    with ScriptedServer(script) as server:
        project_on(tmp_path, server.base_url)
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            await collect(s.run("First"))
            s.mode = "plan"
            await collect(s.compact())
            await collect(s.run("Second"))
    spans = received(otlp)
    command = one(spans, "mewcode.compact")
    compaction = one(spans, "mewcode.compaction")
    assert compaction.parent == command.span_id
    assert compaction.attributes["mewcode.compaction.trigger"] == "manual"
    assert compaction.attributes["mewcode.compaction.ok"] is True
    events = otlp.events()
    changed = [e for e in events if e["event_name"] == "mewcode.permission_mode_changed"]
    assert [(e["from"], e["to"]) for e in changed] == [("default", "plan")]
    assert any(e["event_name"] == "mewcode.compaction" for e in events)
    assert b"A summary of it all" not in otlp.raw


async def test_a_subagent_moved_to_the_background_keeps_its_span(
    tmp_path: Path, otlp: OtlpReceiver
) -> None:
    router = Router()
    stalled, stall = stall_after(2, reply(text="found it"))
    router.parent.extend(
        [
            reply(
                tool_calls=[
                    ("Agent", {"description": "slow", "prompt": "p", "subagent_type": "Plan"})
                ]
            ),
            reply(text="It went on in the background."),
        ]
    )
    router.child.append(stalled)
    with ScriptedServer([router] * 5) as server:
        project_on(tmp_path, server.base_url)
        with (tmp_path / ".mewcode.yaml").open("a") as f:
            f.write("subagents:\n  foreground_timeout: 0.5\n")
        async with open_session(tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}) as s:
            await collect(s.run("Plan slowly"))  # the child outlives its foreground time
            stall.release()
            await s.tasks.wait(timeout=60)
    spans = received(otlp)
    call = one(spans, "mewcode.tool", **{"mewcode.subagent.type": "Plan"})
    child = one(spans, "mewcode.turn", **{"mewcode.agent.name": "Plan"})
    assert child.parent == call.span_id
    assert child.attributes["mewcode.turn.reason"] == "end_turn"
    assert [s.name.split()[0] for s in children(spans, child)] == ["chat"]


async def test_an_mcp_call_is_a_client_span_inside_its_tool_span(
    tmp_path: Path, otlp: OtlpReceiver
) -> None:
    script = [reply(tool_calls=[("mcp__fx__echo", {"text": "hello"})]), reply(text="ok")]
    with ScriptedServer(script) as server:
        project_on(tmp_path, server.base_url)
        with (tmp_path / ".mewcode.yaml").open("a") as f:
            f.write(servers_yaml({"fx": fixture_entry()}, allow=["mcp__fx__*"]))
        async with open_session(
            tmp_path, home=tmp_path / "home", env={"LOCAL_KEY": KEY}, project_trusted=lambda: True
        ) as s:
            await collect(s.run("Echo"))
    spans = received(otlp)
    call = one(spans, "mewcode.tool", **{"gen_ai.tool.name": "mcp__fx__echo"})
    assert call.attributes["mewcode.tool.decision.source"] == "rule"
    [mcp] = children(spans, call)
    assert mcp.name == "tools/call echo"
    assert mcp.attributes == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "mewcode.mcp.server": "fx",
    }
    assert call.start <= mcp.start <= mcp.end <= call.end
