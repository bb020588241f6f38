"""Reading one plugin folder: ``read_plugin``.

``.claude-plugin/plugin.json`` gives the name, version, description and
component paths; each component also has its default place (``skills/``,
``commands/``, ``agents/``, ``hooks/hooks.json``, ``.mcp.json``), and a path
the manifest gives adds to the default, as in Claude Code. ``hooks`` and
``mcpServers`` may also be written inline. As in Claude Code the manifest may
be left out: the plugin is then named after its marketplace entry or its
folder, and a note says so. A manifest that cannot be read or names no usable
name rejects the plugin (file and reason); a component that breaks a path
rule (``paths``) or cannot be read is reported and left out, the rest loads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config._mcp_json import validate_server
from ..config._schema import McpServerEntry
from .paths import PathRefused, confined, inside, read_json, resolve_component
from .plugin import Plugin, PluginHooks, PluginScope

__all__ = ["MANIFEST", "NAME", "PluginError", "read_plugin"]

MANIFEST = ".claude-plugin/plugin.json"
#: plugin and marketplace names: what ``/<plugin>:<skill>`` and folder names can carry
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_DEFAULTS = {"skills": "skills", "commands": "commands", "agents": "agents"}
_MAX_FILES = 500
#: parts of a Claude Code plugin MewCode has no use for: noted, never an error
_UNUSED = ("lspServers", "outputStyles", "userConfig", "channels")


class PluginError(ValueError):
    """A plugin that cannot be loaded at all; the message names file and reason."""


def _paths(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def read_plugin(
    folder: Path,
    *,
    scope: PluginScope,
    origin: str,
    key: str,
    name_hint: str | None = None,
) -> tuple[Plugin, list[str]]:
    """The plugin in ``folder`` and the problems met (each ``file: reason``).
    Raises ``PluginError`` when it cannot be loaded at all."""
    if not os.path.isdir(folder):
        raise PluginError(f"{folder}: is not a folder (from {origin})")
    top = os.path.realpath(folder)
    problems: list[str] = []
    notes: list[str] = []
    manifest_path = Path(top) / MANIFEST
    data: Mapping[str, Any] = {}
    if os.path.lexists(manifest_path):
        try:
            raw = read_json(manifest_path, top)
        except ValueError as exc:
            raise PluginError(f"{manifest_path}: {exc}") from None
        if not isinstance(raw, Mapping):
            raise PluginError(f"{manifest_path}: must be a JSON object, not {type(raw).__name__}")
        data = raw
        name = data.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise PluginError(
                f"{manifest_path}: 'name' must be a plugin name (letters, digits, '.', '_', "
                f"'-'), not {name!r}"
            )
    else:
        name = name_hint or Path(top).name
        if not NAME.match(name):
            raise PluginError(f"{folder}: has no {MANIFEST}, and {name!r} is no plugin name")
        notes.append(f"{folder}: has no {MANIFEST}; named {name!r} after its folder")
    where = str(manifest_path)
    for key in _UNUSED:
        if key in data:
            notes.append(f"{where}: '{key}' is not used by MewCode; the rest of the plugin is")

    def component(field: str, default: str | None) -> list[Path]:
        found: list[Path] = []
        if default is not None:
            path = Path(top) / default
            if os.path.lexists(path):
                if inside(path, top):
                    found.append(path)
                else:
                    problems.append(f"{path}: leads out of the plugin through a symlink; not used")
        if field in data and not isinstance(data[field], Mapping):
            for spec in _paths(data[field]):
                try:
                    path = resolve_component(top, spec, field)
                except PathRefused as exc:
                    problems.append(f"{where}: {exc}; not used")
                    continue
                if not path.exists():
                    problems.append(f"{where}: '{field}' path {spec!r} does not exist")
                elif path not in found:
                    found.append(path)
        return found

    skills = component("skills", _DEFAULTS["skills"])
    commands = _markdown(component("commands", _DEFAULTS["commands"]), top, problems)
    agents = _markdown(component("agents", _DEFAULTS["agents"]), top, problems)
    hooks = _hooks(data, top, where, component, problems)
    servers, server_files = _servers(data, top, where, component, problems)
    text = {k: data.get(k) for k in ("version", "description")}
    plugin = Plugin(
        name=name,
        root=Path(top),
        scope=scope,
        origin=origin,
        key=key,
        version=text["version"] if isinstance(text["version"], str) else "",
        description=text["description"] if isinstance(text["description"], str) else "",
        skill_dirs=tuple(skills),
        command_files=tuple(commands),
        agent_files=tuple(agents),
        hooks=tuple(hooks),
        servers=servers,
        server_files=server_files,
        notes=tuple(notes),
    )
    return plugin, problems


def _markdown(places: list[Path], top: str, problems: list[str]) -> list[Path]:
    """The ``.md`` files of ``places`` (files, or folders read with their
    subfolders), each confined to the plugin."""
    found: list[Path] = []
    for place in places:
        if place.is_file():
            candidates = [place]
        else:
            candidates = sorted(p for p in place.rglob("*.md") if not _hidden(p, place))
        for path in candidates:
            try:
                confined(path, top)
            except PathRefused as exc:
                problems.append(f"{exc}; not read")
                continue
            if path.suffix == ".md" and path not in found and path.is_file():
                found.append(path)
            if len(found) >= _MAX_FILES:
                problems.append(f"{place}: more than {_MAX_FILES} files; the rest are not read")
                return found
    return found


def _hidden(path: Path, base: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(base).parts)


def _hooks(
    data: Mapping[str, Any], top: str, where: str, component: Any, problems: list[str]
) -> list[PluginHooks]:
    found: list[PluginHooks] = []
    inline = data.get("hooks")
    if isinstance(inline, Mapping):
        found.append(PluginHooks(rel=f"{MANIFEST}#hooks", path=Path(top) / MANIFEST, hooks=inline))
    files: list[Path] = component("hooks", None)
    default = Path(top) / "hooks" / "hooks.json"
    if os.path.lexists(default):
        if not inside(default, top):
            problems.append(f"{default}: leads out of the plugin through a symlink; not used")
        elif default not in files:
            files.insert(0, default)
    for path in files:
        try:
            value = read_json(path, top)
        except ValueError as exc:
            problems.append(f"{path}: {exc}; its hooks were skipped")
            continue
        hooks = value.get("hooks") if isinstance(value, Mapping) else None
        if not isinstance(hooks, Mapping):
            problems.append(f"{path}: needs a top-level 'hooks' object; its hooks were skipped")
            continue
        rel = os.path.relpath(os.path.realpath(path), top)
        found.append(PluginHooks(rel=rel, path=path, hooks=hooks))
    return found


def _servers(
    data: Mapping[str, Any], top: str, where: str, component: Any, problems: list[str]
) -> tuple[dict[str, McpServerEntry], dict[str, str]]:
    sections: list[tuple[str, Any]] = []
    inline = data.get("mcpServers")
    if isinstance(inline, Mapping):
        sections.append((where, inline))
    files: list[Path] = component("mcpServers", None)
    default = Path(top) / ".mcp.json"
    if os.path.lexists(default) and default not in files:
        if inside(default, top):
            files.insert(0, default)
        else:
            problems.append(f"{default}: leads out of the plugin through a symlink; not used")
    for path in files:
        try:
            value = read_json(path, top)
        except ValueError as exc:
            problems.append(f"{path}: {exc}; its servers were skipped")
            continue
        if isinstance(value, Mapping) and "mcpServers" in value:
            value = value["mcpServers"]
        if not isinstance(value, Mapping):
            problems.append(f"{path}: must be a JSON object of servers; skipped")
            continue
        sections.append((str(path), value))
    servers: dict[str, McpServerEntry] = {}
    files_of: dict[str, str] = {}
    for shown, section in sections:
        for name, raw in section.items():
            if not isinstance(name, str) or name.startswith(("_", "$")):
                continue
            entry, issues = validate_server(name, raw, path=shown, line=None)
            problems += [str(i) for i in issues]
            if entry is not None:
                servers[name] = entry
                files_of[name] = shown
    return servers, files_of
