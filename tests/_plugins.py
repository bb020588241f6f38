"""Building plugin folders, marketplaces and Claude Code's records in tmp
paths, for the plugin tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "plugins" / "claude-plugins-official"
REAL = (
    "example-plugin", "hookify", "commit-commands", "feature-dev", "code-review",
    "explanatory-output-style", "ralph-loop", "security-guidance",
)  # fmt: skip


def make_plugin(
    folder: Path,
    name: str | None,
    *,
    skills: dict[str, str] | None = None,
    commands: dict[str, str] | None = None,
    agents: dict[str, str] | None = None,
    hooks: dict[str, Any] | None = None,
    servers: dict[str, Any] | None = None,
    manifest: dict[str, Any] | None = None,
) -> Path:
    """A plugin folder; ``name`` ``None`` leaves out ``plugin.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    if name is not None:
        (folder / ".claude-plugin").mkdir(exist_ok=True)
        data = {"name": name, "version": "1.0.0", "description": f"{name} for tests"}
        (folder / ".claude-plugin" / "plugin.json").write_text(
            json.dumps({**data, **(manifest or {})})
        )
    for skill, body in (skills or {}).items():
        (folder / "skills" / skill).mkdir(parents=True, exist_ok=True)
        (folder / "skills" / skill / "SKILL.md").write_text(
            f"---\nname: {skill}\ndescription: The {skill} skill.\n---\n{body}\n"
        )
    for command, text in (commands or {}).items():
        (folder / "commands").mkdir(exist_ok=True)
        (folder / "commands" / f"{command}.md").write_text(text)
    for agent, body in (agents or {}).items():
        (folder / "agents").mkdir(exist_ok=True)
        (folder / "agents" / f"{agent}.md").write_text(
            f"---\nname: {agent}\ndescription: The {agent} agent.\ntools: Read\n---\n{body}\n"
        )
    if hooks is not None:
        (folder / "hooks").mkdir(exist_ok=True)
        (folder / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    if servers is not None:
        (folder / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return folder


def make_marketplace(
    folder: Path, name: str, plugins: list[dict[str, Any]], *, git: bool = False
) -> Path:
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    data = {"name": name, "owner": {"name": "Tests"}, "plugins": plugins}
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(data))
    if git:
        run = lambda *a: subprocess.run(["git", *a], cwd=folder, check=True, capture_output=True)  # noqa: E731
        run("init", "-q")
        run("add", "-A")
        run("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "market")
    return folder


def copy_real(into: Path, *names: str) -> list[Path]:
    """The real fixture plugins, copied (tests never write the fixtures)."""
    out = []
    for name in names or REAL:
        out.append(Path(shutil.copytree(FIXTURES / name, into / name)))
    return out


def user_config(home: Path, text: str) -> None:
    (home / ".mewcode").mkdir(parents=True, exist_ok=True)
    (home / ".mewcode" / "config.yaml").write_text(text)


def claude_install(
    home: Path, key: str, path: Path, *, scope: str = "user", enabled: bool | None = True
) -> None:
    """Record ``key`` as Claude Code does (installed_plugins.json v2) and,
    unless ``enabled`` is None, turn it on or off in ~/.claude/settings.json."""
    records = home / ".claude" / "plugins" / "installed_plugins.json"
    records.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(records.read_text()) if records.exists() else {"version": 2, "plugins": {}}
    data["plugins"][key] = [{"scope": scope, "installPath": str(path), "version": "1.0.0",
                             "installedAt": "2026-01-01T00:00:00Z"}]  # fmt: skip
    records.write_text(json.dumps(data))
    if enabled is not None:
        settings = home / ".claude" / "settings.json"
        current = json.loads(settings.read_text()) if settings.exists() else {}
        current.setdefault("enabledPlugins", {})[key] = enabled
        settings.write_text(json.dumps(current))
