"""Plugins load as Claude Code loads them: the fixture set of real public
plugins with no unexplained rejection; skills and commands as
``/<plugin>:<name>`` (``$ARGUMENTS``, ``${CLAUDE_PLUGIN_ROOT}``), agents as
``<plugin>:<agent>``, hooks and MCP servers next to the others; plugins
from MewCode config, Claude Code's install records and ``enabledPlugins``
(user, project, local), a project's ``false`` narrowing; command files
without a plugin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mewcode_kernel.core.hooks.loader import load_hooks
from mewcode_kernel.core.plugins import discover_plugins, plugin_servers
from mewcode_kernel.core.skills import SkillCatalog
from mewcode_kernel.core.skills.render import render_body
from mewcode_kernel.core.subagents import load_catalog
from tests._plugins import REAL, claude_install, copy_real, make_plugin, user_config


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEWCODE_TRUST_PROJECT", raising=False)


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    return root, home


#: the only reasons a real plugin's part is left out, each explained to the user
EXPLAINED = (
    "is hidden by the one in plugin example-plugin/example-command",  # a skill and a command share a name
)


def test_the_real_plugins_load_with_no_unexplained_rejection(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    plugins = copy_real(tmp_path / "plugins")
    user_config(home, "plugins:\n" + "".join(f"  - {p}\n" for p in plugins))
    found = discover_plugins(root, home=home)
    assert [p.name for p in found.plugins] == list(REAL)
    assert found.problems == () and found.notes == ()
    skills = SkillCatalog(root, home=home)
    agents = load_catalog(root, home=home)
    hooks = load_hooks(root, home=home)
    problems = [*skills.problems, *map(str, agents.problems), *map(str, hooks.problems)]
    assert all(any(e in p for e in EXPLAINED) for p in problems), problems
    names = {s.name for s in skills.skills()}
    assert {"example-plugin:example-skill", "commit-commands:commit", "hookify:hookify",
            "code-review:code-review", "ralph-loop:ralph-loop"} <= names  # fmt: skip
    assert {"feature-dev:code-architect", "hookify:conversation-analyzer"} <= set(agents.names)
    events = {(r.event, r.scope) for r in hooks.rules}
    assert {("PreToolUse", "user"), ("Stop", "user"), ("SessionStart", "user")} <= events
    servers = plugin_servers(found, {})
    assert servers["plugin_example-plugin_example-server"].url == "https://mcp.example.com/api"


def test_a_command_is_an_inline_skill_with_arguments_and_its_frontmatter(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    [commits] = copy_real(tmp_path / "plugins", "commit-commands")
    user_config(home, f"plugins: [{commits}]\n")
    skill = SkillCatalog(root, home=home).get("commit-commands:commit")
    assert skill is not None and skill.command and skill.mode == "inline"
    assert skill.description == "Create a git commit"
    assert "Bash(git add:*)" in skill.allowed_tools
    plugin = make_plugin(tmp_path / "p", "tools", commands={"fix": "Fix issue $ARGUMENTS now.\n"})
    user_config(home, f"plugins: [{plugin}]\n")
    fixed = SkillCatalog(root, home=home).get("tools:fix")
    assert fixed is not None and fixed.description == "Fix issue $ARGUMENTS now."
    assert render_body(fixed, "#42").endswith("Fix issue #42 now.")


def test_the_plugin_root_is_put_in_skill_agent_and_server_text(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    plugin = make_plugin(
        tmp_path / "p",
        "rooted",
        skills={"s": "Run ${CLAUDE_PLUGIN_ROOT}/bin/tool"},
        commands={"c": "Read $CLAUDE_PLUGIN_ROOT/README.md"},
        agents={"a": "Your notes are in ${CLAUDE_PLUGIN_ROOT}/notes."},
        servers={"srv": {"command": "${CLAUDE_PLUGIN_ROOT}/srv", "args": ["${CLAUDE_PLUGIN_ROOT}/x"],
                         "env": {"DATA": "${CLAUDE_PLUGIN_ROOT}/data", "TOKEN": "${MY_TOKEN}"}}},
    )  # fmt: skip
    user_config(home, f"plugins: [{plugin}]\n")
    real = str(plugin.resolve())
    catalog = SkillCatalog(root, home=home)
    assert catalog.get("rooted:s").body == f"Run {real}/bin/tool"  # type: ignore[union-attr]
    assert catalog.get("rooted:c").body == f"Read {real}/README.md"  # type: ignore[union-attr]
    agent = load_catalog(root, home=home).require("rooted:a")
    assert agent.system_prompt.strip() == f"Your notes are in {real}/notes."
    server = plugin_servers(discover_plugins(root, home=home), {"MY_TOKEN": "t0k"})[
        "plugin_rooted_srv"
    ]
    assert (server.command, server.args) == (f"{real}/srv", (f"{real}/x",))
    assert dict(server.env) == {"DATA": f"{real}/data", "TOKEN": "t0k"}
    assert server.scope == "user" and server.trust_item is None


def test_claude_code_installs_load_when_enabled_and_a_project_may_turn_them_off(
    tmp_path: Path,
) -> None:
    root, home = dirs(tmp_path)
    cache = home / ".claude" / "plugins" / "cache" / "official"
    [feature, review] = copy_real(cache, "feature-dev", "code-review")
    claude_install(home, "feature-dev@official", feature)
    claude_install(home, "code-review@official", review, enabled=None)
    assert [p.name for p in discover_plugins(root, home=home).plugins] == ["feature-dev"]
    # the project turns on the installed code-review (its plugin) and off feature-dev
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"code-review@official": True}})
    )
    (root / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledPlugins": {"feature-dev@official": False}})
    )
    found = discover_plugins(root, home=home)
    assert [(p.name, p.scope) for p in found.plugins] == [("code-review", "project")]


def test_an_enabled_plugin_that_is_not_installed_is_reported(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"gone@m": True}})
    )
    found = discover_plugins(root, home=home)
    assert found.plugins == ()
    assert "'gone@m', which is not installed" in found.problems[0]


def test_version_one_records_and_the_project_s_install_are_read(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    plugin = make_plugin(tmp_path / "p", "old")
    records = home / ".claude" / "plugins" / "installed_plugins.json"
    records.parent.mkdir(parents=True)
    records.write_text(
        json.dumps({"version": 1, "plugins": {"old@m": {"installPath": str(plugin)}}})
    )
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"old@m": True}}))
    assert [p.name for p in discover_plugins(root, home=home).plugins] == ["old"]


def test_command_files_without_a_plugin(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "commands" / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS carefully.\n"
    )
    (home / ".claude" / "commands").mkdir(parents=True)
    (home / ".claude" / "commands" / "standup.md").write_text("Write my standup notes.\n")
    catalog = SkillCatalog(root, home=home)
    review, standup = catalog.get("review"), catalog.get("standup")
    assert review is not None and review.source == "project" and review.argument_hint == "FILE"
    assert render_body(review, "a.py").endswith("Review a.py carefully.")
    assert standup is not None and standup.source == "user"
    assert standup.description == "Write my standup notes."


def test_a_skill_keeps_its_name_over_a_command_file(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    (root / ".claude" / "skills" / "review").mkdir(parents=True)
    (root / ".claude" / "skills" / "review" / "SKILL.md").write_text(
        "---\nname: review\ndescription: the skill\n---\nskill body\n"
    )
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "commands" / "review.md").write_text("command body\n")
    catalog = SkillCatalog(root, home=home)
    assert catalog.get("review").body == "skill body"  # type: ignore[union-attr]
    assert any("is hidden by the one in" in p for p in catalog.problems)


def test_two_plugins_of_one_name_the_first_wins_and_the_other_is_named(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    one = make_plugin(tmp_path / "one", "same", skills={"s": "one"})
    two = make_plugin(tmp_path / "two", "same", skills={"s": "two"})
    user_config(home, f"plugins: [{one}, {two}]\n")
    found = discover_plugins(root, home=home)
    assert [p.root for p in found.plugins] == [one.resolve()]
    assert "has the name of the one in" in found.problems[0]


def test_plugin_hooks_get_the_plugin_root_in_their_environment(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    plugin = make_plugin(
        tmp_path / "p",
        "hooked",
        hooks={"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]},
    )
    user_config(home, f"plugins: [{plugin}]\n")
    [rule] = load_hooks(root, home=home).rules
    assert dict(rule.env) == {"CLAUDE_PLUGIN_ROOT": str(plugin.resolve())}
    assert rule.scope == "user" and rule.name.startswith("hooked:hooks/hooks.json")


def test_parts_mewcode_has_no_use_for_are_noted_not_rejected(tmp_path: Path) -> None:
    root, home = dirs(tmp_path)
    plugin = make_plugin(
        tmp_path / "p",
        "lsp",
        skills={"s": "x"},
        manifest={"lspServers": {"py": {"command": "pyright"}}},
    )
    user_config(home, f"plugins: [{plugin}]\n")
    found = discover_plugins(root, home=home)
    assert [p.name for p in found.plugins] == ["lsp"] and found.problems == ()
    assert found.notes == (
        f"{plugin.resolve() / '.claude-plugin' / 'plugin.json'}: 'lspServers' is not used by "
        "MewCode; the rest of the plugin is",
    )
