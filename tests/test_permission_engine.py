"""The permission engine's parts: matcher, command analysis, rules, the gate
(remember, save, modes, plan-mode tools, audit) and the loop end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from mewcode_kernel.core.agent import Agent
from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.events import PermissionDecided
from mewcode_kernel.core.fs import Workspace, suspicious_name
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import (
    SESSION,
    ApprovalAnswer,
    ApprovalRequest,
    AuditRecord,
    Gate,
    MatcherError,
    RuleSet,
    RuleSource,
    analyze,
    compile_match_spec,
    compile_matcher,
    load_local_settings,
    parse_rule,
    redact,
)
from mewcode_kernel.core.tools import RunContext, ToolRegistry, tool
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

# ---- matcher ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "style", "value", "expected"),
    [
        ("=git status", "text", "git status", True),
        ("=git status", "text", "git status -s", False),
        ("~^git (status|log)\\b", "text", "git log -5", True),
        ("~^git (status|log)\\b", "text", "git logs", False),
        ("!~^rm", "text", "ls", True),
        ("!~^rm", "text", "rm x", False),
        ("src/**/*.py", "path", "src/a/b/c.py", True),
        ("src/**/*.py", "path", "src/c.py", True),
        ("src/*.py", "path", "src/a/c.py", False),
        ("*.{ts,tsx}", "path", "app.tsx", True),
        ("file[0-9].txt", "path", "file7.txt", True),
        ("mcp__*", "text", "mcp__srv__tool", True),
        ("Edit|Write", "text", "Edit", False),
        ("npm run test:*", "command", "npm run test --watch", True),
        ("npm run test:*", "command", "npm run tests", False),
        ("git diff *", "command", "git diff", True),
        ("ls*", "command", "lsof", True),
    ],
)
def test_compile_matcher(pattern: str, style: Any, value: str, expected: bool) -> None:
    assert compile_matcher(pattern, style=style).matches(value) is expected


def test_hook_match_specs_reuse_the_matcher() -> None:
    assert compile_match_spec({"type": "exact", "value": "Bash"}).matches("Bash")
    assert compile_match_spec({"type": "regex", "value": "Edit|Write"}).matches("Write")
    assert compile_match_spec({"type": "glob", "value": "*.py"}).matches("a.py")
    spec = {"type": "not", "inner": {"type": "regex", "value": "^git "}}
    assert compile_match_spec(spec).matches("rm -rf x")
    assert not compile_match_spec(spec).matches("git status")
    for bad in ({"type": "regex", "value": "("}, {"type": "weird", "value": "x"}, {"type": "not"}):
        with pytest.raises(MatcherError):
            compile_match_spec(bad)


# ---- command analysis ------------------------------------------------------------------


def test_analyze_splits_and_strips() -> None:
    a = analyze("timeout 9 env A=1 npm test && echo 'a && b' | grep -v x; git status &\nls")
    assert [p.text for p in a.parts] == [
        "npm test",
        "echo 'a && b'",
        "grep -v x",
        "git status",
        "ls",
    ]
    assert a.parts[1].pipeline == a.parts[2].pipeline != a.parts[3].pipeline
    assert a.opaque == ()


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("echo $(id)", "command substitution"),
        ("echo `id`", "command substitution"),
        ("diff <(ls a) <(ls b)", "process substitution"),
        ("(cd x && make)", "subshell"),
        ("eval ls", "eval"),
        ("sh -c 'ls'", "sh -c"),
        ("python3 -c 'print(1)'", "inline code"),
        ("$CMD --x", "program name"),
        ("echo $'\\x41'", "ANSI-C"),
        ("echo $((1+2))", "arithmetic"),
    ],
)
def test_analyze_flags_opaque_constructs(command: str, reason: str) -> None:
    assert any(reason in r for r in analyze(command).opaque), analyze(command).opaque


def test_analyze_reports_unreadable_text() -> None:
    assert analyze("echo 'unterminated").unreadable
    assert analyze("cat <<EOF\nno end").unreadable
    assert not analyze("cat <<'EOF'\n$(not run)\nEOF").opaque


def test_suspicious_names() -> None:
    assert suspicious_name("src") is None and suspicious_name("café") is None
    assert "look-alike" in (suspicious_name("ｓrc") or "")
    assert "normal form" in (suspicious_name("cafe\u0301") or "")
    assert "mixes" in (suspicious_name("s\u0435crets") or "")
    assert "invisible" in (suspicious_name("a\u200bb") or "")


def test_sandbox_resolution(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (root / "up").symlink_to(tmp_path / "other")
    box = Workspace(root, home=str(tmp_path))
    assert box.resolve("a/../a/x").rel == "a/x"
    assert box.resolve("up/x").path == str((tmp_path / "other" / "x").resolve())
    assert not box.resolve("up/x").inside
    assert box.resolve(str(root) + "_evil/x").root is None
    assert box.resolve("~/root/a").rel == "a"


# ---- rules ------------------------------------------------------------------------------


def test_rule_parsing_and_problems() -> None:
    rules = RuleSet()
    src = RuleSource(label="x.yaml")
    assert rules.add_text("Bash(npm run test:*)", "allow", src) is not None
    assert rules.add_text("mcp__github__*", "allow", src) is not None
    assert rules.add_text("Agent(Explore)", "deny", src) is not None
    assert rules.add_text("Bash()", "allow", src) is None
    assert rules.add_text("Read(~[)", "deny", src) is None
    assert [str(p) for p in rules.problems] == [
        "x.yaml: permission rule 'Bash()' skipped: empty specifier; write Bash alone to cover every call",
        "x.yaml: permission rule 'Read(~[)' skipped: bad regular expression '[': unterminated character set at position 0; calls of Read will ask until it is fixed (a deny rule fails closed)",
    ]
    assert parse_rule("Bash(*)", "allow", src).specifier is None
    tool_a, tool_b = "mcp__github__create_issue", "mcp__githubx__a"
    assert parse_rule("mcp__github", "allow", src).covers(tool_a, frozenset({tool_a}))
    assert not parse_rule("mcp__github", "allow", src).covers(tool_b, frozenset({tool_b}))


# ---- the gate ---------------------------------------------------------------------------


async def _never(ctx: RunContext, args: dict[str, Any]) -> str:
    raise AssertionError


@tool(
    read_only=False,
    kind="exec",
    family="command",
    rule_names=frozenset({"Bash"}),
    subject_arg="command",
)
async def bash(ctx: RunContext, command: str) -> str:
    """Run a command (recorded, never executed)."""
    RAN.append(command)
    return "ran"


@tool(
    read_only=False,
    kind="edit",
    path_args=("path",),
    family="edit",
    rule_names=frozenset({"Edit", "Write"}),
)
async def write_file(ctx: RunContext, path: str, content: str) -> str:
    """Write a file."""
    target = ctx.root / path
    target.write_text(content)
    return f"wrote {path}"


@tool(
    read_only=True, kind="read", path_args=("path",), family="read", rule_names=frozenset({"Read"})
)
async def read_file(ctx: RunContext, path: str) -> str:
    """Read a file."""
    return (ctx.root / path).read_text()


RAN: list[str] = []


_IDS = iter(range(1_000_000))


def _call(name: str, **args: Any) -> ToolUseBlock:
    return ToolUseBlock(id=f"call-{next(_IDS)}", name=name, input=args)


async def test_remember_adds_exact_session_rules(tmp_path: Path) -> None:
    gate = Gate()
    ctx = RunContext(root=tmp_path)
    call = _call("bash", command="npm test && npm run lint")
    assert (await gate.check(call, bash, ctx)).outcome == "ask"
    gate.remember(call, bash)
    assert [r.text for r in gate.session_rules()] == ["Bash(npm test)", "Bash(npm run lint)"]
    assert (await gate.check(_call("bash", command="npm run lint"), bash, ctx)).outcome == "allow"
    assert (await gate.check(_call("bash", command="npm test --x"), bash, ctx)).outcome == "ask"
    odd = _call("bash", command="echo $(date) > out.txt")
    await gate.check(odd, bash, ctx)
    gate.remember(odd, bash)
    assert gate.session_rules()[-1].text == "Bash(=echo $(date) > out.txt)"
    assert (await gate.check(odd, bash, ctx)).outcome == "allow"
    edit = _call("write_file", path="src/app.py", content="x")
    await gate.check(edit, write_file, ctx)
    gate.remember(edit, write_file)
    assert gate.session_rules()[-1].text == "Edit(./src/app.py)"
    assert (await gate.check(edit, write_file, ctx)).outcome == "allow"
    other = _call("write_file", path="src/other.py", content="x")
    assert (await gate.check(other, write_file, ctx)).outcome == "ask"


async def test_remember_cannot_open_the_sandbox(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    gate = Gate(mode="bypassPermissions")
    ctx = RunContext(root=root)
    call = _call("write_file", path="../x", content="x")
    assert (await gate.check(call, write_file, ctx)).outcome == "ask"
    gate.remember(call, write_file)
    assert (await gate.check(call, write_file, ctx)).outcome == "ask"


async def test_save_local_rule_writes_yaml_atomically(tmp_path: Path) -> None:
    gate = Gate(root=tmp_path)
    ctx = RunContext(root=tmp_path)
    call = _call("bash", command="make check")
    await gate.check(call, bash, ctx)
    gate.remember(call, bash)
    path = gate.save_local_rule("Bash(make check)")
    gate.save_local_rule("Bash(make check)")
    gate.save_local_rule("Read(//etc/hosts)")
    data = yaml.safe_load(path.read_text())
    assert data == {"permissions": {"allow": ["Bash(make check)", "Read(//etc/hosts)"]}}
    assert (tmp_path / ".mewcode" / ".gitignore").read_text() == "settings.local.yaml\n"
    assert gate.session_rules() == []
    assert [r.source.label for r in gate.list_rules() if r.text == "Bash(make check)"] == [
        str(path)
    ]
    loaded = load_local_settings(tmp_path)
    assert [r.text for r in loaded.rules] == ["Bash(make check)", "Read(//etc/hosts)"]
    assert (await gate.check(call, bash, ctx)).outcome == "allow"
    path.write_text("permissions: [oops")
    with pytest.raises(ValueError, match="not valid YAML"):
        gate.save_local_rule("Bash(ls)")


async def test_derived_gate_shares_rules(tmp_path: Path) -> None:
    gate = Gate()
    ctx = RunContext(root=tmp_path)
    call = _call("bash", command="make lint")
    await gate.check(call, bash, ctx)
    gate.remember(call, bash)
    child = gate.derive(mode="dontAsk")
    assert child.mode == "dontAsk" and gate.mode == "default"
    assert (await child.check(_call("bash", command="make lint"), bash, ctx)).outcome == "allow"
    # dontAsk never asks: what no rule allows is denied (CONTRACTS), never allowed
    assert (await child.check(_call("bash", command="make x"), bash, ctx)).outcome == "deny"
    outside = _call("write_file", path="../x", content="")
    assert (await child.check(outside, write_file, ctx)).outcome == "deny"
    assert len(child.list_rules()) == len(gate.list_rules())


async def test_modes_switch_and_bypass_can_be_disabled(tmp_path: Path) -> None:
    gate = Gate(bypass_disabled=True)
    ctx = RunContext(root=tmp_path)
    call = _call("write_file", path="a.txt", content="x")
    assert (await gate.check(call, write_file, ctx)).outcome == "ask"
    gate.mode = "acceptEdits"
    assert (await gate.check(call, write_file, ctx)).outcome == "allow"
    gate.mode = "plan"
    assert (await gate.check(call, write_file, ctx)).outcome == "deny"
    with pytest.raises(ValueError, match="disabled"):
        gate.mode = "bypassPermissions"
    with pytest.raises(ValueError, match="unknown permission mode"):
        gate.mode = "yolo"
    assert gate.mode == "plan"


def test_offered_tools_in_plan_mode() -> None:
    from mewcode_kernel.core.tools.base import Tool

    mcp_ro = Tool(name="mcp__s__get", description="", input_schema={}, read_only=True, kind="read",
                  run=_never, family="mcp", annotations={"readOnlyHint": True})  # fmt: skip
    mcp_rw = Tool(
        name="mcp__s__set", description="", input_schema={}, read_only=True, kind="read",
        run=_never, family="mcp",
    )  # fmt: skip
    registry = ToolRegistry([read_file, write_file, bash, mcp_ro, mcp_rw])
    gate = Gate(mode="plan")
    assert [t.name for t in gate.offered_tools(registry)] == ["read_file", "mcp__s__get"]
    gate.mode = "default"
    assert len(gate.offered_tools(registry)) == 5


async def test_list_rules_and_for_project(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": ["Bash(npm test)"],
                    "deny": ["Read(./.env)"],
                    "defaultMode": "acceptEdits",
                    "additionalDirectories": ["lib2"],
                }
            }
        )
    )
    (tmp_path / "lib2").mkdir()
    config = ({"ask": ["Bash(git push:*)"]}, RuleSource(label="~/.mewcode/config.yaml"))
    gate = Gate.for_project(tmp_path, config_permissions=[config])
    assert gate.mode == "acceptEdits"
    assert [(r.behavior, r.text, r.source.label) for r in gate.list_rules()] == [
        ("deny", "Read(./.env)", str(tmp_path / ".claude" / "settings.json")),
        ("ask", "Bash(git push:*)", "~/.mewcode/config.yaml"),
        ("allow", "Bash(npm test)", str(tmp_path / ".claude" / "settings.json")),
    ]
    ctx = RunContext(root=tmp_path)
    outside = _call("write_file", path="lib2/x.py", content="")
    assert (await gate.check(outside, write_file, ctx)).outcome == "allow"


async def test_audit_records(tmp_path: Path) -> None:
    seen: list[AuditRecord] = []
    rules = RuleSet()
    rules.add_text("Bash(curl:*)", "deny", RuleSource(label="team.yaml"))
    gate = Gate(rules=rules, on_audit=seen.append)
    secret = "curl -H 'Authorization: Bearer abcdefghijklmnop' https://u:pw@x.example?token=1"
    call = _call("bash", command=secret)
    decision = await gate.check(call, bash, RunContext(root=tmp_path))
    assert decision.outcome == "deny"
    assert decision.decided_by == "deny rule Bash(curl:*) (team.yaml)"
    record = seen[0]
    data = json.loads(record.to_json())
    assert data["tool"] == "bash" and data["outcome"] == "deny" and data["layer"] == "deny-rule"
    assert data["rules"] == [{"rule": "Bash(curl:*)", "source": "team.yaml"}]
    assert "abcdefghijklmnop" not in record.to_json() and ":pw@" not in record.to_json()
    write = _call("write_file", path="a.txt", content="TOP SECRET " * 50)
    await gate.check(write, write_file, RunContext(root=tmp_path))
    assert seen[1].input_summary == "path=a.txt content=<550 chars>"
    assert redact("export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz") == "export GITHUB_TOKEN=***"


# ---- end to end through the agent loop ------------------------------------------------------


def _agent(root: Path, model: ScriptedModel, gate: Gate, **kw: Any) -> Agent:
    tools = ToolRegistry([read_file, write_file, bash])
    return Agent.of(provider=model, tools=tools, ctx=RunContext(root=root), gate=gate, **kw)


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"])
async def test_write_outside_root_is_refused_in_every_mode(tmp_path: Path, mode: str) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    model = ScriptedModel(
        [reply(tool_call("write_file", {"path": "../escape.txt", "content": "x"})), reply("ok")]
    )
    await collect(_agent(root, model, Gate(mode=mode)).run(Conversation(), "go"))  # type: ignore[arg-type]
    assert not (tmp_path / "escape.txt").exists()
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and (
        "outside the project root" in result.content or "plan mode" in result.content
    )


async def test_unapproved_bash_does_not_run_headless(tmp_path: Path) -> None:
    RAN.clear()
    model = ScriptedModel([reply(tool_call("bash", {"command": "make deploy"})), reply("ok")])
    events = await collect(_agent(tmp_path, model, Gate()).run(Conversation(), "go"))
    assert RAN == []
    decided = [e for e in events if isinstance(e, PermissionDecided)]
    assert decided[0].outcome == "ask" and "no rule allows `make deploy`" in decided[0].reason
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "no rule allows" in result.content and "headless" in result.content


async def test_always_allow_through_the_loop(tmp_path: Path) -> None:
    RAN.clear()
    model = ScriptedModel(
        [
            reply(tool_call("bash", {"command": "npm test"})),
            reply(tool_call("bash", {"command": "npm test"})),
            reply("ok"),
        ]
    )
    asked: list[str] = []

    async def always(req: ApprovalRequest) -> ApprovalAnswer:
        asked.append(req.reason)
        return ApprovalAnswer(allow=True, always=True)

    gate = Gate()
    await collect(_agent(tmp_path, model, gate, approval_handler=always).run(Conversation(), "go"))
    assert len(asked) == 1 and RAN == ["npm test", "npm test"]
    assert [r.text for r in gate.rules if r.source == SESSION] == ["Bash(npm test)"]
