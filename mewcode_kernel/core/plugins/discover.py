"""Which plugins a session loads: ``discover_plugins``.

In this order (the first plugin of a name wins; a later one is reported):

1. the folders listed under ``plugins:`` in the user's MewCode config;
2. the plugins installed with ``/plugin install`` (``records``), unless
   disabled with ``/plugin disable``;
3. the plugins Claude Code installed (its records in
   ``~/.claude/plugins/installed_plugins.json``) that ``enabledPlugins`` in
   ``~/.claude/settings.json`` turns on;
4. the project's: folders listed under ``plugins:`` in ``.mewcode.yaml``
   (inside the project only), and installed plugins that ``enabledPlugins``
   in ``.claude/settings.json`` / ``settings.local.json`` turns on.

The first three are the user's (``scope="user"``); the project's have
``scope="project"``: their hooks and MCP servers wait for the project's
trust, like the project's own. A project may turn off a plugin (``false``
in its ``enabledPlugins``): that only narrows. ``/plugin disable`` turns off
any plugin by its ``name@market`` (or its folder, for a listed one).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..config._layer import PROJECT_CONFIG, load_layer
from ..userdirs import mewcode_home, user_home
from .manifest import PluginError, read_plugin
from .paths import inside, read_json
from .plugin import Plugin, PluginScope
from .records import read_records

__all__ = ["CLAUDE_RECORDS", "PluginSet", "claude_install_paths", "discover_plugins"]

CLAUDE_RECORDS = ".claude/plugins/installed_plugins.json"
CLAUDE_USER_SETTINGS = ".claude/settings.json"
PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
_USER_CONFIG = "config.yaml"


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginSet:
    """The plugins loaded, and every problem met (``file: reason``)."""

    plugins: tuple[Plugin, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def get(self, name: str) -> Plugin | None:
        return next((p for p in self.plugins if p.name == name), None)


def _enabled_plugins(path: Path, problems: list[str], top: str | None) -> dict[str, bool]:
    if not os.path.lexists(path):
        return {}
    if top is not None and not inside(path, top):
        problems.append(f"{path}: a symlink out of the project; its enabledPlugins are not used")
        return {}
    try:
        data = read_json(path)
    except ValueError as exc:
        problems.append(f"{path}: {exc}; its enabledPlugins are not used")
        return {}
    found = data.get("enabledPlugins") if isinstance(data, Mapping) else None
    if found is None:
        return {}
    if not isinstance(found, Mapping):
        problems.append(f"{path}: 'enabledPlugins' must be an object of name@market: true|false")
        return {}
    out: dict[str, bool] = {}
    for key, value in found.items():
        if isinstance(value, bool):
            out[str(key)] = value
        else:
            problems.append(f"{path}: enabledPlugins[{key!r}] must be true or false; ignored")
    return out


def claude_install_paths(home: Path | None, root: Path, problems: list[str]) -> dict[str, Path]:
    """``name@market`` → the folder Claude Code installed it in (version 1 and
    2 of its records; for several installs, the user's, then this project's)."""
    base = user_home(home)
    if base is None:
        return {}
    path = base / CLAUDE_RECORDS
    if not path.is_file():
        return {}
    try:
        data = read_json(path)
    except ValueError as exc:
        problems.append(f"{path}: {exc}; Claude Code's installed plugins are not read")
        return {}
    plugins = data.get("plugins") if isinstance(data, Mapping) else None
    if not isinstance(plugins, Mapping):
        problems.append(f"{path}: has no 'plugins' object; Claude Code's plugins are not read")
        return {}
    found: dict[str, Path] = {}
    for key, entries in plugins.items():
        options = entries if isinstance(entries, list) else [entries]
        ranked = sorted(
            (
                e
                for e in options
                if isinstance(e, Mapping) and isinstance(e.get("installPath"), str)
            ),
            key=lambda e: (
                e.get("scope") not in (None, "user"),
                e.get("projectPath") not in (None, str(root)),
            ),
        )
        if ranked:
            found[str(key)] = Path(os.path.expanduser(ranked[0]["installPath"]))
        else:
            problems.append(f"{path}: {key!r} has no 'installPath'; not loaded")
    return found


def _listed(path: Path | None, problems: list[str]) -> list[str]:
    if path is None:
        return []
    layer, _ = load_layer(path)  # the config loader reports the file's own problems
    return list(layer.file.plugins) if layer is not None else []


def discover_plugins(root: Path, *, home: Path | None = None) -> PluginSet:
    """The plugins for project ``root`` and the user at ``home`` (see above)."""
    root = Path(os.path.realpath(root))
    top = str(root)
    problems: list[str] = []
    notes: list[str] = []
    state = mewcode_home(home)
    base = user_home(home)
    records = read_records(home)
    if records.problem:
        problems.append(records.problem)
    chosen = records.enabled
    wanted: list[tuple[Path, PluginScope, str, str, str | None]] = []

    user_config = state / _USER_CONFIG if state is not None else None
    for entry in _listed(user_config, problems):
        folder = Path(os.path.expanduser(entry))
        if not folder.is_absolute():
            folder = (user_config.parent if user_config else Path.cwd()) / folder
        wanted.append((folder, "user", f"plugins in {user_config}", str(folder), None))
    for key, record in sorted(records.plugins.items()):
        if isinstance(record.get("path"), str):
            wanted.append((Path(record["path"]), "user", "/plugin install", key, key.split("@")[0]))

    installs = claude_install_paths(home, root, problems)
    user_on = (
        _enabled_plugins(base / CLAUDE_USER_SETTINGS, problems, None) if base is not None else {}
    )
    project_on: dict[str, bool] = {}
    for rel in PROJECT_SETTINGS:
        project_on.update(_enabled_plugins(root / rel, problems, top))
    for key in dict.fromkeys([*user_on, *project_on]):
        final = project_on.get(key, user_on.get(key, False))
        if not final:
            continue
        scope: PluginScope = "user" if user_on.get(key) else "project"
        origin = "~/.claude/settings.json" if scope == "user" else ".claude/settings.json"
        if key not in installs:
            problems.append(
                f"{origin}: enabledPlugins turns on {key!r}, which is not installed (no entry in "
                f"~/{CLAUDE_RECORDS}); not loaded"
            )
            continue
        wanted.append((installs[key], scope, f"enabledPlugins in {origin}", key, key.split("@")[0]))

    for entry in _listed(root / PROJECT_CONFIG, problems):
        folder = root / entry
        if os.path.isabs(entry) or ".." in Path(entry).parts or not inside(folder, top):
            problems.append(
                f"{root / PROJECT_CONFIG}: plugins entry {entry!r} leads out of the project; "
                "a project may list plugin folders inside it only"
            )
            continue
        wanted.append((folder, "project", f"plugins in {PROJECT_CONFIG}", str(folder), None))

    plugins: list[Plugin] = []
    for folder, scope, origin, key, hint in wanted:
        if chosen.get(key) is False:
            notes.append(f"{key}: turned off with /plugin disable")
            continue
        try:
            plugin, found = read_plugin(folder, scope=scope, origin=origin, key=key, name_hint=hint)
        except PluginError as exc:
            problems.append(f"{exc}; plugin not loaded")
            continue
        problems += found
        notes += plugin.notes
        kept = next((p for p in plugins if p.name == plugin.name), None)
        if kept is not None:
            if os.path.realpath(kept.root) != os.path.realpath(plugin.root):
                problems.append(
                    f"{plugin.root}: plugin {plugin.name!r} ({origin}) has the name of the one in "
                    f"{kept.root} ({kept.origin}), which is used instead"
                )
            continue
        plugins.append(plugin)
    return PluginSet(plugins=tuple(plugins), problems=tuple(problems), notes=tuple(notes))
