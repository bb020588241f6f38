"""What a project's plugins could loosen: their hooks and MCP servers.

A project plugin (one only the project turns on, see ``core.plugins``) runs
nothing until the person trusts the project: each of its hook sections is
an item whose content is the section and the scripts inside the plugin its
commands name (with ``${CLAUDE_PLUGIN_ROOT}`` read as the plugin's folder),
each server an item like any project server's. The hooks loader and the MCP
servers check exactly these items before anything runs.
"""

from __future__ import annotations

from pathlib import Path

from ..config.trust_items import TrustItem, make_item
from ..plugins import Plugin, PluginHooks, discover_plugins, plugin_server_item, substitute_root
from .items import _claude_commands, _claude_hooks, hook_scripts

__all__ = ["plugin_hook_item", "plugin_hook_scripts", "project_plugin_items"]


def plugin_hook_scripts(plugin: Plugin, command: str) -> list[tuple[str, str]]:
    """The files inside the plugin ``command`` runs, with their SHA-256 now."""
    return hook_scripts(substitute_root(command, plugin.root), plugin.root)


def plugin_hook_item(plugin: Plugin, section: PluginHooks) -> TrustItem:
    scripts = [s for c in _claude_commands(section.hooks) for s in plugin_hook_scripts(plugin, c)]
    return make_item(
        "hooks",
        f"{plugin.label}: {section.rel}",
        "hooks",
        f"plugin {plugin.name!r} runs hooks: {_claude_hooks(section.hooks)}",
        [dict(section.hooks), scripts],
    )


def project_plugin_items(root: Path, *, home: Path | None = None) -> list[TrustItem]:
    """The items of every plugin the project turns on."""
    found: list[TrustItem] = []
    for plugin in discover_plugins(root, home=home).plugins:
        if plugin.scope != "project":
            continue
        found += [plugin_hook_item(plugin, section) for section in plugin.hooks]
        found += [plugin_server_item(plugin, n, e) for n, e in plugin.servers.items()]
    return found
