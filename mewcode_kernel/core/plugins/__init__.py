"""Claude Code plugins: folders with ``.claude-plugin/plugin.json`` whose
skills, commands, agents, hooks and MCP servers join the session's.

``discover_plugins`` says which plugins load (the user's and the project's,
see ``discover``); ``read_plugin`` reads one folder under the path rules of
``paths``; ``plugin_servers`` turns their MCP servers into configured
servers; ``marketplace`` and ``install`` add marketplaces and install
plugins into the user's MewCode folder (``/plugin``).
"""

from __future__ import annotations

from .discover import PluginSet, discover_plugins
from .manifest import MANIFEST, PluginError, read_plugin
from .plugin import ROOT_VAR, Plugin, PluginHooks, PluginScope, substitute_root
from .servers import plugin_server_item, plugin_servers, server_name

__all__ = [
    "MANIFEST",
    "ROOT_VAR",
    "Plugin",
    "PluginError",
    "PluginHooks",
    "PluginScope",
    "PluginSet",
    "discover_plugins",
    "plugin_server_item",
    "plugin_servers",
    "read_plugin",
    "server_name",
    "substitute_root",
]
