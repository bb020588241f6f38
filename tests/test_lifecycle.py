"""Lifecycle events through one dispatcher: what a dispatcher does reaches the
model (a blocked call, a rewritten input, added context, a blocked prompt),
and all eleven events fire, in order, with their payloads, in a session that
compacts, resumes and is interrupted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import ProviderSettings, ResolvedConfig
from mewcode_kernel.core.context import ContextPolicy
from mewcode_kernel.core.events import ModelEvent, Notice, TurnDone
from mewcode_kernel.core.lifecycle import HOOK_EVENTS, HookEvent, HookOutcome
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call
from tests._context import SUMMARY, is_summary_request

Answer = Callable[[Mapping[str, Any]], HookOutcome]


class Recorder:
    """A dispatcher that records every event and answers from ``answers``."""

    def __init__(self, answers: dict[str, Answer] | None = None) -> None:
        self.answers = answers or {}
        self.seen: list[tuple[HookEvent, dict[str, Any]]] = []
        self.resets = 0

    async def dispatch(self, event: HookEvent, payload: Mapping[str, Any]) -> HookOutcome:
        self.seen.append((event, dict(payload)))
        answer = self.answers.get(event)
        return answer(payload) if answer is not None else HookOutcome()

    def reset(self) -> None:
        self.resets += 1

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.seen]


def session(root: Path, model: Any, hooks: Recorder, **kw: Any) -> AgentSession:
    settings = ProviderSettings(
        name="scripted", protocol="anthropic", model="scripted-1", context_window=200_000
    )
    return AgentSession(
        root,
        config=ResolvedConfig(root=root),
        provider=model,
        settings=settings,
        home=root / "home",
        hooks=hooks,
        context_policy=ContextPolicy(keep_recent=0.0001),  # /compact keeps only the last turn
        **kw,
    )


def _policy(payload: Mapping[str, Any]) -> HookOutcome:
    command = payload["tool_input"].get("command", "")
    if payload["tool_name"] == "bash" and command.startswith("rm "):
        return HookOutcome(blocked=True, reason="deleting files is not allowed", by="policy")
    if payload["tool_name"] == "write_file":
        return HookOutcome(updated_input={**payload["tool_input"], "path": "drafts/notes.txt"})
    return HookOutcome()


async def test_a_dispatcher_blocks_rewrites_and_adds_context(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(tool_call("bash", {"command": "rm -rf build"})),
            reply(tool_call("write_file", {"path": "notes.txt", "content": "hello"})),
            reply("Done."),
        ]
    )
    hooks = Recorder(
        {
            "UserPromptSubmit": lambda p: HookOutcome(context=("Current ticket: MEW-42",)),
            "PreToolUse": _policy,
            "PostToolUse": lambda p: HookOutcome(context=(f"lint ok after {p['tool_name']}",)),
        }
    )
    s = session(tmp_path, model, hooks, mode="acceptEdits")
    await collect(s.run("Clean up and write the notes."))

    first = model.requests[0].messages[-1].text
    assert "Current ticket: MEW-42" in first and "<system-reminder>" in first
    blocked = model.requests[1].messages[-1].tool_results[0]
    assert blocked.is_error and blocked.content == "[hook policy] deleting files is not allowed"
    written = model.requests[2].messages[-1]
    assert written.tool_results[0].content.startswith("Created drafts/notes.txt")
    assert "lint ok after write_file" in written.text  # PostToolUse context rode along
    assert (tmp_path / "drafts" / "notes.txt").read_text() == "hello"
    assert not (tmp_path / "notes.txt").exists()
    # a blocked call never reached the permission check
    names = hooks.names
    assert names.count("PreToolUse") == 2 and names.count("PostToolUse") == 1


async def test_a_blocked_prompt_is_never_sent(tmp_path: Path) -> None:
    model = ScriptedModel([])
    hooks = Recorder(
        {"UserPromptSubmit": lambda p: HookOutcome(blocked=True, reason="no secrets", by="guard")}
    )
    s = session(tmp_path, model, hooks)
    events = await collect(s.run("my password is hunter2"))
    assert model.requests == []
    done = events[-1]
    assert isinstance(done, TurnDone) and done.reason == "blocked" and done.error == "no secrets"
    assert any(isinstance(e, Notice) and "blocked by hook guard" in e.message for e in events)
    assert "hunter2" not in s.conversation.messages.__repr__()


class Stalling:
    """The scripted model, except that a prompt saying ``stall`` never answers."""

    def __init__(self, model: ScriptedModel) -> None:
        self.inner = model
        self.stalled = asyncio.Event()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if "stall" in request.messages[-1].text:
            self.stalled.set()
            await asyncio.Event().wait()
        async for event in self.inner.stream(request):
            yield event


def _answer(request: ModelRequest):  # type: ignore[no-untyped-def]
    if is_summary_request(request):
        return reply(SUMMARY)
    last = request.messages[-1]
    if last.tool_results:
        return reply("Wrote it.")
    if "write" in last.text:
        return reply(tool_call("write_file", {"path": "out.txt", "content": "x"}))
    return reply("Fine.")


async def test_all_eleven_events_fire_in_order(tmp_path: Path) -> None:
    hooks = Recorder()
    model = Stalling(ScriptedModel([_answer] * 20))

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(allow=True)

    earlier = session(tmp_path, ScriptedModel([reply("Earlier.")]), Recorder())
    await collect(earlier.run("an earlier session"))
    earlier_id = earlier.session_id
    await earlier.aclose()

    s = session(tmp_path, model, hooks, approval_handler=approve)
    await collect(s.run("please write out.txt"))
    first_id = s.session_id
    for n in range(3):  # enough history to summarise
        await collect(s.run(f"question {n}"))
    await collect(s.compact())
    await s.resume(earlier_id)  # type: ignore[arg-type]
    turn = asyncio.ensure_future(collect(s.run("now stall")))
    await asyncio.wait_for(model.stalled.wait(), 5)
    turn.cancel()
    await asyncio.gather(turn, return_exceptions=True)
    await s.aclose()

    names = hooks.names
    # the original eleven, and the approval's PermissionRequest; the other
    # events need a subagent, a failure or a file change (tests/test_hook_events.py)
    assert set(names) == set(HOOK_EVENTS[:11]) | {"PermissionRequest"}
    first_turn = [
        "SessionStart", "UserPromptSubmit", "PreUserMessage", "PreToolUse", "PermissionRequest",
        "Notification", "PostToolUse", "PreUserMessage", "Stop",
    ]  # fmt: skip
    assert names[: len(first_turn)] == first_turn
    tail = names[names.index("PreCompact") :]
    assert tail == [
        "PreCompact", "PostCompact",
        "SessionEnd", "SessionResume",
        "UserPromptSubmit", "PreUserMessage",  # interrupted: no Stop
        "SessionEnd",
    ]  # fmt: skip
    assert names.count("Stop") == 4 and hooks.resets == 1

    payloads = {name: payload for name, payload in hooks.seen}
    for name, payload in hooks.seen:
        assert payload["event"] == payload["hook_event_name"] == name
        assert payload["session_id"], f"{name} has no session_id"
        assert payload["cwd"] == str(tmp_path) and payload["permission_mode"] == "default"
    assert hooks.seen[0][1]["session_id"] == first_id
    assert payloads["SessionResume"]["session_id"] == earlier_id
    assert payloads["SessionStart"]["source"] == "startup"
    assert payloads["UserPromptSubmit"]["prompt"] == "now stall"
    pre = next(p for n, p in hooks.seen if n == "PreToolUse")
    assert pre["tool_name"] == "write_file" and pre["tool_input"]["path"] == "out.txt"
    post = next(p for n, p in hooks.seen if n == "PostToolUse")
    assert post["tool_use_id"] == pre["tool_use_id"] and not post["is_error"]
    assert post["tool_response"].startswith("Created out.txt")
    assert payloads["Notification"]["kind"] == "permission_prompt"
    assert payloads["PostCompact"]["trigger"] == "manual"
    assert payloads["PostCompact"]["before_tokens"] > payloads["PostCompact"]["after_tokens"]
    assert payloads["SessionEnd"]["reason"] == "exit"
    stop = next(p for n, p in hooks.seen if n == "Stop")
    assert stop["last_assistant_message"] == "Wrote it." and stop["stop_hook_active"] is False
