"""``python -m mewcode_kernel acp`` driven by the ACP library's client side
against a scripted model: a turn whose edit the client approves (the diff
and status reach the client, the file and the session log are on disk),
cancel mid-stream, a stored session loaded and replayed, modes and slash
commands."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import RequestError
from acp.helpers import text_block

from mewcode_kernel.core.session import load_session
from mewcode_kernel.testing.wire import ScriptedServer, reply, stall_after
from tests._acp import acp_agent, project_with


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s
        assert not s.errors, s.errors


@pytest.fixture
def project(tmp_path: Path, server: ScriptedServer) -> Path:
    return project_with(tmp_path / "project", server.base_url, server.openai_base_url)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def _tool_updates(updates: list[dict], call_id: str) -> list[dict]:
    return [u for u in updates if u.get("toolCallId") == call_id]


async def test_an_approved_edit_streams_its_diff_and_lands_on_disk(
    project: Path, home: Path, server: ScriptedServer
) -> None:
    server.add(
        reply(tool_calls=[("write_file", {"path": "hello.txt", "content": "hi there\n"}, "w1")]),
        reply(text="Wrote hello.txt."),
    )
    async with acp_agent(project, home, answer="allow_once") as agent:
        session_id = await agent.start(project)
        result = await agent.conn.prompt(
            session_id=session_id, prompt=[text_block("write hello.txt")]
        )
        assert result.stop_reason == "end_turn"
        client = agent.client
        # the edit asked, with the diff, and the client's "allow once" let it run
        [asked] = client.permission_requests
        assert [o["optionId"] for o in asked["options"]] == [
            "allow_once", "allow_always", "allow_always_save", "reject_once"
        ]  # fmt: skip
        assert asked["tool_call"]["content"][0]["type"] == "diff"
        updates = _tool_updates(client.updates(session_id), "w1")
        assert updates[0]["sessionUpdate"] == "tool_call"
        assert updates[0]["kind"] == "edit"
        done = updates[-1]
        assert done["sessionUpdate"] == "tool_call_update"
        assert done["status"] == "completed"
        diff = done["content"][0]
        assert diff["type"] == "diff"
        assert diff["path"] == str(project / "hello.txt")
        assert diff["newText"] == "hi there\n"
        assert diff.get("oldText") is None  # a new file
        assert "Wrote hello.txt." in client.text(session_id)
        assert "available_commands_update" in client.kinds(session_id)
    assert (project / "hello.txt").read_text() == "hi there\n"
    stored = load_session(project, session_id)
    assert stored.id == session_id
    assert (stored.path / "conversation.jsonl").is_file()
    assert "write hello.txt" in json.dumps([m.model_dump() for m in stored.messages])


async def test_cancel_mid_stream_ends_the_turn_cancelled_and_keeps_the_session(
    project: Path, home: Path, server: ScriptedServer
) -> None:
    stalled, stall = stall_after(4, reply(text="A long answer that pauses half way through."))
    server.add(stalled, reply(text="Back again."))
    async with acp_agent(project, home) as agent:
        session_id = await agent.start(project)
        client = agent.client
        turn = asyncio.ensure_future(
            agent.conn.prompt(session_id=session_id, prompt=[text_block("talk")])
        )
        await client.wait_for(lambda: "agent_message_chunk" in client.kinds(session_id))
        await asyncio.to_thread(stall.reached.wait, 30)
        await agent.conn.cancel(session_id=session_id)
        result = await asyncio.wait_for(turn, 60)
        stall.release()
        assert result.stop_reason == "cancelled"
        # the session is still there and valid: the next prompt is answered
        again = await agent.conn.prompt(session_id=session_id, prompt=[text_block("again")])
        assert again.stop_reason == "end_turn"
        assert "Back again." in client.text(session_id)
    stored = load_session(project, session_id)
    assert stored.skipped_lines == 0 and stored.repaired == 0


async def test_a_stored_session_loads_with_its_history_and_the_model_sees_it(
    project: Path, home: Path, server: ScriptedServer
) -> None:
    server.add(reply(text="The answer is 42."), reply(text="Still 42."))
    async with acp_agent(project, home) as first:
        session_id = await first.start(project)
        await first.conn.prompt(session_id=session_id, prompt=[text_block("what is the answer?")])
    async with acp_agent(project, home) as second:
        await second.conn.initialize(protocol_version=1)
        listed = await second.conn.list_sessions(cwd=str(project))
        assert session_id in [s.session_id for s in listed.sessions]
        await second.conn.load_session(cwd=str(project), session_id=session_id, mcp_servers=[])
        updates = second.client.updates(session_id)
        kinds = [u["sessionUpdate"] for u in updates]
        assert kinds[:2] == ["user_message_chunk", "agent_message_chunk"]
        assert updates[0]["content"]["text"] == "what is the answer?"
        assert updates[1]["content"]["text"] == "The answer is 42."
        result = await second.conn.prompt(session_id=session_id, prompt=[text_block("sure?")])
        assert result.stop_reason == "end_turn"
    seen = json.dumps(server.requests[-1])
    assert "The answer is 42." in seen and "what is the answer?" in seen


async def test_modes_are_the_five_and_set_mode_takes_only_them(
    project: Path, home: Path, server: ScriptedServer
) -> None:
    server.add(
        reply(tool_calls=[("write_file", {"path": "no.txt", "content": "x"}, "p1")]),
        reply(text="I may not write in plan mode."),
    )
    async with acp_agent(project, home) as agent:
        await agent.conn.initialize(protocol_version=1)
        new = await agent.conn.new_session(cwd=str(project), mcp_servers=[])
        assert new.modes is not None
        assert [m.id for m in new.modes.available_modes] == [
            "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"
        ]  # fmt: skip
        for bad in ("Plan", "plan ", "bypass", "", "../plan"):
            with pytest.raises(RequestError) as caught:
                await agent.conn.set_session_mode(session_id=new.session_id, mode_id=bad)
            assert caught.value.code == -32602
        await agent.conn.set_session_mode(session_id=new.session_id, mode_id="plan")
        await agent.conn.prompt(session_id=new.session_id, prompt=[text_block("write no.txt")])
        assert not agent.client.permission_requests
    assert not (project / "no.txt").exists()


async def test_slash_commands_are_advertised_and_run_but_not_the_session_swapping_ones(
    project: Path, home: Path, server: ScriptedServer
) -> None:
    server.add(reply(text="That path question went to the model."))
    async with acp_agent(project, home) as agent:
        session_id = await agent.start(project)
        client = agent.client
        await client.wait_for(lambda: "available_commands_update" in client.kinds(session_id))
        [offered] = [
            u
            for u in client.updates(session_id)
            if u["sessionUpdate"] == "available_commands_update"
        ]
        names = {c["name"] for c in offered["availableCommands"]}
        assert {"mode", "cost", "help", "sessions"} <= names
        assert not names & {"clear", "resume"}
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("/mode acceptEdits")])
        modes = [
            u for u in client.updates(session_id) if u["sessionUpdate"] == "current_mode_update"
        ]
        assert modes[-1]["currentModeId"] == "acceptEdits"
        for swap in ("/clear", "/resume"):
            await agent.conn.prompt(session_id=session_id, prompt=[text_block(swap)])
            assert "not available in a chat" in client.text(session_id)
        # a prompt that only starts with a slash is a question for the model
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("/usr/bin is missing")])
        assert "That path question went to the model." in client.text(session_id)
    assert len(list((project / ".mewcode" / "sessions").iterdir())) == 1  # never swapped
