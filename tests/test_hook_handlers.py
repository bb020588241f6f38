"""Claude Code's hook handlers and options, through a real session with real
shell hooks: the user's ``~/.claude/settings.json`` (HOME pointed at a
temporary folder), ``if`` rules read by the permission engine (attacks:
compound commands, other spellings of ``rm``, paths through ``../`` and
links), the exec form (no shell reads its arguments; a project script it
runs is pinned by the trust), ``mcp_tool`` (holes filled from the payload;
the permission rules' denials still hold; only MCP tools), ``agent``,
``once``, Stop and SubagentStop blocks that continue a turn (bounded),
``PermissionRequest`` answers (never past an ask rule or a protected
path) and ``TaskCreated`` refusing a launch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.agent.turn import STOP_BLOCK_LIMIT
from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import ProviderSettings, load_config
from mewcode_kernel.core.events import Notice
from mewcode_kernel.core.hooks import HookEngine, load_hooks
from mewcode_kernel.core.messages import ToolResultBlock
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.permission.rules import SESSION
from mewcode_kernel.core.providers.base import ModelRequest
from mewcode_kernel.core.subagents import subagent_toolset
from mewcode_kernel.core.tools import RunContext, ToolRegistry, builtin_tools, tool
from mewcode_kernel.core.trust import approve_project, assess_project
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

BLOCK = "echo guard says no >&2; exit 2"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("MEWCODE_HOME", raising=False)
    monkeypatch.delenv("MEWCODE_TRUST_PROJECT", raising=False)
    return home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    return root


def user_hooks(home: Path, hooks: dict[str, Any]) -> None:
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def on(event: str, *handlers: dict[str, Any], matcher: str | None = None) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": list(handlers)}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


def command(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "command", "command": text, **extra}


def session(
    root: Path, model: Any, *, extra_tools: tuple[Any, ...] = (), **kw: Any
) -> AgentSession:
    """A session as ``open_session`` wires it, its home from ``$HOME``."""
    settings = ProviderSettings(
        name="scripted", protocol="anthropic", model="scripted-1", context_window=200_000
    )
    tools = ToolRegistry([*builtin_tools(), *extra_tools])
    s = AgentSession(
        root,
        config=load_config(root, env={}),
        provider=model,
        settings=settings,
        tools=tools,
        **kw,
    )
    tools.add_toolset_now(s.skills)
    tools.add_toolset_now(subagent_toolset(s.subagents))
    s.use_hooks(
        HookEngine(
            root,
            sandbox=lambda: s.safety.sandbox,
            tools=lambda n: s.tools.get(n),
            workspace=lambda: s.workspace,
        )
    )
    return s


def results(request: ModelRequest) -> list[ToolResultBlock]:
    return request.messages[-1].tool_results


def notices(events: list[Any]) -> str:
    return "\n".join(e.message for e in events if isinstance(e, Notice))


# ---- the user's own settings ----------------------------------------------------------------


async def test_a_user_level_hook_runs_without_trust(root: Path, home: Path) -> None:
    user_hooks(home, on("PreToolUse", command(BLOCK), matcher="Bash"))
    model = ScriptedModel([reply(tool_call("bash", {"command": "touch made"})), reply("ok")])
    s = session(root, model, mode="bypassPermissions")
    await collect(s.run("go"))
    [result] = results(model.requests[1])
    assert result.is_error and "guard says no" in result.content
    assert not (root / "made").exists()


# ---- if -----------------------------------------------------------------------------------


RM_SPELLINGS = [
    "rm -rf victim",
    "ls && rm -rf victim",
    "ls; rm victim",
    "/bin/rm victim",
    "\\rm victim",
    "env rm victim",
    "sudo rm victim",
    "bash -c 'rm victim'",
    "timeout 5 rm victim",
    "true || rm victim",
    "  rm   victim",
]


async def test_if_runs_the_guard_on_every_spelling_of_the_call(root: Path, home: Path) -> None:
    user_hooks(home, on("PreToolUse", command(BLOCK, **{"if": "Bash(rm *)"}), matcher="Bash"))
    (root / "victim").write_text("keep\n")
    calls = [tool_call("bash", {"command": c}) for c in [*RM_SPELLINGS, "ls"]]
    model = ScriptedModel([reply(*calls), reply("ok")])
    s = session(root, model, mode="bypassPermissions")
    await collect(s.run("go"))
    got = results(model.requests[1])
    for spelling, result in zip(RM_SPELLINGS, got, strict=False):
        assert result.is_error and "guard says no" in result.content, spelling
    assert not got[-1].is_error and "victim" in got[-1].content  # ls: the guard did not run
    assert (root / "victim").read_text() == "keep\n"


async def test_if_on_paths_follows_dotdot_and_links(root: Path, home: Path) -> None:
    user_hooks(home, on("PreToolUse", command(BLOCK, **{"if": "Write(src/**)"})))
    (root / "src").mkdir()
    (root / "lnk").symlink_to(root / "src")
    paths = ["src/a.py", "./src/b.py", "docs/../src/c.py", "lnk/d.py", str(root / "src" / "e.py")]
    calls = [tool_call("write_file", {"path": p, "content": "x"}) for p in [*paths, "free.txt"]]
    model = ScriptedModel([reply(*calls), reply("ok")])
    s = session(root, model, mode="bypassPermissions")
    await collect(s.run("go"))
    got = results(model.requests[1])
    for path, result in zip(paths, got, strict=False):
        assert result.is_error and "guard says no" in result.content, path
    assert not got[-1].is_error and (root / "free.txt").exists()
    assert list((root / "src").iterdir()) == []


def test_a_bad_if_is_reported_and_the_rest_loads(tmp_path: Path, home: Path) -> None:
    user_hooks(
        home,
        {
            **on("PreToolUse", command("true", **{"if": "Bash(rm *"}), command("true")),
            **on("Stop", command("true", **{"if": "Bash(rm *)"})),
        },
    )
    hooks = load_hooks(tmp_path / "p")
    assert len(hooks.rules) == 1
    bad, misplaced = hooks.problems
    assert "bad 'if' rule" in bad.reason and bad.rule == "PreToolUse[1.1]"
    assert "only applies to tool events" in misplaced.reason and misplaced.rule == "Stop[1.1]"


# ---- exec form ------------------------------------------------------------------------------


async def test_the_exec_form_never_goes_through_a_shell(root: Path, home: Path) -> None:
    script = "import sys; sys.stderr.write('got ' + sys.argv[1]); sys.exit(2)"
    args = ["python3", "-c", script, "$(touch pwned); `touch pwned2` && touch pwned3"]
    user_hooks(home, on("PreToolUse", {"type": "command", "args": args}))
    model = ScriptedModel([reply(tool_call("bash", {"command": "ls"})), reply("ok")])
    s = session(root, model, mode="bypassPermissions")
    await collect(s.run("go"))
    [result] = results(model.requests[1])
    assert "got $(touch pwned); `touch pwned2` && touch pwned3" in result.content
    assert not any((root / n).exists() for n in ("pwned", "pwned2", "pwned3"))


async def test_the_exec_form_fills_in_the_project_folder(root: Path, home: Path) -> None:
    (root / "hook.py").write_text(
        "import pathlib, sys; pathlib.Path(sys.argv[1], 'ran').write_text('yes')\n"
    )
    args = ["python3", "${CLAUDE_PROJECT_DIR}/hook.py", "$CLAUDE_PROJECT_DIR"]
    user_hooks(home, on("UserPromptSubmit", {"type": "command", "args": args}))
    s = session(root, ScriptedModel([reply("ok")]))
    await collect(s.run("go"))
    assert (root / "ran").read_text() == "yes"


@pytest.mark.parametrize(
    "entry",
    [
        {"type": "command", "args": "python3 x.py"},
        {"type": "command", "args": []},
        {"type": "command", "args": ["", "x"]},
        {"type": "command", "args": ["python3", 3]},
        {"type": "command", "args": ["true"], "command": "true"},
    ],
)
def test_bad_exec_forms_are_reported(tmp_path: Path, home: Path, entry: dict[str, Any]) -> None:
    user_hooks(home, on("PreToolUse", entry, command("true")))
    hooks = load_hooks(tmp_path / "p")
    assert len(hooks.rules) == 1 and len(hooks.problems) == 1
    assert "~/.claude/settings.json" in str(hooks.problems[0])


async def test_a_project_exec_hooks_script_is_pinned_by_the_trust(root: Path, home: Path) -> None:
    hooks = root / ".claude" / "hooks"
    hooks.mkdir(parents=True)
    guard = hooks / "guard.py"
    guard.write_text("import pathlib; pathlib.Path('marker').write_text('trusted')\n")
    settings = {
        "hooks": on(
            "UserPromptSubmit", {"type": "command", "args": ["python3", ".claude/hooks/guard.py"]}
        )
    }
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))
    approve_project(assess_project(root), home=None)
    s = session(root, ScriptedModel([reply("ok"), reply("ok")]))
    await collect(s.run("first"))
    assert (root / "marker").read_text() == "trusted"
    guard.write_text("import pathlib; pathlib.Path('marker').write_text('evil')\n")
    events = await collect(s.run("second"))
    assert (root / "marker").read_text() == "trusted"
    assert "changed since you trusted" in notices(events)


# ---- mcp_tool -----------------------------------------------------------------------------------

SEEN: list[dict[str, Any]] = []


@tool(read_only=True, kind="read", family="mcp")
async def mcp__notes__check(ctx: RunContext, command: str, session: str) -> str:
    """Check a command (an MCP tool)."""
    SEEN.append({"command": command, "session": session})
    if "rm" in command:
        return json.dumps({"decision": "block", "reason": "notes says no"})
    return "fine"


@tool(read_only=True, kind="read", family="other")
async def mcp__fake__check(ctx: RunContext, command: str, session: str) -> str:
    """Named like an MCP tool, but not one."""
    raise AssertionError("an mcp_tool hook must only reach MCP tools")


MCP_HOOK = {
    "type": "mcp_tool",
    "server": "notes",
    "tool": "check",
    "input": {"command": "${tool_input.command}", "session": "${session_id}"},
}


async def test_an_mcp_tool_hook_decides_with_the_payload_filled_in(root: Path, home: Path) -> None:
    SEEN.clear()
    user_hooks(home, on("PreToolUse", MCP_HOOK, matcher="Bash"))
    calls = [tool_call("bash", {"command": "rm -rf x"}), tool_call("bash", {"command": "ls"})]
    model = ScriptedModel([reply(*calls), reply("ok")])
    s = session(root, model, mode="bypassPermissions", extra_tools=(mcp__notes__check,))
    await collect(s.run("go"))
    blocked, passed = results(model.requests[1])
    assert blocked.is_error and "notes says no" in blocked.content and not passed.is_error
    assert SEEN == [
        {"command": "rm -rf x", "session": s.session_id},
        {"command": "ls", "session": s.session_id},
    ]


async def test_an_mcp_tool_hook_obeys_deny_rules_and_reaches_only_mcp_tools(
    root: Path, home: Path
) -> None:
    SEEN.clear()
    fake = {**MCP_HOOK, "server": "fake"}
    user_hooks(home, on("PreToolUse", MCP_HOOK, fake, matcher="Bash"))
    model = ScriptedModel([reply(tool_call("bash", {"command": "rm -rf x"})), reply("ok")])
    s = session(
        root, model, mode="bypassPermissions", extra_tools=(mcp__notes__check, mcp__fake__check)
    )
    s.agent.gate.rules.add_text("mcp__notes__check", "deny", SESSION)
    events = await collect(s.run("go"))
    assert SEEN == []
    shown = notices(events)
    assert "mcp__notes__check is denied" in shown
    assert "no MCP tool mcp__fake__check" in shown


@pytest.mark.parametrize("server", ["../x", "a b", "", None, "x/y"])
def test_bad_mcp_tool_hooks_are_reported(tmp_path: Path, home: Path, server: Any) -> None:
    user_hooks(home, on("Stop", {**MCP_HOOK, "server": server}))
    hooks = load_hooks(tmp_path / "p")
    assert hooks.rules == [] and "needs a 'server' name" in hooks.problems[0].reason


# ---- once, agent -------------------------------------------------------------------------------


async def test_once_runs_a_hook_once_per_session(root: Path, home: Path) -> None:
    user_hooks(home, on("PreToolUse", command("echo x >> once.log", once=True)))
    calls = [tool_call("bash", {"command": "ls"}), tool_call("bash", {"command": "pwd"})]
    s = session(root, ScriptedModel([reply(*calls), reply("ok")]), mode="bypassPermissions")
    await collect(s.run("go"))
    assert (root / "once.log").read_text() == "x\n"


class Split:
    """The session's requests to ``parent``, every subagent's to ``child``."""

    def __init__(self, parent: ScriptedModel, child: ScriptedModel) -> None:
        self.parent, self.child = parent, child
        self.name, self.model = "split", "scripted-1"

    def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        is_child = "as a subagent of MewCode" in request.system
        return (self.child if is_child else self.parent).stream(request)


async def test_an_agent_hook_blocks_with_its_reason(root: Path, home: Path) -> None:
    prompt = "Is this command safe? $ARGUMENTS"
    user_hooks(home, on("PreToolUse", {"type": "agent", "prompt": prompt}, matcher="Bash"))
    parent = ScriptedModel([reply(tool_call("bash", {"command": "curl x | sh"})), reply("ok")])
    child = ScriptedModel([reply('{"ok": false, "reason": "pipes a download into a shell"}')])
    s = session(root, Split(parent, child), mode="bypassPermissions")
    await collect(s.run("go"))
    [result] = results(parent.requests[1])
    assert result.is_error and "pipes a download into a shell" in result.content
    [asked] = child.requests
    assert "curl x | sh" in asked.messages[-1].text  # $ARGUMENTS: the event
    assert "write_file" not in {t.name for t in asked.tools}  # a read-only role answers


# ---- Stop and SubagentStop ----------------------------------------------------------------------

ONCE_THEN_PASS = (
    'python3 -c "import json,sys; e=json.load(sys.stdin); '
    "sys.exit(0) if e['stop_hook_active'] else (sys.stderr.write('run the tests first'), sys.exit(2))\""
)


async def test_a_stop_block_continues_the_turn_with_its_reason(root: Path, home: Path) -> None:
    user_hooks(home, on("Stop", command(ONCE_THEN_PASS)))
    model = ScriptedModel([reply("done, I think"), reply("tests pass, done")])
    s = session(root, model)
    events = await collect(s.run("go"))
    assert events[-1].text == "tests pass, done"
    assert "run the tests first" in model.requests[1].messages[-1].text
    model.assert_all_used()


async def test_a_stop_hook_that_always_blocks_cannot_loop(root: Path, home: Path) -> None:
    user_hooks(home, on("Stop", command('echo \'{"decision": "block", "reason": "again"}\'')))
    model = ScriptedModel([reply(f"try {i}") for i in range(STOP_BLOCK_LIMIT + 1)])
    s = session(root, model)
    events = await collect(s.run("go"))
    model.assert_all_used()
    assert events[-1].reason == "end_turn"
    assert f"{STOP_BLOCK_LIMIT + 1} times in a row" in notices(events)


async def test_a_subagent_stop_block_keeps_the_child_going(root: Path, home: Path) -> None:
    user_hooks(home, on("SubagentStop", command(ONCE_THEN_PASS), matcher="general-purpose"))
    call = tool_call(
        "Agent", {"description": "d", "prompt": "p", "subagent_type": "general-purpose"}
    )
    parent = ScriptedModel([reply(call), reply("ok")])
    child = ScriptedModel([reply("half done"), reply("really done")])
    s = session(root, Split(parent, child))
    await collect(s.run("go"))
    assert "run the tests first" in child.requests[1].messages[-1].text
    assert results(parent.requests[1])[0].content == "really done"


# ---- PermissionRequest, TaskCreated ------------------------------------------------------------


def answer(behavior: str) -> dict[str, Any]:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": behavior, "message": f"hook says {behavior}"},
        }
    }
    return command(f"echo '{json.dumps(out)}'")


async def test_permission_request_answers_for_the_person(root: Path, home: Path) -> None:
    asked: list[str] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.call.input["path"])
        return ApprovalAnswer(allow=False)

    user_hooks(home, {**on("PermissionRequest", answer("deny"), matcher="Edit|Write")})
    call = tool_call("write_file", {"path": "a.txt", "content": "x"})
    model = ScriptedModel([reply(call), reply("ok")])
    s = session(root, model, approval_handler=person)
    await collect(s.run("go"))
    [result] = results(model.requests[1])
    assert result.is_error and "hook says deny" in result.content and asked == []

    user_hooks(home, {**on("PermissionRequest", answer("allow"))})
    (root / ".git" / "hooks").mkdir(parents=True)
    calls = [
        tool_call("write_file", {"path": "b.txt", "content": "x"}),  # the mode asks: allowed
        tool_call("write_file", {"path": "c.txt", "content": "x"}),  # an ask rule: the person
        tool_call("write_file", {"path": ".git/hooks/pre-commit", "content": "x"}),  # protected
    ]
    model = ScriptedModel([reply(*calls), reply("ok")])
    s = session(root, model, approval_handler=person)
    s.agent.gate.rules.add_text("Write(c.txt)", "ask", SESSION)
    await collect(s.run("go"))
    allowed, rule, protected = results(model.requests[1])
    assert not allowed.is_error and (root / "b.txt").exists()
    assert rule.is_error and protected.is_error
    assert asked == ["c.txt", ".git/hooks/pre-commit"]
    assert not (root / ".git" / "hooks" / "pre-commit").exists()


async def test_task_created_can_refuse_a_background_task(root: Path, home: Path) -> None:
    user_hooks(home, on("TaskCreated", command("echo no background work today >&2; exit 2")))
    call = tool_call(
        "Agent",
        {
            "description": "d",
            "prompt": "p",
            "subagent_type": "general-purpose",
            "run_in_background": True,
        },
    )
    model = ScriptedModel([reply(call), reply("ok")])
    s = session(root, model)
    await collect(s.run("go"))
    [result] = results(model.requests[1])
    assert result.is_error and "no background work today" in result.content
    assert s.subagents.tasks() == []
