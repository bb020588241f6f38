"""L1 offload, token accounting, L2 compaction pieces, the circuit breaker,
the compaction record on disk, /context and /compact, and the per-session
state that /clear and resume reset."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from pathlib import Path

import pytest

from mewcode_kernel.core.agent import ConversationState
from mewcode_kernel.core.commands.registry import run_command
from mewcode_kernel.core.context import ContextManager, ContextState, choose_split, is_summary
from mewcode_kernel.core.context.compact import summary_request
from mewcode_kernel.core.context.offload import offload_path, shape_result
from mewcode_kernel.core.context.state import BREAKER_LIMIT, Offloaded
from mewcode_kernel.core.context.tokens import estimate_messages, estimate_text
from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.errors import ProviderError
from mewcode_kernel.core.events import Notice, PostCompact, PreCompact, ToolFinished
from mewcode_kernel.core.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    assistant,
    user,
)
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.session import SessionStore, load_session
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call
from mewcode_kernel.testing.scripted import ScriptedReply
from tests._context import (
    big_output,
    check_well_formed,
    is_summary_request,
    make_session,
    responder,
    scripted,
)

# --- L1 -------------------------------------------------------------------------------


def test_offload_writes_the_full_text_and_keeps_head_and_tail(tmp_path: Path) -> None:
    state = ContextState()
    session_dir = tmp_path / ".mewcode" / "sessions" / "s1"
    content = big_output(7, 50_000)
    call = ToolUseBlock(id="toolu_7", name="bash", input={"command": "make"})
    result = ToolResultBlock(tool_use_id="toolu_7", content=content, is_error=True)
    kept = shape_result(
        result, call, state=state, threshold=20_000, root=tmp_path, session_dir=session_dir
    )
    path = offload_path(session_dir, "toolu_7")
    assert path.read_text() == content
    assert kept.is_error and kept.tool_use_id == "toolu_7"
    assert ".mewcode/sessions/s1/tool-results/toolu_7.txt" in kept.content
    assert kept.content.count("output 7:") >= 2 and len(kept.content) < 3_500
    assert "50,000 characters" in kept.content and "omitted" in kept.content
    assert state.decisions["toolu_7"] == Offloaded(
        call_id="toolu_7", path=path, chars=50_000, kept_chars=len(kept.content)
    )
    again = shape_result(
        result, call, state=state, threshold=20_000, root=tmp_path, session_dir=session_dir
    )
    assert again == kept  # deterministic: one form, decided once


def test_small_results_and_reads_are_not_copied(tmp_path: Path) -> None:
    state = ContextState()
    small = ToolResultBlock(tool_use_id="a", content="short")
    assert (
        shape_result(small, None, state=state, threshold=100, root=tmp_path, session_dir=tmp_path)
        is small
    )
    read = ToolUseBlock(id="b", name="read_file", input={"path": "huge.log"})
    kept = shape_result(
        ToolResultBlock(tool_use_id="b", content="x\n" * 5_000),
        read,
        reread=True,  # read_file's metadata: a large read is read again in parts
        state=state,
        threshold=1_000,
        root=tmp_path,
        session_dir=tmp_path,
    )
    assert "Read huge.log in smaller parts" in kept.content
    assert state.decisions["b"].path is None and not (tmp_path / "tool-results").exists()
    alone = ToolResultBlock(tool_use_id="c", content="y" * 5_000)
    assert (
        shape_result(alone, None, state=state, threshold=1_000, root=tmp_path, session_dir=None)
        is alone
    )
    assert state.decisions["c"] is None and state.decisions["a"] is None


async def test_the_model_can_read_an_offloaded_result_back(tmp_path: Path) -> None:
    seen: list[ToolFinished] = []

    def first(request: ModelRequest, prompt: str) -> ScriptedReply:
        return reply(tool_call("big", {"n": 3}, id="call_3"))

    def then(request: ModelRequest) -> ScriptedReply:
        if len([m for m in request.messages if m.tool_results]) == 1:
            preview = request.messages[-1].tool_results[0].content
            path = preview.split("saved in ")[1].split(". Read")[0]
            return reply(tool_call("read_file", {"path": path, "limit": 2}, id="back"))
        return reply("Got it.")

    model = scripted(responder(first, then))
    session = make_session(tmp_path, model)
    async for event in session.run("go"):
        if isinstance(event, ToolFinished):
            seen.append(event)
    back = seen[-1]
    assert back.call.id == "back" and not back.result.is_error, back.result.content
    assert "output 3:" in back.result.content
    assert session.state.context.offloaded[0].call_id == "call_3"


# --- accounting -------------------------------------------------------------------------


def test_estimate_uses_the_anchor_and_counts_what_came_after() -> None:
    manager = ContextManager(window=10_000)
    messages = [user("a" * 400), assistant("b" * 400)]
    request = ModelRequest(system="s" * 40, messages=messages)
    whole = manager.estimate(request)
    assert whole == estimate_text("s" * 40) + estimate_messages(messages)
    manager.observe(Usage(input_tokens=500, cache_read_tokens=1_000, output_tokens=50), 2)
    assert manager.estimate(request) == 1_550
    longer = ModelRequest(system="s", messages=[*messages, user("c" * 800)])
    assert manager.estimate(longer) == 1_550 + estimate_messages([user("c" * 800)])
    manager.observe(Usage(), 3)  # nothing reported: the anchor stays
    assert manager.state.anchor_messages == 2
    manager.state.clear_anchor()
    assert manager.estimate(request) == whole


def test_thresholds_follow_the_window() -> None:
    big, small = ContextManager(window=200_000), ContextManager(window=20_000)
    assert big.compact_threshold == 160_000 and big.keep_tokens == 50_000
    assert big.offload_threshold == 20_000 and small.offload_threshold == 8_000


# --- L2 pieces ----------------------------------------------------------------------------


def _turn(n: int, *, size: int = 400) -> list[Message]:
    call = ToolUseBlock(id=f"c{n}", name="read_file", input={"path": f"f{n}.py"})
    return [
        user(f"task {n} " + "x" * size),
        assistant("looking", call),
        user(ToolResultBlock(tool_use_id=f"c{n}", content="y" * size)),
        assistant(f"done {n}"),
    ]


def test_the_split_keeps_whole_recent_turns_and_never_orphans_results() -> None:
    messages = [m for n in range(10) for m in _turn(n)]
    per_turn = estimate_messages(_turn(0))
    split = choose_split(messages, keep_tokens=3 * per_turn + 10)
    assert split == 28 and messages[split].text.startswith("task 7")
    one_long_turn = _turn(0)[:1] + [m for n in range(10) for m in _turn(n)[1:3]]
    split = choose_split(one_long_turn, keep_tokens=per_turn)
    assert one_long_turn[split].role == "assistant"  # inside the turn, before a call
    assert choose_split([user("only")], keep_tokens=10) is None


def test_summary_request_is_well_formed_and_fits() -> None:
    head = [m for n in range(30) for m in _turn(n, size=6_000)]
    head.append(assistant("calling", ToolUseBlock(id="dangling", name="bash", input={})))
    base = ModelRequest(system="S", messages=[], tools=[])
    request = summary_request(base, head, budget_tokens=8_000, files={"a.py": "edited"})
    check_well_formed(request.messages)
    assert estimate_messages(request.messages) <= 8_000
    assert "do not fit" in request.messages[0].text
    assert "- a.py (edited)" in request.messages[-1].text
    answered = [r for m in request.messages for r in m.tool_results if r.tool_use_id == "dangling"]
    assert answered and answered[0].is_error
    results = [r for m in request.messages for r in m.tool_results]
    assert all(len(r.content) <= 4_000 for r in results)


# --- compaction through the session -------------------------------------------------------


async def test_compact_command_marks_the_session_file(tmp_path: Path) -> None:
    model = scripted(responder(lambda r, p: reply(f"answer to {p}")))
    session = make_session(tmp_path, model)
    for n in range(6):
        await collect(session.run(f"question {n} " + "q" * 2_000))
    events = await collect(session.compact("focus on the questions"))
    kinds = [e.kind for e in events]
    assert kinds == ["pre_compact", "notice", "post_compact"]
    pre, post = events[0], events[-1]
    assert isinstance(pre, PreCompact) and pre.trigger == "manual" and pre.messages == 12
    assert isinstance(post, PostCompact) and post.ok and post.usage.input_tokens > 0
    assert post.tokens_after < post.tokens_before
    ask = model.requests[-1]
    assert (
        "The user's instructions for this summary: focus on the questions" in ask.messages[-1].text
    )
    assert session.state.usage.input_tokens >= post.usage.input_tokens

    messages = session.conversation.messages
    assert is_summary(messages[0]) and len(messages) == 1 + post.kept_messages
    lines = (session.session_dir / "conversation.jsonl").read_text().splitlines()
    marker = json.loads(lines[-len(messages) - 1])
    assert marker["type"] == "compact" and marker["messages"] == len(messages)
    assert marker["trigger"] == "manual" and marker["summarized"] == post.summarized_messages
    assert load_session(tmp_path, session.session_id).messages == messages

    result = await run_command(session, "/compact")
    assert not result.error and result.data["kept"] >= 1
    context = await run_command(session, "/context")
    assert context.data["compactions"] == 2 and context.data["window"] == 200_000
    assert "of 200,000 tokens" in context.markdown


async def test_compact_on_an_empty_session_does_nothing(tmp_path: Path) -> None:
    session = make_session(tmp_path, ScriptedModel([]))
    events = await collect(session.compact())
    assert [e.kind for e in events] == ["notice"]
    assert session.session_id is None
    assert "Nothing to compact" in (await run_command(session, "/compact")).markdown


async def test_the_breaker_stops_automatic_compaction_after_repeated_failures(
    tmp_path: Path,
) -> None:
    failing = {"now": True}

    def answer(request: ModelRequest) -> ScriptedReply:
        usage = Usage(input_tokens=10, output_tokens=5)  # under-reported: not trusted
        if is_summary_request(request) and failing["now"]:
            return ScriptedReply(fail=ProviderError("overloaded"))
        if is_summary_request(request):
            return ScriptedReply(blocks=(TextBlock(text="## Goal\nrecovered"),), usage=usage)
        return ScriptedReply(blocks=(TextBlock(text="ok"),), usage=usage)

    model = scripted(answer)
    session = make_session(tmp_path, model, window=4_000)
    events: list[object] = []
    for n in range(8):
        events += await collect(session.run(f"turn {n} " + "z" * 2_000))
    failures = [e for e in events if isinstance(e, PostCompact)]
    assert len(failures) == BREAKER_LIMIT and not any(f.ok for f in failures)
    assert all("overloaded" in (f.error or "") for f in failures)
    assert session.state.context.breaker_open
    off = [e for e in events if isinstance(e, Notice) and "off for this session" in e.message]
    assert len(off) == 1
    assert len([r for r in model.requests if is_summary_request(r)]) == BREAKER_LIMIT
    # a manual compaction may still be tried, and its success closes the breaker
    failing["now"] = False
    manual = await run_command(session, "/compact")
    assert not manual.error and "recovered" in manual.data["summary"]
    assert not session.state.context.breaker_open


async def test_a_summary_that_calls_tools_is_a_failure(tmp_path: Path) -> None:
    def answer(request: ModelRequest) -> ScriptedReply:
        if is_summary_request(request):
            return reply(tool_call("read_file", {"path": "x"}))
        return reply("ok")

    session = make_session(tmp_path, scripted(answer))
    await collect(session.run("a"))
    await collect(session.run("b"))
    result = await run_command(session, "/compact")
    assert result.error and "called tools (read_file)" in result.markdown
    assert not is_summary(session.conversation.messages[0])


def test_a_compaction_cut_short_by_a_crash_is_ignored_and_repaired(tmp_path: Path) -> None:
    with SessionStore.create(tmp_path, "p", "m") as writer:
        writer.append(user("one"))
        writer.append(assistant("two"))
        writer.append_compaction([user("summary", meta={"compact": {}}), assistant("two")], {})
        session_id, path = writer.id, writer.conversation_path
    whole = load_session(tmp_path, session_id)
    assert [m.text for m in whole.messages] == ["summary", "two"] and whole.compacted_from == 2
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b'{"role"') + 10])  # the last message half-written
    broken = load_session(tmp_path, session_id)
    assert broken.broken_compaction and [m.text for m in broken.messages] == ["one", "two"]
    _, writer = SessionStore.resume(tmp_path, session_id)
    with writer:
        writer.append(user("three"))
    again = load_session(tmp_path, session_id)
    assert [m.text for m in again.messages] == ["one", "two", "three"]
    assert not again.broken_compaction


# --- per-session state ----------------------------------------------------------------------


def _dirty(runtime: ConversationState) -> None:
    runtime.usage = Usage(input_tokens=5)
    runtime.model_turns = runtime.user_turns = 3
    runtime.last_usage = Usage(output_tokens=1)
    runtime.context.decisions["x"] = None
    runtime.context.set_anchor(10, 2)
    runtime.context.touch_file("a.py", "edited")
    runtime.context.compact_failures = 5
    runtime.context.breaker_reported = True
    runtime.add_reminder("remember")
    runtime.idle_gap = timedelta(hours=9)
    runtime.active_skills["s"] = "body"


def _snapshot(runtime: ConversationState) -> dict[str, object]:
    return {
        **{f.name: getattr(runtime, f.name) for f in dataclasses.fields(runtime)},
        "context": dataclasses.asdict(runtime.context),
    }


def test_reset_clears_every_field() -> None:
    runtime = ConversationState()
    state = runtime.context
    _dirty(runtime)
    runtime.reset()
    assert _snapshot(runtime) == _snapshot(ConversationState())
    assert runtime.context is state  # cleared in place: the manager keeps its reference


async def test_clear_and_resume_start_from_zero(tmp_path: Path) -> None:
    model = scripted(responder(lambda r, p: reply("ok")))
    session = make_session(tmp_path, model)
    await collect(session.run("hello"))
    old_id = session.session_id
    _dirty(session.state)
    await run_command(session, "/clear")
    assert _snapshot(session.state) == _snapshot(ConversationState())
    await collect(session.run("again"))
    _dirty(session.state)
    session.state.idle_gap = None
    await session.resume(old_id)
    assert {k: v for k, v in _snapshot(session.state).items()} == _snapshot(ConversationState())
    assert session.conversation.messages[0].content[-1] == TextBlock(text="hello")


async def test_conversation_replace_without_a_summary_still_rewrites(tmp_path: Path) -> None:
    session = make_session(tmp_path, scripted(responder(lambda r, p: reply("ok"))))
    await collect(session.run("hello"))
    assert isinstance(session.conversation, Conversation)
    session.conversation.replace([user("fresh")])
    assert [m.text for m in load_session(tmp_path, session.session_id).messages] == ["fresh"]


async def test_cost_and_context_show_the_window(tmp_path: Path) -> None:
    session = make_session(tmp_path, scripted(responder(lambda r, p: reply("ok"))), window=50_000)
    await collect(session.run("hello"))
    cost = await run_command(session, "/cost")
    assert cost.data["context_window"] == 50_000 and cost.data["context_tokens"] > 0
    assert "`/context`" in cost.markdown
    context = await run_command(session, "/context")
    assert context.data["anchored"] and context.data["messages"] == 2
    assert context.data["used"] == cost.data["context_tokens"]


@pytest.mark.parametrize("linked", ["folder", "file"])
def test_offload_writes_nothing_through_a_link_a_clone_ships(tmp_path: Path, linked: str) -> None:
    """A cloned repository can ship ``tool-results`` (or a result file with a
    predictable name) as a link: the full text must not land where it points."""
    session_dir = tmp_path / ".mewcode" / "sessions" / "s1"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    victim = outside / "toolu_9.txt"
    victim.write_text("keep me")
    results = session_dir / "tool-results"
    if linked == "folder":
        session_dir.mkdir(parents=True)
        results.symlink_to(outside)
    else:
        results.mkdir(parents=True)
        (results / "toolu_9.txt").symlink_to(victim)
    result = ToolResultBlock(tool_use_id="toolu_9", content=big_output(9, 50_000))
    kept = shape_result(
        result, None, state=ContextState(), threshold=20_000, root=tmp_path, session_dir=session_dir
    )
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in outside.iterdir()) == ["toolu_9.txt"]
    assert "could not be saved" in kept.content and "omitted" in kept.content
