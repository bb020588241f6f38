"""Every real Claude Code settings file in the shared fixtures is accepted, or
its bad rules are reported with the file and the rule text; broken files are
reported, never raised."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import (
    Gate,
    RuleSet,
    load_claude_settings,
    load_project_settings,
)
from mewcode_kernel.core.tools import RunContext, Tool, bash
from tests._fixtures import FIXTURES, committed

CONFIGS = FIXTURES / "configs"
SETTINGS = sorted(CONFIGS.rglob("settings*.json")) if CONFIGS.is_dir() else []


def _entries(path: Path) -> list[object]:
    data = json.loads(path.read_text(encoding="utf-8"))
    block = data.get("permissions") or {}
    return [e for key in ("allow", "ask", "deny") for e in block.get(key) or []]


@pytest.mark.parametrize("path", SETTINGS, ids=lambda p: str(p.relative_to(CONFIGS)))
def test_settings_file_is_accepted_or_reported(path: Path) -> None:
    loaded = load_claude_settings(path, project_root=path.parent.parent)
    errors = [p for p in loaded.problems if p.severity == "error"]
    assert len(loaded.rules) + len(errors) == len(_entries(path))
    for problem in loaded.problems:
        message = str(problem)
        assert str(path) in message
        if problem.text:
            assert problem.text in message
    assert all(r.source.path == path for r in loaded.rules)


async def _decide(gate: Gate, tool: Tool, args: dict[str, object], root: Path) -> str:
    call = ToolUseBlock(id="c1", name=tool.name, input=args)
    return (await gate.check(call, tool, RunContext(root=root))).outcome


async def _never(ctx: RunContext, args: dict[str, object]) -> str:
    raise AssertionError


BASH = bash
SKILL = Tool(
    name="load_skill", description="", input_schema={}, read_only=False, kind="other",
    run=_never, family="skill", rule_names=frozenset({"Skill"}), subject_arg="name",
)  # fmt: skip


def _settings_of(repo: str) -> Path:
    """The committed settings file of ``repo`` (a missing one fails the test)."""
    found = [p for p in SETTINGS if p.relative_to(CONFIGS).parts[0] == repo]
    return found[0] if found else committed(CONFIGS / repo / "settings.json")


def _gate_for(repo: str, tmp_path: Path) -> Gate:
    path = _settings_of(repo)
    loaded = load_claude_settings(path, project_root=tmp_path)
    return Gate(rules=RuleSet(loaded.rules))


async def test_pydantic_ai_rules_behave(tmp_path: Path) -> None:
    gate = _gate_for("pydantic__pydantic-ai", tmp_path)
    assert await _decide(gate, BASH, {"command": "uv run pyright src"}, tmp_path) == "allow"
    assert (
        await _decide(gate, BASH, {"command": "git log --oneline -5 && git status"}, tmp_path)
        == "allow"
    )
    cmd = "PYRIGHT_PYTHON_IGNORE_WARNINGS=1 uv run pyright pydantic_ai"
    assert await _decide(gate, BASH, {"command": cmd}, tmp_path) == "allow"
    assert await _decide(gate, BASH, {"command": "git log; rm -rf build"}, tmp_path) == "ask"
    assert await _decide(gate, BASH, {"command": "make $(curl -s x.example)"}, tmp_path) == "ask"


async def test_getsentry_rules_behave(tmp_path: Path) -> None:
    gate = _gate_for("getsentry__skills", tmp_path)
    assert any(r.tool == "WebFetch" for r in gate.rules)  # kept, harmless
    assert await _decide(gate, BASH, {"command": "gh pr view 12 --json title"}, tmp_path) == "allow"
    assert await _decide(gate, BASH, {"command": "gh pr merge 12"}, tmp_path) == "ask"
    assert await _decide(gate, SKILL, {"name": "commit"}, tmp_path) == "allow"
    assert await _decide(gate, SKILL, {"name": "deploy"}, tmp_path) == "ask"


async def test_voltagent_loop_fragments_are_understood(tmp_path: Path) -> None:
    gate = _gate_for("VoltAgent__awesome-claude-code-subagents", tmp_path)
    loop = 'for file in *.md; do grep -l "## Communication Protocol" "$file"; done'
    assert await _decide(gate, BASH, {"command": loop}, tmp_path) == "allow"
    assert await _decide(gate, BASH, {"command": "for f in *; do rm $f; done"}, tmp_path) == "ask"


def test_cookbook_settings_with_hooks_and_schema(tmp_path: Path) -> None:
    path = _settings_of("anthropics__claude-cookbooks")
    loaded = load_claude_settings(path, project_root=tmp_path)
    assert len(loaded.rules) == 0 and loaded.problems == []


def test_broken_files_are_reported_with_file_and_rule(tmp_path: Path) -> None:
    claude = tmp_path / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text('{"permissions": {"allow": ["Bash(ls:*)",\n  ]}}')
    (claude / "settings.local.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "allow": ["Bash(npm test)", "Bash(", 7, "Read({oops)", "Foo*"],
                    "deny": "Read(./secrets/**)",
                    "ask": {"not": "a list"},
                    "defaultMode": "yolo",
                    "additionalDirectories": ["../shared-lib"],
                    "somethingNew": True,
                }
            }
        )
    )
    loaded = load_project_settings(tmp_path)
    messages = [str(p) for p in loaded.problems]
    shared = str(claude / "settings.json")
    assert any(shared in m and "invalid JSON" in m for m in messages)
    local = str(claude / "settings.local.json")
    for text in ("Bash(", "7", "Read({oops)", "Foo*"):
        assert any(local in m and repr(text) in m for m in messages), text
    assert any("permissions.ask must be a list" in m for m in messages)
    assert any("defaultMode" in m for m in messages)
    assert any("somethingNew" in m for m in messages)
    assert any("additional directory does not exist" in m for m in messages)
    assert sorted(r.text for r in loaded.rules) == ["Bash(npm test)", "Read(./secrets/**)"]
    assert loaded.default_mode is None
    assert loaded.additional_dirs == [tmp_path / "../shared-lib"]


def test_not_an_object_and_wrong_permissions_type(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    a.write_text("[1, 2]")
    b = tmp_path / "b.json"
    b.write_text('{"permissions": ["Bash"]}')
    assert "not a JSON object" in str(load_claude_settings(a, project_root=tmp_path).problems[0])
    assert "must be an object" in str(load_claude_settings(b, project_root=tmp_path).problems[0])
