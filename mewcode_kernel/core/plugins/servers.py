"""A plugin's MCP servers as configured servers, joining the others.

Each is named ``plugin_<plugin>_<server>`` (its tools are
``mcp__plugin_<plugin>_<server>__<tool>``, as in Claude Code), with
``${CLAUDE_PLUGIN_ROOT}`` replaced by the plugin's folder in its command,
arguments, environment, URL and headers, and ``${VAR}`` expanded in its
environment and headers like any server's. A project plugin's server is a
project server: it starts only while the trust allows its exact entry.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from ..config._schema import McpServerEntry
from ..config.loader import server_config
from ..config.resolved import McpServerConfig
from ..config.trust_items import TrustItem, server_item
from .discover import PluginSet
from .plugin import Plugin, substitute_root

__all__ = ["plugin_server_item", "plugin_servers", "server_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def server_name(plugin: str, server: str) -> str:
    return _UNSAFE.sub("_", f"plugin_{plugin}_{server}")[:64]


def _entry(plugin: Plugin, entry: McpServerEntry) -> McpServerEntry:
    """``entry`` with the plugin's folder put in (no shell reads these)."""

    def sub(text: str | None) -> str | None:
        return substitute_root(text, plugin.root) if text is not None else None

    return entry.model_copy(
        update={
            "command": sub(entry.command),
            "args": [substitute_root(a, plugin.root) for a in entry.args],
            "env": {k: substitute_root(v, plugin.root) for k, v in entry.env.items()},
            "url": sub(entry.url),
            "headers": {k: substitute_root(v, plugin.root) for k, v in entry.headers.items()},
        }
    )


def plugin_server_item(plugin: Plugin, name: str, entry: McpServerEntry) -> TrustItem:
    """What the trust must cover for a project plugin's server to start
    (``name`` and ``entry`` as the plugin writes them)."""
    return server_item(f"{plugin.label}: {plugin.server_files.get(name, '')}", name, entry)


def plugin_servers(plugins: PluginSet, env: Mapping[str, str]) -> dict[str, McpServerConfig]:
    out: dict[str, McpServerConfig] = {}
    for plugin in plugins.plugins:
        for raw_name, raw in plugin.servers.items():
            entry = _entry(plugin, raw)
            name = server_name(plugin.name, raw_name)
            config = server_config(
                name,
                entry,
                plugin.scope,
                plugin.server_files.get(raw_name, str(plugin.root)),
                None,
                env,
            )
            item = plugin_server_item(plugin, raw_name, raw) if plugin.scope == "project" else None
            out[name] = dataclasses.replace(config, trust_item=item)
    return out
