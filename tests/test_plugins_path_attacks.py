"""A plugin reads nothing outside its folder, and a project lists no plugin
outside itself: component paths that climb out (``../`` in every spelling,
absolute, ``~``), symlinks anywhere on the way (the component folder, a
skill folder, a single file, the manifest, hook and server files, a chain
of links), each reported with the file and the reason while the rest of
the plugin loads. Bad input in general: a missing or malformed manifest, a
hooks file with unknown events."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mewcode_kernel.core.hooks.loader import load_hooks
from mewcode_kernel.core.plugins import discover_plugins, plugin_servers
from mewcode_kernel.core.skills import SkillCatalog
from mewcode_kernel.core.subagents import load_catalog
from tests._plugins import make_plugin, user_config

SECRET = "SECRET-CONTENT-7f3a"


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEWCODE_TRUST_PROJECT", raising=False)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    root, home, outside = tmp_path / "project", tmp_path / "home", tmp_path / "outside"
    for d in (root, home, outside):
        d.mkdir()
    # what an attacker would like a plugin to read: a skill, commands, agents, hooks, servers
    make_plugin(
        outside,
        "loot",
        skills={"stolen": SECRET},
        commands={"stolen": SECRET},
        agents={"stolen": SECRET},
        hooks={"SessionStart": [{"hooks": [{"type": "command", "command": f"echo {SECRET}"}]}]},
        servers={"stolen": {"command": f"/bin/{SECRET}"}},
    )
    (outside / "secret.md").write_text(f"---\nname: stolen\ndescription: x\n---\n{SECRET}\n")
    return {"root": root, "home": home, "outside": outside, "tmp": tmp_path}


def everything(root: Path, home: Path) -> str:
    """All a session would read from plugins, as one text."""
    found = discover_plugins(root, home=home)
    skills = SkillCatalog(root, home=home)
    agents = load_catalog(root, home=home)
    hooks = load_hooks(root, home=home)
    servers = plugin_servers(found, {})
    return json.dumps(
        [
            [s.body + s.description for s in skills.skills()],
            [a.system_prompt for a in agents.list()],
            [r.action.command for r in hooks.rules],
            [[s.command, *s.args] for s in servers.values()],
        ]
    )


def problems(root: Path, home: Path) -> str:
    found = discover_plugins(root, home=home)
    skills = SkillCatalog(root, home=home)
    agents = load_catalog(root, home=home)
    return "\n".join([*found.problems, *skills.problems, *map(str, agents.problems)])


@pytest.mark.parametrize(
    "spec",
    [
        "../outside/skills",
        "./../outside/skills",
        "skills/../../outside/skills",
        "./skills/./../../outside/skills",
        "{outside}/skills",
        "~/../outside/skills",
        "..\\outside\\skills",
        "skills\x00/../../outside",
    ],
)
def test_a_component_path_that_climbs_out_is_refused(world: dict[str, Path], spec: str) -> None:
    root, home = world["root"], world["home"]
    spec = spec.format(outside=world["outside"])
    plugin = make_plugin(
        world["tmp"] / "p",
        "climber",
        skills={"ok": "fine"},
        manifest={"skills": spec, "commands": [spec, "./extra"], "agents": spec,
                  "hooks": spec, "mcpServers": spec},
    )  # fmt: skip
    (plugin / "extra").mkdir()
    (plugin / "extra" / "good.md").write_text("a good command\n")
    user_config(home, f"plugins: [{plugin}]\n")
    assert SECRET not in everything(root, home)
    said = problems(root, home)
    assert str(plugin / ".claude-plugin" / "plugin.json") in said
    assert any(w in said for w in ("climbs out", "absolute", "NUL or a backslash"))
    catalog = SkillCatalog(root, home=home)
    assert catalog.get("climber:ok") is not None and catalog.get("climber:good") is not None


@pytest.mark.parametrize("where", ["skills", "commands", "agents"])
def test_a_component_folder_that_is_a_symlink_out_is_not_read(
    world: dict[str, Path], where: str
) -> None:
    root, home = world["root"], world["home"]
    plugin = make_plugin(world["tmp"] / "p", "linker")
    os.symlink(world["outside"] / where, plugin / where)
    user_config(home, f"plugins: [{plugin}]\n")
    assert SECRET not in everything(root, home)
    assert f"{plugin.resolve() / where}: leads out of the plugin" in problems(root, home)


def test_a_manifest_path_through_a_symlink_out_is_refused(world: dict[str, Path]) -> None:
    root, home = world["root"], world["home"]
    plugin = make_plugin(world["tmp"] / "p", "linker", manifest={"skills": "./more"})
    os.symlink(world["outside"] / "skills", plugin / "more")
    user_config(home, f"plugins: [{plugin}]\n")
    assert SECRET not in everything(root, home)
    assert "'skills' path './more' leads out of the plugin through a symlink" in problems(
        root, home
    )


def test_links_to_single_files_and_chains_of_links_are_not_followed_out(
    world: dict[str, Path],
) -> None:
    root, home, outside = world["root"], world["home"], world["outside"]
    plugin = make_plugin(world["tmp"] / "p", "files", skills={"good": "kept"})
    (plugin / "skills" / "evil").mkdir()
    os.symlink(outside / "secret.md", plugin / "skills" / "evil" / "SKILL.md")
    os.symlink(outside / "skills" / "stolen", plugin / "skills" / "linked-dir")
    (plugin / "commands").mkdir()
    os.symlink(plugin / "commands" / "hop2.md", plugin / "commands" / "hop1.md")
    os.symlink(outside / "commands" / "stolen.md", plugin / "commands" / "hop2.md")
    (plugin / "agents").mkdir()
    os.symlink(outside / "agents" / "stolen.md", plugin / "agents" / "a.md")
    (plugin / "hooks").mkdir()
    os.symlink(outside / "hooks" / "hooks.json", plugin / "hooks" / "hooks.json")
    os.symlink(outside / ".mcp.json", plugin / ".mcp.json")
    user_config(home, f"plugins: [{plugin}]\n")
    assert SECRET not in everything(root, home)
    said = problems(root, home)
    for name in ("skills/evil/SKILL.md", "skills/linked-dir", "commands/hop1.md", "agents/a.md",
                 "hooks/hooks.json", ".mcp.json"):  # fmt: skip
        assert name in said, name
    assert SkillCatalog(root, home=home).get("files:good") is not None


def test_a_link_that_stays_inside_the_plugin_is_fine(world: dict[str, Path]) -> None:
    root, home = world["root"], world["home"]
    plugin = make_plugin(world["tmp"] / "p", "inner", skills={"real": "inside"})
    os.symlink(plugin / "skills", plugin / "alias")
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "inner", "skills": "./alias"})
    )
    user_config(home, f"plugins: [{plugin}]\n")
    assert SkillCatalog(root, home=home).get("inner:real").body == "inside"  # type: ignore[union-attr]


def test_a_manifest_that_is_a_symlink_out_rejects_the_plugin(world: dict[str, Path]) -> None:
    root, home = world["root"], world["home"]
    plugin = make_plugin(world["tmp"] / "p", None, skills={"s": "x"})
    (plugin / ".claude-plugin").mkdir()
    os.symlink(
        world["outside"] / ".claude-plugin" / "plugin.json",
        plugin / ".claude-plugin" / "plugin.json",
    )
    user_config(home, f"plugins: [{plugin}]\n")
    found = discover_plugins(root, home=home)
    assert found.plugins == ()
    assert "leads out of the plugin through a symlink" in found.problems[0]


@pytest.mark.parametrize("entry", ["../outside", "{outside}", "sub/../../outside", "link"])
def test_a_project_lists_plugin_folders_inside_it_only(world: dict[str, Path], entry: str) -> None:
    root, home = world["root"], world["home"]
    os.symlink(world["outside"], root / "link")
    (root / ".mewcode.yaml").write_text(f"plugins: [{entry.format(outside=world['outside'])!r}]\n")
    found = discover_plugins(root, home=home)
    assert found.plugins == ()
    assert "leads out of the project" in found.problems[0]
    assert SECRET not in everything(root, home)


def test_a_missing_manifest_names_the_plugin_after_its_folder(world: dict[str, Path]) -> None:
    root, home = world["root"], world["home"]
    plugin = make_plugin(world["tmp"] / "bare-plugin", None, skills={"s": "body"})
    user_config(home, f"plugins: [{plugin}]\n")
    found = discover_plugins(root, home=home)
    assert [p.name for p in found.plugins] == ["bare-plugin"]
    assert found.notes == (
        f"{plugin}: has no .claude-plugin/plugin.json; named 'bare-plugin' after its folder",
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"version": "1"}', "'name' must be a plugin name"),
        ('{"name": "../evil"}', "'name' must be a plugin name"),
        ('{"name": "a:b"}', "'name' must be a plugin name"),
        ('{"name": "has space"}', "'name' must be a plugin name"),
        ("\udcff", "is not UTF-8 text"),
    ],
)
def test_a_malformed_manifest_is_reported_and_the_others_load(
    world: dict[str, Path], text: str, why: str
) -> None:
    root, home = world["root"], world["home"]
    bad = make_plugin(world["tmp"] / "bad", "bad")
    (bad / ".claude-plugin" / "plugin.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    good = make_plugin(world["tmp"] / "good", "good", skills={"s": "x"})
    user_config(home, f"plugins: [{bad}, {good}]\n")
    found = discover_plugins(root, home=home)
    assert [p.name for p in found.plugins] == ["good"]
    [problem] = found.problems
    assert (
        problem.startswith(str(bad.resolve() / ".claude-plugin" / "plugin.json")) and why in problem
    )


def test_a_missing_folder_is_reported(world: dict[str, Path]) -> None:
    root, home = world["root"], world["home"]
    user_config(home, f"plugins: [{world['tmp'] / 'nowhere'}]\n")
    found = discover_plugins(root, home=home)
    assert found.plugins == () and "is not a folder" in found.problems[0]


def test_a_hooks_file_with_unknown_events_keeps_the_known_ones(world: dict[str, Path]) -> None:
    root, home = world["root"], world["home"]
    plugin = make_plugin(
        world["tmp"] / "p",
        "events",
        hooks={
            "SessionStart": [{"hooks": [{"type": "command", "command": "echo ok"}]}],
            "NoSuchEvent": [{"hooks": [{"type": "command", "command": "echo never"}]}],
            "Stop": "not a list",
        },
    )
    user_config(home, f"plugins: [{plugin}]\n")
    hooks = load_hooks(root, home=home)
    assert [r.event for r in hooks.rules] == ["SessionStart"]
    said = [str(p) for p in hooks.problems]
    hooks_file = str(plugin / "hooks" / "hooks.json")
    assert any(hooks_file in p and "MewCode has no NoSuchEvent event" in p for p in said)
    assert any(hooks_file in p and "must be a list" in p for p in said)


@pytest.mark.parametrize("text", ["{bad", '{"description": "no hooks key"}', '{"hooks": []}'])
def test_an_unusable_hooks_file_is_reported_and_the_rest_loads(
    world: dict[str, Path], text: str
) -> None:
    root, home = world["root"], world["home"]
    plugin = make_plugin(world["tmp"] / "p", "broken", skills={"s": "still here"})
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(text)
    user_config(home, f"plugins: [{plugin}]\n")
    found = discover_plugins(root, home=home)
    assert any(str(plugin.resolve() / "hooks" / "hooks.json") in p for p in found.problems)
    assert SkillCatalog(root, home=home).get("broken:s") is not None


def test_a_bad_server_entry_is_reported_and_the_others_start(world: dict[str, Path]) -> None:
    root, home = world["root"], world["home"]
    plugin = make_plugin(
        world["tmp"] / "p", "srv", servers={"good": {"command": "x"}, "bad": {"args": ["y"]}}
    )
    user_config(home, f"plugins: [{plugin}]\n")
    found = discover_plugins(root, home=home)
    assert list(plugin_servers(found, {})) == ["plugin_srv_good"]
    assert any("server 'bad' was ignored" in p for p in found.problems)


async def test_a_folder_name_holding_shell_syntax_stays_a_name_in_hook_commands(
    world: dict[str, Path],
) -> None:
    """``${CLAUDE_PLUGIN_ROOT}`` reaches a hook's shell as a variable, never
    pasted into the command: a folder called ``$(touch INJECTED)`` runs
    nothing of its name."""
    from mewcode_kernel.core.hooks import HookEngine

    root, home, tmp = world["root"], world["home"], world["tmp"]
    for name in [
        "p$(touch INJECTED)",
        "p`touch INJECTED`",
        'p";touch INJECTED;"',
        "p'; touch INJECTED; '",
    ]:
        folder = tmp / "plugins" / name
        plugin = make_plugin(
            folder,
            "quoted",
            hooks={"SessionStart": [{"hooks": [
                {"type": "command", "command": 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/run.sh"'},
                {"type": "command", "command": "sh $CLAUDE_PLUGIN_ROOT/hooks/run.sh"},
            ]}]},
        )  # fmt: skip
        (plugin / "hooks" / "run.sh").write_text(f'echo ran >> "{root}/ran"\n')
        user_config(home, f"plugins: [{json.dumps(str(plugin))}]\n")
        engine = HookEngine(root, home=home)
        await engine.dispatch("SessionStart", {"session_id": "s", "source": "startup"})
        assert not (root / "INJECTED").exists()  # hooks run in the project
        assert not (tmp / "plugins" / "INJECTED").exists()
    assert (root / "ran").read_text().count("ran") >= 4  # the quoted form ran each time


def test_project_command_files_do_not_follow_links_out(world: dict[str, Path]) -> None:
    root, home, outside = world["root"], world["home"], world["outside"]
    (root / ".claude" / "commands").mkdir(parents=True)
    os.symlink(outside / "secret.md", root / ".claude" / "commands" / "evil.md")
    (root / ".claude" / "commands" / "good.md").write_text("fine\n")
    catalog = SkillCatalog(root, home=home)
    assert catalog.get("good") is not None and catalog.get("evil") is None
    assert any("evil.md: leads out of its folder" in p for p in catalog.problems)
    assert SECRET not in everything(root, home)


def test_a_commands_folder_that_is_a_link_out_of_the_project_is_not_read(
    world: dict[str, Path],
) -> None:
    root, home, outside = world["root"], world["home"], world["outside"]
    (root / ".claude").mkdir()
    os.symlink(outside / "commands", root / ".claude" / "commands")
    assert SECRET not in everything(root, home)


def test_a_sibling_folder_sharing_the_plugin_s_name_prefix_is_outside(
    world: dict[str, Path],
) -> None:
    root, home, tmp = world["root"], world["home"], world["tmp"]
    plugin = make_plugin(tmp / "p", "prefix")
    make_plugin(tmp / "p-evil", "x", skills={"stolen": SECRET})
    os.symlink(tmp / "p-evil" / "skills", plugin / "skills")
    user_config(home, f"plugins: [{plugin}]\n")
    assert SECRET not in everything(root, home)


@pytest.mark.parametrize(
    "where",
    [".claude-plugin/plugin.json", "hooks/hooks.json", ".mcp.json", "skills/s/SKILL.md",
     "commands/c.md", "agents/a.md"],
)  # fmt: skip
def test_a_fifo_planted_in_a_plugin_does_not_block_loading(
    world: dict[str, Path], where: str
) -> None:
    root, home = world["root"], world["home"]
    plugin = make_plugin(world["tmp"] / "p", "piped", skills={"ok": "fine"})
    (plugin / where).parent.mkdir(parents=True, exist_ok=True)
    (plugin / where).unlink(missing_ok=True)
    os.mkfifo(plugin / where)
    user_config(home, f"plugins: [{plugin}]\n")
    everything(root, home)  # returns: nothing waits on the pipe
    found = discover_plugins(root, home=home)
    if where.endswith("plugin.json"):
        assert found.plugins == () and "cannot be read" in found.problems[0]
    else:
        assert SkillCatalog(root, home=home).get("piped:ok") is not None
