# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Slash commands in agent cells of a real ``mewcode`` kernel (one kernel for
the module, scripted Anthropic and OpenAI providers)."""

from __future__ import annotations

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import Kernel, jupyter_path, kernel, project, script, server  # noqa: F401


def test_help_lists_the_commands(kernel: Kernel) -> None:
    [table] = kernel.ok("%agent /help").markdown
    for name in ("clear", "sessions", "resume", "mode", "model", "tools", "cost", "permissions"):
        assert f"`/{name}" in table


def test_help_works_as_a_cell_body(kernel: Kernel) -> None:
    assert "`/clear`" in kernel.ok("%%agent\n/help").markdown[0]


def test_clear_starts_a_fresh_conversation(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="One."), reply(text="Two."))
    first = kernel.ok("%%agent --new\nOne.").provenance[0]["session_id"]
    assert "new session" in kernel.ok("%agent /clear").markdown[0]
    second = kernel.ok("%agent Two.").provenance[0]["session_id"]
    assert first != second
    assert len(script.received[-1].body["messages"]) == 1


def test_sessions_lists_and_resume_continues(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="Remember: blue."), reply(text="Other."), reply(text="It was blue."))
    blue = kernel.ok("%%agent --new\nThe colour is blue.").provenance[0]["session_id"]
    kernel.ok("%%agent --new\nSomething else.")
    cell = kernel.ok("%agent --out listed /sessions")
    assert f"`{blue}`" in cell.markdown[0] and "The colour is blue." in cell.markdown[0]
    ids = kernel.ok("print([s.id for s in listed])").stdout
    assert blue in ids
    assert f"Resumed session `{blue}`" in kernel.ok(f"%agent /resume {blue[:22]}").markdown[0]
    resumed = kernel.ok("%agent What colour?").provenance[0]["session_id"]
    assert resumed == blue
    texts = [str(m["content"]) for m in script.received[-1].body["messages"]]
    assert "The colour is blue." in texts[0] and "What colour?" in texts[-1]


def test_resume_without_an_id_takes_the_most_recent_other(
    kernel: Kernel, script: ScriptedServer
) -> None:
    script.add(reply(text="A."), reply(text="B."))
    a = kernel.ok("%%agent --new\nA.").provenance[0]["session_id"]
    b = kernel.ok("%%agent --new\nB.").provenance[0]["session_id"]
    assert f"`{a}`" in kernel.ok("%agent /resume").markdown[0]
    assert a != b


def test_mode_shows_and_switches_for_the_session(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="Planned."), reply(text="Planned again."))
    assert "**default**" in kernel.ok("%agent /mode").markdown[0]
    assert "is now **plan**" in kernel.ok("%agent /mode plan").markdown[0]
    try:
        kernel.ok("%%agent --new\nPlan.")
        kernel.ok("%agent Still planning?")
        offered = {t["name"] for t in script.received[-1].body["tools"]}
        assert "write_file" not in offered and "bash" not in offered
        assert "no (plan mode)" in kernel.ok("%agent /tools").markdown[0]
    finally:
        kernel.ok("%agent /mode default")
    bad = kernel.run("%agent /mode reckless")
    assert bad.status == "error" and "unknown permission mode 'reckless'" in bad.errors[0]["evalue"]


def test_model_shows_and_switches_keeping_the_conversation(
    kernel: Kernel, script: ScriptedServer
) -> None:
    script.add(reply(text="Claude here."), reply(text="GPT here."), reply(text="Opus here."))
    shown = kernel.ok("%agent /model").markdown[0]
    assert "`claude`" in shown and "`gpt`" in shown and "current" in shown
    kernel.ok("%%agent --new\nHello.")
    try:
        assert "**gpt** with model **gpt-4.1**" in kernel.ok("%agent /model gpt").markdown[0]
        kernel.ok("%agent Who are you?")
        assert script.received[-1].path.endswith("/chat/completions")
        assert len(script.received[-1].body["messages"]) >= 3  # the conversation was kept
        assert (
            "**claude-opus-4-5**" in kernel.ok("%agent /model claude claude-opus-4-5").markdown[0]
        )
        kernel.ok("%agent And now?")
        assert script.received[-1].body["model"] == "claude-opus-4-5"
    finally:
        kernel.ok("%agent /model claude claude-sonnet-4-5")
    bad = kernel.run("%agent /model replay")
    assert bad.status == "error" and "offline replay" in bad.errors[0]["evalue"]


def test_tools_lists_the_builtin_tools(kernel: Kernel) -> None:
    table = kernel.ok("%agent /tools").markdown[0]
    for name in ("read_file", "write_file", "edit_file", "glob", "grep", "bash"):
        assert f"`{name}`" in table
    assert "read-only" in table and "changes things" in table


def test_cost_counts_the_session_tokens(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="Cheap."))
    kernel.ok("%%agent --new\nHi.")
    cell = kernel.ok("%agent --out cost /cost")
    assert "| input | 10 |" in cell.markdown[0] and "| output | 5 |" in cell.markdown[0]
    assert "list price of `claude-sonnet-4-5`" in cell.markdown[0]
    assert kernel.ok("print(cost['cost_usd'] > 0)").stdout.strip() == "True"


def test_permissions_shows_mode_and_rules(kernel: Kernel) -> None:
    # this project has no rules (tests/test_session_permissions.py lists some)
    assert kernel.ok("%agent /permissions").markdown[0] == "Permission mode: **default**. No rules."


@pytest.mark.parametrize("command", ["/cost", "/tools", "/permissions", "/mode", "/model"])
def test_commands_never_print_secrets(kernel: Kernel, command: str) -> None:
    assert "sk-test" not in kernel.ok(f"%agent {command}").raw
