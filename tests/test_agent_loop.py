"""The agent loop against the scripted model: tool rounds, batching, errors,
cancellation, usage and the permission seam."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mewcode_kernel.core.agent import Agent
from mewcode_kernel.core.agent.loop import headless_policy
from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.errors import ProviderError, ToolError
from mewcode_kernel.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    Notice,
    PermissionDecided,
    ResponseDone,
    RetryScheduled,
    TextDelta,
    ToolFinished,
    TurnDone,
)
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.tools import RunContext, ToolRegistry, tool
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing import ScriptedModel, ScriptError, collect, reply, tool_call


@tool(read_only=True, kind="read", path_args=("path",))
async def peek(ctx: RunContext, path: str) -> str:
    """Read a file."""
    return (ctx.root / path).read_text()


@tool(read_only=False, kind="edit", path_args=("path",))
async def put(ctx: RunContext, path: str, content: str) -> str:
    """Write a file."""
    (ctx.root / path).write_text(content)
    return f"wrote {path}"


@tool(read_only=True, kind="read")
async def explode(ctx: RunContext) -> str:
    """Always fails."""
    raise RuntimeError("kaboom")


@tool(read_only=True, kind="read")
async def refuse(ctx: RunContext) -> str:
    """Always refuses."""
    raise ToolError("no such thing; try another path")


def make_agent(tmp_path: Path, model: ScriptedModel, *extra, **kw) -> Agent:
    tools = ToolRegistry([peek, put, explode, refuse, *extra])
    return Agent.of(provider=model, tools=tools, ctx=RunContext(root=tmp_path), **kw)


async def allow_all(req: ApprovalRequest) -> ApprovalAnswer:
    return ApprovalAnswer(allow=True)


async def test_multi_step_task_feeds_results_back(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    model = ScriptedModel(
        [
            reply("Let me look.", tool_call("peek", {"path": "a.txt"}, id="t1")),
            reply(tool_call("put", {"path": "b.txt", "content": "beta"}, id="t2")),
            reply("Copied it."),
        ]
    )
    agent = make_agent(tmp_path, model, approval_handler=allow_all)
    conv = Conversation()
    events = await collect(agent.run(conv, "copy a to b"))

    assert (tmp_path / "b.txt").read_text() == "beta"
    model.assert_all_used()
    # What the model received on its second request: the call and its result.
    second = model.requests[1].messages
    assert second[-1].tool_results[0].content == "alpha"
    assert second[-1].tool_results[0].tool_use_id == "t1"
    assert [t.name for t in model.requests[0].tools] == ["peek", "put", "explode", "refuse"]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.reason == "end_turn"
    assert done.text == "Copied it."
    assert done.model_turns == 3
    assert [m.role for m in conv.messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Let me look.Copied it."


async def test_usage_summed_per_turn_and_session(tmp_path: Path) -> None:
    u = Usage(input_tokens=100, output_tokens=7, cache_read_tokens=50, cache_creation_tokens=3)
    model = ScriptedModel(
        [
            reply(tool_call("peek", {"path": "x"}), usage=u),
            reply("ok", usage=u),
            reply("again", usage=u),
        ]
    )
    (tmp_path / "x").write_text("")
    agent = make_agent(tmp_path, model)
    conv = Conversation()
    first = (await collect(agent.run(conv, "one")))[-1]
    second = (await collect(agent.run(conv, "two")))[-1]
    assert first.usage == u + u
    assert second.usage == u
    assert second.session_usage == u + u + u
    assert agent.state.usage.cache_read_tokens == 150


async def test_max_turns_stops_the_loop(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("x")
    model = ScriptedModel([reply(tool_call("peek", {"path": "x"})) for _ in range(3)])
    agent = make_agent(tmp_path, model, max_turns=3)
    conv = Conversation()
    events = await collect(agent.run(conv, "loop forever"))
    assert events[-1].reason == "max_turns"
    assert any(isinstance(e, Notice) and "max_turns" in e.message for e in events)
    assert len(model.requests) == 3
    # The history ends with answered calls: valid to continue.
    assert conv.messages[-1].tool_results


async def test_unknown_tool_gets_error_and_repeated_unknown_turns_stop(tmp_path: Path) -> None:
    model = ScriptedModel([reply(tool_call("nope", {})) for _ in range(3)])
    agent = make_agent(tmp_path, model, max_turns=10)
    conv = Conversation()
    events = await collect(agent.run(conv, "go"))
    assert events[-1].reason == "unknown_tools"
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "Unknown tool 'nope'" in result.content and "peek" in result.content
    assert len(model.requests) == 3


async def test_tool_exceptions_become_error_results(tmp_path: Path) -> None:
    model = ScriptedModel(
        [reply(tool_call("explode", {}, id="e"), tool_call("refuse", {}, id="r")), reply("fine")]
    )
    events = await collect(make_agent(tmp_path, model).run(Conversation(), "go"))
    results = {r.tool_use_id: r for r in model.requests[1].messages[-1].tool_results}
    assert results["e"].is_error and "RuntimeError: kaboom" in results["e"].content
    assert results["r"].is_error and results["r"].content == "no such thing; try another path"
    assert events[-1].reason == "end_turn"


async def test_invalid_arguments_and_unparseable_json_are_error_results(tmp_path: Path) -> None:
    bad_json = ToolUseBlock(id="j", name="peek", input={}, input_error="truncated JSON")
    model = ScriptedModel([reply(tool_call("peek", {"wrong": 1}, id="v"), bad_json), reply("ok")])
    await collect(make_agent(tmp_path, model).run(Conversation(), "go"))
    results = {r.tool_use_id: r for r in model.requests[1].messages[-1].tool_results}
    assert "invalid arguments for peek" in results["v"].content
    assert "could not be parsed" in results["j"].content


async def test_read_only_calls_run_concurrently_in_order(tmp_path: Path) -> None:
    started: list[str] = []
    both_running = asyncio.Event()

    @tool(read_only=True, kind="read")
    async def rendezvous(ctx: RunContext, name: str) -> str:
        """Waits until two calls run at once."""
        started.append(name)
        if len(started) == 2:
            both_running.set()
        await asyncio.wait_for(both_running.wait(), timeout=5)
        return f"hello {name}"

    model = ScriptedModel(
        [
            reply(
                tool_call("rendezvous", {"name": "a"}, id="a"),
                tool_call("rendezvous", {"name": "b"}, id="b"),
            ),
            reply("done"),
        ]
    )
    await collect(make_agent(tmp_path, model, rendezvous).run(Conversation(), "go"))
    results = model.requests[1].messages[-1].tool_results
    assert [r.tool_use_id for r in results] == ["a", "b"]
    assert [r.content for r in results] == ["hello a", "hello b"]


async def test_writing_calls_run_one_at_a_time(tmp_path: Path) -> None:
    running = 0
    peak = 0

    @tool(read_only=False, kind="exec")
    async def job(ctx: RunContext, n: int) -> str:
        """A side-effecting job."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        running -= 1
        return str(n)

    model = ScriptedModel([reply(*(tool_call("job", {"n": i}) for i in range(4))), reply("ok")])
    await collect(
        make_agent(tmp_path, model, job, approval_handler=allow_all).run(Conversation(), "go")
    )
    assert peak == 1
    assert [r.content for r in model.requests[1].messages[-1].tool_results] == ["0", "1", "2", "3"]


async def test_default_gate_asks_for_writes_and_denies_headless(tmp_path: Path) -> None:
    model = ScriptedModel([reply(tool_call("put", {"path": "f.txt", "content": "x"})), reply("ok")])
    events = await collect(make_agent(tmp_path, model).run(Conversation(), "write"))
    assert not (tmp_path / "f.txt").exists()
    decided = [e for e in events if isinstance(e, PermissionDecided)]
    assert decided[0].outcome == "ask"
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "Nobody can approve it" in result.content
    assert "MEWCODE_HEADLESS_APPROVAL=deny" in result.content


async def test_headless_allow_policy_runs_asked_calls(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEWCODE_HEADLESS_APPROVAL", "allow")
    model = ScriptedModel([reply(tool_call("put", {"path": "f.txt", "content": "x"})), reply("ok")])
    events = await collect(make_agent(tmp_path, model).run(Conversation(), "write"))
    assert (tmp_path / "f.txt").read_text() == "x"
    [resolved] = [e for e in events if isinstance(e, ApprovalResolved)]
    assert resolved.allowed and resolved.by == "headless"


def test_headless_policy_rejects_typos() -> None:
    with pytest.raises(ValueError, match="MEWCODE_HEADLESS_APPROVAL"):
        headless_policy({"MEWCODE_HEADLESS_APPROVAL": "yes"})


async def test_default_gate_reads_outside_root_ask(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("secret")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "link").symlink_to(outside)
    model = ScriptedModel(
        [
            reply(tool_call("peek", {"path": str(outside)}), tool_call("peek", {"path": "link"})),
            reply("ok"),
        ]
    )
    asked: list[str] = []

    async def deny(req: ApprovalRequest) -> ApprovalAnswer:
        asked.append(req.call.input["path"])
        return ApprovalAnswer(allow=False, note="stay in the project")

    await collect(make_agent(root, model, approval_handler=deny).run(Conversation(), "read"))
    assert asked == [str(outside), "link"]
    for r in model.requests[1].messages[-1].tool_results:
        assert r.is_error and "stay in the project" in r.content


async def test_always_allow_is_remembered(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(tool_call("put", {"path": "a", "content": "1"})),
            reply(tool_call("put", {"path": "b", "content": "2"})),
            reply("ok"),
        ]
    )
    asked = 0

    async def always(req: ApprovalRequest) -> ApprovalAnswer:
        nonlocal asked
        asked += 1
        return ApprovalAnswer(allow=True, always=True)

    events = await collect(
        make_agent(tmp_path, model, approval_handler=always).run(Conversation(), "go")
    )
    assert asked == 1
    assert sum(isinstance(e, ApprovalRequested) for e in events) == 1
    assert (tmp_path / "a").read_text() == "1" and (tmp_path / "b").read_text() == "2"


async def test_provider_error_leaves_valid_conversation(tmp_path: Path) -> None:
    model = ScriptedModel(
        [reply(fail=ProviderError("anthropic: overloaded after 4 attempts", status=529))]
    )
    conv = Conversation()
    events = await collect(make_agent(tmp_path, model).run(conv, "hi"))
    assert events[-1].reason == "error" and "overloaded" in events[-1].error
    assert [m.role for m in conv.messages] == ["user"]


async def test_retry_discards_partial_text(tmp_path: Path) -> None:
    model = ScriptedModel([reply("final answer", retries=2)])
    conv = Conversation()
    events = await collect(make_agent(tmp_path, model).run(conv, "hi"))
    assert sum(isinstance(e, RetryScheduled) for e in events) == 2
    assert conv.messages[-1].text == "final answer"
    assert events[-1].text == "final answer"


async def test_pause_turn_continues_and_max_tokens_warns(tmp_path: Path) -> None:
    model = ScriptedModel(
        [reply("searching", stop_reason="pause_turn"), reply("cut", stop_reason="max_tokens")]
    )
    events = await collect(make_agent(tmp_path, model).run(Conversation(), "hi"))
    assert len(model.requests) == 2
    assert events[-1].reason == "max_tokens"
    assert any(isinstance(e, Notice) and "cut off" in e.message for e in events)


async def test_script_overrun_is_loud(tmp_path: Path) -> None:
    model = ScriptedModel([reply(tool_call("peek", {"path": "x"}))])
    (tmp_path / "x").write_text("")
    with pytest.raises(ScriptError, match="unexpected model request #2"):
        await collect(make_agent(tmp_path, model).run(Conversation(), "hi"))


class HangingModel:
    """Streams some text, then waits forever (until cancelled)."""

    name = "hanging"
    model = "hanging-1"

    def __init__(self) -> None:
        self.streaming = asyncio.Event()

    async def stream(self, request):  # type: ignore[no-untyped-def]
        yield TextDelta(text="half an ans")
        self.streaming.set()
        await asyncio.Event().wait()
        yield ResponseDone  # pragma: no cover


async def test_cancel_mid_stream_keeps_partial_text_and_can_continue(tmp_path: Path) -> None:
    model = HangingModel()
    agent = make_agent(tmp_path, model)  # type: ignore[arg-type]
    conv = Conversation()
    task = asyncio.ensure_future(collect(agent.run(conv, "hi")))
    await asyncio.wait_for(model.streaming.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [m.role for m in conv.messages] == ["user", "assistant"]
    assert conv.messages[-1].text == "half an ans" and conv.messages[-1].meta["interrupted"]
    # nothing reported by this provider: the request and what streamed are estimated
    cut = agent.state.cancelled_turn
    assert cut is not None and cut.reason == "cancelled"
    assert cut.usage.input_tokens > 0 and cut.usage.output_tokens == 3  # 11 chars
    assert agent.state.usage == cut.usage

    agent = agent.replaced(provider=ScriptedModel([reply("continuing")]))
    events = await collect(agent.run(conv, "go on"))
    assert events[-1].text == "continuing"


async def test_cancel_mid_tool_closes_dangling_calls(tmp_path: Path) -> None:
    entered = asyncio.Event()

    @tool(read_only=True, kind="read")
    async def slow(ctx: RunContext) -> str:
        """Never finishes."""
        entered.set()
        await asyncio.Event().wait()
        return "never"

    (tmp_path / "x").write_text("quick")
    model = ScriptedModel(
        [reply(tool_call("peek", {"path": "x"}, id="p"), tool_call("slow", {}, id="s"))]
    )
    agent = make_agent(tmp_path, model, slow)
    conv = Conversation()
    seen: list[object] = []

    async def consume() -> None:
        async for ev in agent.run(conv, "go"):
            seen.append(ev)

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(entered.wait(), 5)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    last = conv.messages[-1]
    assert [r.tool_use_id for r in last.tool_results] == ["p", "s"]
    by_id = {r.tool_use_id: r for r in last.tool_results}
    assert by_id["s"].is_error and "interrupted" in by_id["s"].content

    agent = agent.replaced(provider=ScriptedModel([reply("resumed fine")]))
    events = await collect(agent.run(conv, "again"))
    assert events[-1].reason == "end_turn"
    assert [m.role for m in agent.provider.requests[0].messages] == [
        "user",
        "assistant",
        "user",
        "user",
    ]


async def test_tool_finished_events_carry_results(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("data")
    model = ScriptedModel([reply(tool_call("peek", {"path": "x"})), reply("ok")])
    events = await collect(make_agent(tmp_path, model).run(Conversation(), "go"))
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].result.content == "data" and finished[0].duration >= 0
