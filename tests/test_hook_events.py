"""Every hook event MewCode fires, fired for real in a session (real shell
hooks from the user's ``~/.claude/settings.json``, real subagents and
background tasks, a real file change) and its payload checked against the
keys Claude Code's hooks reference documents for it (pinned below).

Documented keys, from Claude Code's hooks reference (code.claude.com/docs/en/hooks,
the "Hook input" section of each event), as of its 2026 releases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import ProviderSettings, load_config
from mewcode_kernel.core.context import ContextPolicy
from mewcode_kernel.core.errors import ProviderError
from mewcode_kernel.core.hooks import HookEngine
from mewcode_kernel.core.lifecycle import HOOK_EVENTS, NEVER_FIRING
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.subagents import subagent_toolset
from mewcode_kernel.core.tools import ToolRegistry, builtin_tools
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call
from tests._context import SUMMARY, is_summary_request

#: every payload carries these
COMMON = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}
#: each event's own keys in Claude Code's reference
DOCUMENTED: dict[str, set[str]] = {
    "SessionStart": {"source", "model"},
    "UserPromptSubmit": {"prompt"},
    "PreToolUse": {"tool_name", "tool_input", "tool_use_id"},
    "PermissionRequest": {"tool_name", "tool_input", "permission_suggestions"},
    "PermissionDenied": {"tool_name", "tool_input", "tool_use_id", "reason"},
    "PostToolUse": {"tool_name", "tool_input", "tool_response", "tool_use_id"},
    "PostToolUseFailure": {"tool_name", "tool_input", "tool_use_id", "error", "is_interrupt"},
    "Notification": {"message", "title", "notification_type"},
    "SubagentStart": {"agent_id", "agent_type"},
    "SubagentStop": {
        "stop_hook_active",
        "agent_id",
        "agent_type",
        "agent_transcript_path",
        "last_assistant_message",
    },
    "Stop": {"stop_hook_active", "last_assistant_message"},
    "StopFailure": {"error", "error_details", "last_assistant_message"},
    "PreCompact": {"trigger", "custom_instructions"},
    "PostCompact": {"trigger", "compact_summary"},
    "InstructionsLoaded": {"file_path", "memory_type", "load_reason"},
    "ConfigChange": {"source", "file_path"},
    "FileChanged": {"file_path", "event"},
    "TaskCreated": {"task_id", "task_subject", "task_description"},
    "TaskCompleted": {"task_id", "task_subject", "task_description"},
    "SessionEnd": {"reason"},
}
#: MewCode's own events (the reference design's), not Claude Code's
MEWCODE_ONLY = {"SessionResume", "PreUserMessage"}


def test_the_table_covers_every_event() -> None:
    assert set(DOCUMENTED) | MEWCODE_ONLY == set(HOOK_EVENTS)
    assert not NEVER_FIRING & set(HOOK_EVENTS)


def _answer(request: ModelRequest) -> Any:
    if is_summary_request(request):
        return reply(SUMMARY)
    last = request.messages[-1]
    if "as a subagent of MewCode" in request.system:
        return reply("child done")
    if last.tool_results:
        return reply("ok")
    text = last.text
    if "please write" in text:
        return reply(tool_call("write_file", {"path": "out.txt", "content": "x"}))
    if "read the missing" in text:
        return reply(tool_call("read_file", {"path": "missing.txt"}))
    if "delegate" in text:
        args = {"description": "look", "prompt": "look around", "subagent_type": "general-purpose"}
        return reply(tool_call("Agent", args))
    if "in the background" in text:
        args = {
            "description": "audit deps", "prompt": "audit the dependencies",
            "subagent_type": "general-purpose", "run_in_background": True,
        }  # fmt: skip
        return reply(tool_call("Agent", args))
    if "fail now" in text:
        return reply(fail=ProviderError("too many requests", status=429))
    return reply("Fine.")


def _user_hooks(home: Path, log: Path, events: list[str], matcher: dict[str, str]) -> None:
    hooks = {
        event: [
            {
                **({"matcher": matcher[event]} if event in matcher else {}),
                "hooks": [{"type": "command", "command": f"cat >> {log}"}],
            }
        ]
        for event in events
    }
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def _session(root: Path, home: Path, model: Any, **kw: Any) -> AgentSession:
    settings = ProviderSettings(
        name="scripted", protocol="anthropic", model="scripted-1", context_window=200_000
    )
    tools = ToolRegistry(builtin_tools())
    s = AgentSession(
        root,
        config=load_config(root, home=home, env={}),
        provider=model,
        settings=settings,
        home=home,
        tools=tools,
        context_policy=ContextPolicy(keep_recent=0.0001),
        **kw,
    )
    tools.add_toolset_now(s.skills)
    tools.add_toolset_now(subagent_toolset(s.subagents))
    s.use_hooks(
        HookEngine(
            root,
            home=home,
            sandbox=lambda: s.safety.sandbox,
            tools=lambda n: s.tools.get(n),
            workspace=lambda: s.workspace,
        )
    )
    return s


def _logged(log: Path) -> dict[str, list[dict[str, Any]]]:
    seen: dict[str, list[dict[str, Any]]] = {}
    for line in log.read_text().splitlines():
        if line.strip():
            payload = json.loads(line)
            seen.setdefault(payload["hook_event_name"], []).append(payload)
    return seen


async def test_every_event_fires_with_claude_codes_payload_keys(tmp_path: Path) -> None:
    root, home = tmp_path / "p", tmp_path / "home"
    root.mkdir()
    (root / "CLAUDE.md").write_text("Be brief.\n")
    log = root / "events.log"
    _user_hooks(home, log, list(DOCUMENTED), {"FileChanged": ".envrc"})

    async def says_no(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(allow=False)

    s = _session(root, home, ScriptedModel([_answer] * 60), approval_handler=says_no)
    await collect(s.run("please write out.txt"))  # PermissionRequest, Notification, denied
    await collect(s.run("read the missing file"))  # PostToolUseFailure
    await collect(s.run("delegate this"))  # SubagentStart / SubagentStop
    await collect(s.run("run it in the background"))  # TaskCreated / TaskCompleted
    await s.tasks.wait(timeout=30)
    (root / ".envrc").write_text("export A=1\n")  # FileChanged before the next turn
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    (home / ".claude" / "settings.json").write_text(json.dumps({**settings, "model": "x"}))
    await collect(s.run("anything new?"))  # ConfigChange, FileChanged
    await collect(s.run("fail now"))  # StopFailure
    await collect(s.compact("keep the decisions"))
    await s.aclose()  # SessionEnd

    seen = _logged(log)
    missing = set(DOCUMENTED) - set(seen)
    assert not missing, f"never fired: {sorted(missing)}"
    for event, keys in DOCUMENTED.items():
        for payload in seen[event]:
            absent = (COMMON | keys) - set(payload)
            assert not absent, f"{event} lacks {sorted(absent)}"

    # a few values, as Claude Code gives them
    assert seen["SessionStart"][0]["source"] == "startup"
    assert seen["SessionStart"][0]["model"] == "scripted-1"
    assert seen["PermissionRequest"][0]["tool_name"] == "Write"  # Claude Code's name
    [denied] = seen["PermissionDenied"]
    assert denied["tool_name"] == "Write" and "denied" in denied["reason"]
    assert seen["PostToolUseFailure"][0]["tool_name"] == "Read"
    assert "missing.txt" in seen["PostToolUseFailure"][0]["error"]
    assert {p["notification_type"] for p in seen["Notification"]} >= {"permission_prompt"}
    start, stop = seen["SubagentStart"][0], seen["SubagentStop"][0]
    assert start["agent_type"] == stop["agent_type"] == "general-purpose"
    assert start["agent_id"] == stop["agent_id"]
    assert stop["last_assistant_message"] == "child done"
    transcript = stop["agent_transcript_path"]
    assert transcript.endswith(f"/subagents/{stop['agent_id']}.jsonl")
    assert all("agent_id" not in p for p in seen["Stop"])  # the session's own Stop
    [created] = seen["TaskCreated"]
    assert created["task_subject"] == "audit deps"
    assert created["task_description"] == "audit the dependencies"
    assert seen["TaskCompleted"][0]["task_id"] == created["task_id"]
    assert seen["StopFailure"][0]["error"] == "rate_limit"
    [changed] = seen["FileChanged"]
    assert changed["file_path"] == str(root / ".envrc") and changed["event"] == "add"
    config = [p for p in seen["ConfigChange"] if p["source"] == "user_settings"]
    assert config and config[0]["file_path"] == str(home / ".claude" / "settings.json")
    loaded = seen["InstructionsLoaded"]
    assert any(
        p["file_path"].endswith("CLAUDE.md") and p["memory_type"] == "Project" for p in loaded
    )
    assert loaded[0]["load_reason"] == "session_start"
    assert seen["PreCompact"][0]["custom_instructions"] == "keep the decisions"
    assert seen["PostCompact"][0]["compact_summary"]


@pytest.mark.parametrize("event", sorted(NEVER_FIRING))
def test_events_mewcode_cannot_fire_load_and_are_reported(tmp_path: Path, event: str) -> None:
    from mewcode_kernel.core.hooks import load_hooks

    home = tmp_path / "home"
    _user_hooks(home, tmp_path / "log", [event, "Bogus", "PreToolUse"], {})
    hooks = load_hooks(tmp_path / "p", home=home)
    assert [r.event for r in hooks.rules] == ["PreToolUse"]  # the rest still loads
    assert hooks.never == [
        f"~/.claude/settings.json: {event} hooks load, but MewCode never fires {event}"
    ]
    [problem] = hooks.problems
    assert (
        str(problem) == "~/.claude/settings.json: hook Bogus: MewCode has no Bogus event; skipped"
    )
