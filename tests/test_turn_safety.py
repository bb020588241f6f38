"""A turn cannot break a session: an exception in the permission gate ends the
turn with an error and a valid conversation; a damaged log is repaired
wherever an unanswered call sits; a prompt with lone surrogates is repaired;
a prompt larger than the usable window is refused before anything is sent."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession, open_session
from mewcode_kernel.core.agent import Agent
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.conversation import Conversation, repair_tool_pairs
from mewcode_kernel.core.events import Notice, TurnDone
from mewcode_kernel.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from mewcode_kernel.core.permission import Gate
from mewcode_kernel.core.session import SessionStore, SessionWriter, load_session
from mewcode_kernel.core.tools import RunContext, ToolRegistry, builtin_tools
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call
from mewcode_kernel.testing.wire import ScriptedServer
from mewcode_kernel.testing.wire import reply as wire_reply


def pairs_are_valid(messages: list[Message]) -> bool:
    """What the Messages API demands: each call answered by the very next
    message, each result answering a call of the message before it."""
    for i, m in enumerate(messages):
        if m.role == "assistant" and m.tool_uses:
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            if nxt is None or {r.tool_use_id for r in nxt.tool_results} != {
                c.id for c in m.tool_uses
            }:
                return False
        if m.role == "user" and m.tool_results:
            before = messages[i - 1] if i else None
            calls = (
                {c.id for c in before.tool_uses} if before and before.role == "assistant" else set()
            )
            if not {r.tool_use_id for r in m.tool_results} <= calls:
                return False
    return True


def user(text: str) -> Message:
    return Message(role="user", content=[TextBlock(text=text)])


def calling(*ids: str) -> Message:
    return Message(
        role="assistant",
        content=[ToolUseBlock(id=i, name="read_file", input={"path": "x"}) for i in ids],
    )


def results(*ids: str) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=i, content="ok") for i in ids])


# ---- an exception in the gate ---------------------------------------------------------------


class RacingGate(Gate):
    """A gate whose check fails the way a realpath race once made it fail."""

    async def check(self, call, tool, ctx):  # type: ignore[override]
        raise OSError(22, "Invalid argument", "proj/sub")


async def test_an_exception_in_the_gate_ends_the_turn_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    model = ScriptedModel(
        [reply("looking", tool_call("read_file", {"path": "a.txt"}, id="t1")), reply("fine now")]
    )
    agent = Agent.of(
        provider=model,
        tools=ToolRegistry(builtin_tools()),
        ctx=RunContext(root=tmp_path),
        gate=RacingGate(root=tmp_path),
    )
    conv = Conversation()
    events = await collect(agent.run(conv, "read it"))
    done = events[-1]
    assert isinstance(done, TurnDone) and done.reason == "error" and "OSError" in (done.error or "")
    assert any(isinstance(e, Notice) and e.level == "error" for e in events)
    assert pairs_are_valid(conv.messages) and conv.messages[-1].tool_results[0].is_error
    agent = agent.replaced(spec=replace(agent.spec, gate=Gate(root=tmp_path)))
    second = await collect(agent.run(conv, "try again"))
    assert isinstance(second[-1], TurnDone) and second[-1].reason == "end_turn"
    assert pairs_are_valid(model.requests[-1].messages)


# ---- a damaged log ------------------------------------------------------------------------


def test_repair_answers_calls_and_drops_stray_results_anywhere() -> None:
    damaged = [
        user("one"),
        calling("a", "b"),
        user("two"),  # the results of a and b were lost
        Message(role="assistant", content=[TextBlock(text="answer")]),
        results("ghost"),  # answers nothing
        calling("c"),
        calling("d"),  # c never answered before the next assistant message
        results("d"),
        user("three"),
        calling("e"),  # the last call: left to close_dangling
    ]
    assert not pairs_are_valid(damaged)
    repaired, fixed = repair_tool_pairs(damaged)
    assert fixed == 4  # a, b, ghost, c
    assert pairs_are_valid(repaired[:-1])
    after_two = repaired[2]
    assert [b.type for b in after_two.content] == ["tool_result", "tool_result", "text"]
    assert repaired[1:3] == [calling("a", "b"), after_two]


def damaged_session(tmp_path: Path) -> SessionWriter:
    """A closed session log whose call ``t1`` has no result (a crash mid-call)."""
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    for m in (
        user("one"),
        calling("t1"),
        user("two"),
        Message(role="assistant", content=[TextBlock(text="hi")]),
    ):
        writer.append(m)
    writer.close()
    return writer


def test_a_damaged_log_with_a_middle_orphan_is_repaired_on_resume(tmp_path: Path) -> None:
    writer = damaged_session(tmp_path)
    loaded = load_session(tmp_path, writer.id)
    assert loaded.repaired == 1 and pairs_are_valid(loaded.messages)
    _, writer2 = SessionStore.resume(tmp_path, writer.id)
    writer2.append(user("three"))
    writer2.close()
    again = load_session(tmp_path, writer.id)
    assert again.repaired == 0 and pairs_are_valid(again.messages)
    assert [m.text for m in again.messages][-1] == "three"


async def test_a_resumed_damaged_session_is_sendable(tmp_path: Path) -> None:
    writer = damaged_session(tmp_path)
    model = ScriptedModel([reply("continuing")])
    session = AgentSession(
        tmp_path,
        config=load_config(tmp_path, home=tmp_path / "home", env={}),
        provider=model,
        home=tmp_path / "home",
    )
    await session.resume(writer.id)
    events = await collect(session.run("three"))
    assert any(isinstance(e, Notice) and "Repaired the session log" in e.message for e in events)
    assert pairs_are_valid(model.requests[0].messages)


# ---- lone surrogates ----------------------------------------------------------------------


@pytest.mark.usefixtures("trusted_projects")
async def test_a_prompt_with_a_lone_surrogate_is_repaired_and_later_turns_work(
    tmp_path: Path,
) -> None:
    with ScriptedServer() as server:
        (tmp_path / ".mewcode.yaml").write_text(
            f"providers:\n  c: {{protocol: anthropic, model: m, base_url: {server.base_url}, "
            "api_key: sk-test-0123456789}\n"
        )
        server.add(wire_reply(text="got it"), wire_reply(text="still fine"))
        async with open_session(tmp_path, home=tmp_path / "home") as s:
            first = await collect(s.run("broken \ud800 text and a pair \ud83d\ude00"))
            second = await collect(s.run("next"))
    assert any(isinstance(e, Notice) and "lone UTF-16 surrogates" in e.message for e in first)
    assert isinstance(second[-1], TurnDone) and second[-1].reason == "end_turn"
    sent = json.dumps(server.received[0].body["messages"][0], ensure_ascii=False)
    assert "broken \ufffd text and a pair 😀" in sent
    [log] = (tmp_path / ".mewcode" / "sessions").glob("*/conversation.jsonl")
    log.read_text(encoding="utf-8")  # valid UTF-8 all through


def test_a_lone_surrogate_already_in_a_log_is_repaired_on_load(tmp_path: Path) -> None:
    writer = SessionStore.create(tmp_path, "anthropic", "m")
    writer.close()
    line = json.dumps({"role": "user", "content": [{"type": "text", "text": "bad \ud800"}]})
    writer.conversation_path.write_text(line + "\n")
    loaded = load_session(tmp_path, writer.id)
    assert loaded.repaired == 1 and loaded.messages[0].text == "bad \ufffd"


# ---- a prompt larger than the window -------------------------------------------------------


async def test_a_prompt_larger_than_the_usable_window_is_refused(tmp_path: Path) -> None:
    model = ScriptedModel([reply("small one answered")])
    session = AgentSession(
        tmp_path,
        config=load_config(tmp_path, home=tmp_path / "home", env={}),
        provider=model,
        home=tmp_path / "home",
    )
    huge = "x" * 5_000_000  # about 1.25 million tokens, for a 200,000-token window
    events = await collect(session.run(huge))
    done = events[-1]
    assert isinstance(done, TurnDone) and done.reason == "refused"
    assert "window" in (done.error or "") and "was not sent" in (done.error or "")
    assert model.requests == [] and len(session.conversation) == 0
    events = await collect(session.run("a small one"))
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "end_turn"
    assert all(len(m.text) < 1000 for m in model.requests[0].messages)


async def test_one_writer_per_session_in_one_process(tmp_path: Path) -> None:
    from mewcode_kernel.core.errors import SessionInUse

    def make(model: ScriptedModel) -> AgentSession:
        return AgentSession(
            tmp_path,
            config=load_config(tmp_path, home=tmp_path / "home", env={}),
            provider=model,
            home=tmp_path / "home",
        )

    first = make(ScriptedModel([reply("one"), reply("two")]))
    await collect(first.run("hello"))
    sid = first.session_id
    assert sid is not None
    await first.resume(sid)  # its own session: it lets go first, then takes it again
    second = make(ScriptedModel([reply("copy")]))
    with pytest.raises(SessionInUse, match="--fork") as caught:
        await second.resume(sid[:20])
    assert caught.value.session_id == sid
    await second.resume(sid, fork=True)
    assert second.session_id not in (None, sid)
    await collect(second.run("in the copy"))
    await collect(first.run("in the original"))
    original = load_session(tmp_path, sid)
    assert "in the copy" not in json.dumps([m.model_dump() for m in original.messages])
    await first.aclose()
    await second.aclose()
