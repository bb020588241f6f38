"""Hook rules without a kernel: Claude Code hook files published in plugins
(every entry loads or is skipped with its reason), the http body template's
closed set of holes, and durations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mewcode_kernel.core.hooks import BodyTemplate, TemplateError, parse_duration
from mewcode_kernel.core.hooks.claude import claude_rules
from mewcode_kernel.core.hooks.rules import RuleError

PLUGINS = sorted((Path(__file__).parent / "fixtures" / "claude_hooks" / "plugins").glob("*.json"))
UNSUPPORTED = ("is not supported (command, mcp_tool, agent, prompt or http)",)


@pytest.mark.parametrize("path", PLUGINS, ids=lambda p: p.name.removesuffix(".hooks.json"))
def test_published_claude_hooks_load_or_are_skipped_with_a_reason(path: Path) -> None:
    hooks = json.loads(path.read_text())["hooks"]
    rules, problems = claude_rules(hooks, file=path.name, source=path, scope="project")
    entries = sum(len(group["hooks"]) for groups in hooks.values() for group in groups)
    assert len(rules) + len(problems) == entries
    for problem in problems:
        assert str(problem).startswith(f"{path.name}: hook ") and str(problem).endswith("skipped")
        assert any(reason in problem.reason for reason in UNSUPPORTED), problem
    for rule in rules:
        assert rule.claude and rule.timeout > 0
        assert rule.action.type in ("shell", "exec", "subagent", "mcp_tool", "http")
        if rule.action.type == "shell":
            assert rule.action.command


def test_the_tool_matcher_is_a_full_match_on_the_tool_or_its_claude_name() -> None:
    hooks = {
        "PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "x"}]}]
    }
    [rule] = claude_rules(hooks, file="s.json", source=Path("s.json"), scope="project")[0]
    assert rule.pattern is not None and rule.pattern_field == "tool_name"
    assert rule.pattern.fullmatch("Write") and not rule.pattern.fullmatch("WriteMany")


def test_body_templates_fill_holes_from_the_payload_and_nothing_else() -> None:
    payload = {"tool_name": "bash", "tool_input": {"command": 'echo "hi"'}, "is_error": False}
    template = BodyTemplate.parse('{"t": {{json .tool_name}}, "c": {{json .tool_input.command}}}')
    assert json.loads(template.render(payload)) == {"t": "bash", "c": 'echo "hi"'}
    assert (
        BodyTemplate.parse("{{.tool_input.command}} {{.is_error}} {{.missing}}!").render(payload)
        == 'echo "hi" false !'
    )
    assert json.loads(BodyTemplate.parse("{{json .}}").render(payload)) == payload
    for bad in ('{{printf "%s" .x}}', "{{call .f}}", "{{index .a 0}}", "{{.a}", "{{ .a | html }}"):
        with pytest.raises(TemplateError):
            BodyTemplate.parse(bad)


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30.0), ("1m30s", 90.0), ("500ms", 0.5), (5, 5.0), ("0", 30.0)]
)
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "-1s", "10 sec", True, None])
def test_bad_durations_are_rejected(text: object) -> None:
    with pytest.raises(RuleError):
        parse_duration(text)
