"""A project's plugins run nothing before the person trusts the project: the
hooks and MCP servers of a plugin the project lists (``.mewcode.yaml``) or
turns on (``enabledPlugins`` in ``.claude/settings.json`` or
``settings.local.json``, for a plugin the user installed but did not turn
on) wait, are shown on the trust card, start once trusted, and wait again
when their hooks, their scripts or their servers change. A project cannot
take a user plugin's name, and it only narrows what the user turned on.
Real files, real hook processes, real sessions with a stdio server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core import open_session
from mewcode_kernel.core.config import SandboxSettings
from mewcode_kernel.core.config.loader import load_config
from mewcode_kernel.core.hooks import HookEngine
from mewcode_kernel.core.hooks.loader import load_hooks
from mewcode_kernel.core.plugins import discover_plugins, plugin_servers
from mewcode_kernel.core.sandbox import Sandbox
from mewcode_kernel.core.trust import approve_project, assess_project
from mewcode_kernel.testing.wire import ScriptedServer
from tests._mcp import provider_yaml
from tests._plugins import claude_install, make_plugin, user_config


@pytest.fixture(autouse=True)
def _untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEWCODE_TRUST_PROJECT", raising=False)


def marker_hook(marker: Path) -> dict[str, Any]:
    """A SessionStart hook running the plugin's own script, which leaves ``marker``."""
    command = 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/run.sh"'
    return {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}


def evil_plugin(folder: Path, marker: Path, server_marker: Path | None = None) -> Path:
    servers = None
    if server_marker is not None:
        servers = {
            "x": {"command": sys.executable, "args": ["-c", f"open({str(server_marker)!r}, 'w')"]}
        }
    plugin = make_plugin(folder, "evil", hooks=marker_hook(marker), servers=servers)
    (plugin / "hooks" / "run.sh").write_text(f'echo "$CLAUDE_PLUGIN_ROOT" > "{marker}"\n')
    return plugin


def places(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "project", tmp_path / "home"
    root.mkdir()
    (home / ".mewcode").mkdir(parents=True)
    return root, home


def listed(root: Path, tmp: Path, marker: Path, server_marker: Path | None = None) -> Path:
    plugin = evil_plugin(root / "vendor" / "evil", marker, server_marker)
    (root / ".mewcode.yaml").write_text("plugins: [vendor/evil]\n")
    return plugin


def enabled_by_project(root: Path, home: Path, marker: Path, rel: str) -> Path:
    plugin = evil_plugin(home / ".claude" / "plugins" / "cache" / "m" / "evil", marker)
    claude_install(home, "evil@m", plugin, enabled=None)  # installed, not turned on by the user
    (root / ".claude").mkdir()
    (root / ".claude" / rel).write_text(json.dumps({"enabledPlugins": {"evil@m": True}}))
    return plugin


async def session_start(root: Path, home: Path) -> HookEngine:
    engine = HookEngine(root, home=home)
    await engine.dispatch("SessionStart", {"session_id": "s", "source": "startup"})
    return engine


@pytest.mark.parametrize("how", ["listed", "settings.json", "settings.local.json"])
async def test_a_project_plugin_s_hooks_wait_for_trust_then_run(tmp_path: Path, how: str) -> None:
    root, home = places(tmp_path)
    marker = tmp_path / "hook-ran"
    if how == "listed":
        plugin = listed(root, tmp_path, marker)
    else:
        plugin = enabled_by_project(root, home, marker, how)
    engine = await session_start(root, home)
    assert engine.rules == [] and not marker.exists()
    assert any("not trusted for these hooks yet" in w for w in engine.hooks.waiting)
    trust = assess_project(root, home=home)
    [item] = [i for i in trust.items if i.kind == "hooks"]
    assert "plugin 'evil' runs hooks" in item.detail and "run.sh" in item.detail
    approve_project(trust, home=home)
    engine = await session_start(root, home)
    assert [r.scope for r in engine.rules] == ["project"]
    assert marker.read_text().strip() == str(plugin.resolve())


async def test_a_changed_hooks_file_waits_again(tmp_path: Path) -> None:
    root, home = places(tmp_path)
    marker = tmp_path / "hook-ran"
    plugin = listed(root, tmp_path, marker)
    approve_project(assess_project(root, home=home), home=home)
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())
    hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"] = f"touch {marker}"
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    engine = await session_start(root, home)
    assert engine.rules == [] and not marker.exists()


async def test_a_script_edited_after_the_trust_does_not_run(tmp_path: Path) -> None:
    root, home = places(tmp_path)
    marker = tmp_path / "hook-ran"
    plugin = listed(root, tmp_path, marker)
    approve_project(assess_project(root, home=home), home=home)
    engine = HookEngine(root, home=home)  # loaded while the script was as trusted
    (plugin / "hooks" / "run.sh").write_text(f"echo swapped > {marker}\n")
    outcome = await engine.dispatch("SessionStart", {"session_id": "s", "source": "startup"})
    assert not marker.exists()
    assert any("changed since you trusted" in w for w in outcome.warnings)
    # and a new session does not load it either: the item covers the script
    assert load_hooks(root, home=home).rules == []


async def test_the_environment_s_trust_runs_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, home = places(tmp_path)
    marker = tmp_path / "hook-ran"
    listed(root, tmp_path, marker)
    monkeypatch.setenv("MEWCODE_TRUST_PROJECT", "1")
    await session_start(root, home)
    assert marker.exists()


async def test_a_user_plugin_runs_without_any_trust(tmp_path: Path) -> None:
    root, home = places(tmp_path)
    marker = tmp_path / "hook-ran"
    plugin = evil_plugin(tmp_path / "mine", marker)
    user_config(home, f"plugins: [{plugin}]\n")
    await session_start(root, home)
    assert marker.exists()


async def test_a_project_plugin_cannot_take_a_user_plugin_s_name(tmp_path: Path) -> None:
    root, home = places(tmp_path)
    marker, theirs = tmp_path / "mine-ran", tmp_path / "project-ran"
    mine = make_plugin(tmp_path / "mine", "evil", skills={"s": "mine"})
    user_config(home, f"plugins: [{mine}]\n")
    listed(root, tmp_path, theirs)
    approve_project(assess_project(root, home=home), home=home)
    found = discover_plugins(root, home=home)
    assert [(p.name, p.scope) for p in found.plugins] == [("evil", "user")]
    await session_start(root, home)
    assert not theirs.exists() and not marker.exists()


async def test_a_project_can_turn_off_a_user_plugin_but_not_on_one_the_user_turned_off(
    tmp_path: Path,
) -> None:
    root, home = places(tmp_path)
    marker = tmp_path / "hook-ran"
    plugin = evil_plugin(home / ".claude" / "plugins" / "cache" / "m" / "evil", marker)
    claude_install(home, "evil@m", plugin, enabled=False)
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"evil@m": True}})
    )
    # the user said false; the project's true makes it a project plugin, waiting for trust
    [p] = discover_plugins(root, home=home).plugins
    assert p.scope == "project"
    await session_start(root, home)
    assert not marker.exists()


async def test_a_project_plugin_s_server_waits_for_trust(tmp_path: Path) -> None:
    root, home = places(tmp_path)
    # the project is what a sandboxed server may write
    marker, started = tmp_path / "hook-ran", root / "server-started"
    listed(root, tmp_path, marker, started)
    [server] = plugin_servers(discover_plugins(root, home=home), {}).values()
    assert server.scope == "project" and server.trust_item is not None
    assert server.trust_item in assess_project(root, home=home).items
    with ScriptedServer([]) as model:
        (home / ".mewcode" / "config.yaml").write_text(provider_yaml(model.base_url))
        async with open_session(root, home=home, env={}) as s:
            assert s.mcp is not None and s.mcp.state_of("plugin_evil_x") is None
        assert not started.exists() and not marker.exists()
        approve_project(assess_project(root, home=home), home=home)
        async with open_session(root, home=home, env={}):
            pass
    assert started.exists()  # once trusted, the very entry shown starts


def test_a_changed_server_entry_is_a_new_item(tmp_path: Path) -> None:
    root, home = places(tmp_path)
    plugin = listed(root, tmp_path, tmp_path / "m", tmp_path / "s")
    trust = approve_project(assess_project(root, home=home), home=home)
    [server] = plugin_servers(discover_plugins(root, home=home), {}).values()
    assert trust.allows(server.trust_item)  # type: ignore[arg-type]
    (plugin / ".mcp.json").write_text(json.dumps({"mcpServers": {"x": {"command": "/bin/sh"}}}))
    [changed] = plugin_servers(discover_plugins(root, home=home), {}).values()
    assert not assess_project(root, home=home).allows(changed.trust_item)  # type: ignore[arg-type]


async def test_a_user_plugin_installed_in_the_mewcode_folder_runs_in_the_sandbox(
    tmp_path: Path,
) -> None:
    """The MewCode folder is hidden from sandboxed processes; its plugins
    folder is shown again, read-only, so a plugin's hook script runs."""
    root, home = places(tmp_path)
    marker = root / "hook-ran"  # the project is writable inside the sandbox
    plugin = evil_plugin(home / ".mewcode" / "plugins" / "cache" / "m" / "evil", marker)
    (home / ".mewcode" / "plugins" / "installed.json").write_text(
        json.dumps({"plugins": {"evil@m": {"path": str(plugin)}}, "enabled": {"evil@m": True}})
    )
    (plugin / "hooks" / "run.sh").write_text(
        f'cat "$CLAUDE_PLUGIN_ROOT/.claude-plugin/plugin.json" > "{marker}"\n'
        f'touch "$CLAUDE_PLUGIN_ROOT/written" 2>/dev/null && echo wrote >> "{marker}"\n'
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    box = Sandbox(root, SandboxSettings(), env=env, home=home)
    assert box.active, box.status
    engine = HookEngine(root, home=home, sandbox=lambda: box)
    await engine.dispatch("SessionStart", {"session_id": "s", "source": "startup"})
    assert '"name": "evil"' in marker.read_text()
    assert "wrote" not in marker.read_text() and not (plugin / "written").exists()
    assert load_config(root, home=home, env={}).warnings == []
