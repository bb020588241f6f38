"""Long sessions with the scripted model: a 200-turn session with large tool
results stays under its window, keeps recent turns verbatim and sends
well-formed summary requests; between compactions the prefix is stable; a
compacted session resumes from its summary."""

from __future__ import annotations

import itertools
import json
import os
import re
import time
from pathlib import Path

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.context import is_summary
from mewcode_kernel.core.events import PostCompact, PreCompact, TurnDone
from mewcode_kernel.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from mewcode_kernel.core.providers.anthropic import to_anthropic_request
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.session import SessionStore, load_session
from mewcode_kernel.testing import collect, reply, tool_call
from tests._context import (
    big_output,
    check_well_formed,
    is_summary_request,
    make_session,
    responder,
    scripted,
    wire_tokens,
)

WINDOW = 30_000


def _turn_number(prompt: str) -> int:
    return int(re.search(r"task (\d+)", prompt).group(1))  # type: ignore[union-attr]


def _one_tool_turn(request: ModelRequest, prompt: str):
    n = _turn_number(prompt)
    return reply(f"Working on {n}.", tool_call("big", {"n": n}, id=f"call_{n}"))


def _done(request: ModelRequest):
    call = request.messages[-2].tool_uses[0]
    return reply(f"Finished {call.input['n']}.")


async def _run_turns(session: AgentSession, turns: range) -> list[object]:
    events: list[object] = []
    for n in turns:
        got = await collect(session.run(f"Please do task {n}."))
        assert isinstance(got[-1], TurnDone) and got[-1].reason == "end_turn", got[-1]
        events += got
    return events


def _segments(requests: list[ModelRequest]) -> list[list[ModelRequest]]:
    """The turn requests, split where a compaction happened."""
    out: list[list[ModelRequest]] = [[]]
    for request in requests:
        if is_summary_request(request):
            out.append([])
        else:
            out[-1].append(request)
    return [s for s in out if s]


def _stable_json(request: ModelRequest) -> tuple[str, str]:
    body = to_anthropic_request(request, "m", 1024)
    return json.dumps(body["system"]), json.dumps(body["tools"])


async def test_200_turns_with_large_results_stay_under_the_window(tmp_path: Path) -> None:
    model = scripted(responder(_one_tool_turn, _done))
    session = make_session(tmp_path, model, window=WINDOW)
    events = await _run_turns(session, range(1, 201))
    requests = model.requests
    summaries = [r for r in requests if is_summary_request(r)]
    turn_requests = [r for r in requests if not is_summary_request(r)]
    compactions = [e for e in events if isinstance(e, PostCompact)]

    assert len(turn_requests) == 400
    assert len(summaries) == len(compactions) >= 5
    assert all(c.ok and c.trigger == "auto" for c in compactions)
    # every request fits, by the provider's count and by ours
    assert max(wire_tokens(r) for r in requests) < WINDOW
    # each summary request is well-formed and asks for the summary last
    for request in summaries:
        check_well_formed(request.messages)
        assert request.tools and request.system == turn_requests[0].system
        assert not any(is_summary(m) and m is not request.messages[0] for m in request.messages)
    for request in turn_requests:
        check_well_formed(request.messages)

    # recent turns are intact: the last request ends with the last turns verbatim
    last = turn_requests[-1].messages
    tail_prompts = [
        m for m in last if m.role == "user" and not m.tool_results and not is_summary(m)
    ]
    assert [m.content[-1].text for m in tail_prompts][-3:] == [
        "Please do task 198.",
        "Please do task 199.",
        "Please do task 200.",
    ]
    assert last[-1].tool_results and last[-1].tool_results[0].tool_use_id == "call_200"
    assert last[-2].tool_uses == [ToolUseBlock(id="call_200", name="big", input={"n": 200})]
    assert is_summary(last[0]) and "## Open work" in last[0].text

    # the large outputs were offloaded, in full, inside the session directory
    preview = last[-1].tool_results[0].content
    saved = session.session_dir / "tool-results" / "call_200.txt"
    assert saved.read_text() == big_output(200)
    assert ".mewcode/sessions/" in preview and "call_200.txt" in preview
    assert len(preview) < 4_000


async def test_between_compactions_the_prefix_is_byte_stable(tmp_path: Path) -> None:
    model = scripted(responder(_one_tool_turn, _done))
    session = make_session(tmp_path, model, window=WINDOW)
    await _run_turns(session, range(1, 61))
    segments = _segments(model.requests)
    assert len(segments) >= 3
    for segment in segments:
        first = _stable_json(segment[0])
        for prev, nxt in itertools.pairwise(segment):
            assert _stable_json(nxt) == first  # system prompt and tools byte-identical
            assert len(nxt.messages) > len(prev.messages)
            assert nxt.messages[: len(prev.messages)] == prev.messages  # strict prefix
            prev_body = to_anthropic_request(prev, "m", 1024)["messages"]
            next_body = to_anthropic_request(nxt, "m", 1024)["messages"]
            strip = _without_cache_control
            assert strip(next_body[: len(prev_body) - 1]) == strip(prev_body[:-1])


def _without_cache_control(messages: list[dict]) -> list[dict]:
    return [
        {
            **m,
            "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]],
        }
        for m in messages
    ]


async def test_a_resumed_compacted_session_sends_only_the_summary_and_the_tail(
    tmp_path: Path,
) -> None:
    model = scripted(responder(_one_tool_turn, _done))
    session = make_session(tmp_path, model, window=WINDOW)
    await _run_turns(session, range(1, 41))
    assert session.state.context.compactions
    kept = session.conversation.messages
    session_id = session.session_id
    await session.aclose()

    loaded = load_session(tmp_path, session_id)
    assert loaded.compacted_from and loaded.messages == kept
    markers = [m for m in loaded.markers if m.type == "compact"]
    assert markers and markers[-1].data["messages"] <= len(kept)

    again = scripted(responder(_one_tool_turn, _done))
    resumed = make_session(tmp_path, again, window=WINDOW)
    await resumed.resume(session_id)
    await _run_turns(resumed, range(41, 42))
    first = again.requests[0].messages
    assert is_summary(first[0])
    assert first[: len(kept)] == kept
    assert len(first) == len(kept) + 1  # the summary, the tail, the new prompt
    assert not any(is_summary_request(r) for r in again.requests)


async def test_resuming_a_session_larger_than_the_window_compacts_it_first(
    tmp_path: Path,
) -> None:
    with SessionStore.create(tmp_path, "scripted", "scripted-1") as writer:
        for n in range(60):
            writer.append(Message(role="user", content=[TextBlock(text=f"question {n} " * 300)]))
            writer.append(Message(role="assistant", content=[TextBlock(text=f"answer {n} " * 300)]))
        session_id = writer.id
    model = scripted(responder(lambda r, p: reply("ok")))
    session = make_session(tmp_path, model, window=20_000)
    await session.resume(session_id)
    events = await collect(session.run("continue"))
    pre = [e for e in events if isinstance(e, PreCompact)]
    post = [e for e in events if isinstance(e, PostCompact)]
    assert [e.trigger for e in pre] == ["resume"] and post[0].ok
    assert is_summary_request(model.requests[0])
    check_well_formed(model.requests[0].messages)
    assert wire_tokens(model.requests[0]) < 20_000
    assert "left out" in model.requests[0].messages[0].text  # the oldest did not fit
    turn = model.requests[1]
    assert is_summary(turn.messages[0]) and wire_tokens(turn) < 20_000 * 0.8


async def test_a_resumed_session_idle_for_hours_gets_a_note(tmp_path: Path) -> None:
    model = scripted(responder(lambda r, p: reply("ok")))
    session = make_session(tmp_path, model)
    await collect(session.run("first"))
    session_id = session.session_id
    await session.aclose()
    conversation = tmp_path / ".mewcode" / "sessions" / session_id / "conversation.jsonl"
    seven_hours_ago = time.time() - 7 * 3600
    os.utime(conversation, (seven_hours_ago, seven_hours_ago))

    resumed = make_session(tmp_path, model)
    await resumed.resume(session_id)
    await collect(resumed.run("second"))
    await collect(resumed.run("third"))
    second, third = model.requests[-2], model.requests[-1]
    assert "resumed after 7 hours" in second.messages[-1].content[0].text
    assert "resumed after" not in third.messages[-1].content[0].text


async def test_a_summary_request_never_leaves_a_tool_call_dangling(tmp_path: Path) -> None:
    # one long turn of many tool rounds: the cut falls inside it, never between
    # a call and its result
    rounds = iter(range(1, 1_000))

    def keep_calling(request: ModelRequest, prompt: str):
        n = next(rounds)
        return reply(tool_call("big", {"n": n}, id=f"r{n}"))

    def more(request: ModelRequest):
        n = next(rounds)
        return reply("Finished.") if n > 40 else reply(tool_call("big", {"n": n}, id=f"r{n}"))

    model = scripted(responder(keep_calling, more))
    session = make_session(tmp_path, model, window=WINDOW)
    events = await collect(session.run("one long task", max_turns=60))
    assert events[-1].reason == "end_turn"
    summaries = [r for r in model.requests if is_summary_request(r)]
    assert summaries
    for request in model.requests:
        check_well_formed(request.messages)
        assert wire_tokens(request) < WINDOW
    last = model.requests[-1].messages
    assert is_summary(last[0]) and last[1].role == "assistant"  # cut inside the turn
    results = [b for m in last for b in m.content if isinstance(b, ToolResultBlock)]
    assert results[-1].tool_use_id == "r40"
