"""``Plugin``: one loaded plugin folder and what it brings.

A plugin is a folder with ``.claude-plugin/plugin.json`` (name, version,
description and component paths). Its parts as MewCode uses them: skill
folders (``/<plugin>:<skill>``), command files (``/<plugin>:<command>``),
agent files (``<plugin>:<agent>``), hook sections (Claude Code's format)
and MCP server entries. ``scope`` says who turned it on: the user (their
own settings or installs) or the project (its settings), whose hooks and
servers wait for the project's trust.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..config._schema import McpServerEntry

__all__ = ["ROOT_VAR", "Plugin", "PluginHooks", "PluginScope", "substitute_root"]

PluginScope = Literal["user", "project"]
#: what Claude Code substitutes with the plugin's folder (and sets for its processes)
ROOT_VAR = "CLAUDE_PLUGIN_ROOT"
_ROOT_FORMS = ("${CLAUDE_PLUGIN_ROOT}", "$CLAUDE_PLUGIN_ROOT")


def substitute_root(text: str, root: Path) -> str:
    """``text`` with ``${CLAUDE_PLUGIN_ROOT}`` (and ``$CLAUDE_PLUGIN_ROOT``)
    replaced by ``root``. Only for text that no shell reads: a hook command
    keeps the variable and gets it in its environment instead, so a folder
    name holding shell syntax stays a name."""
    for form in _ROOT_FORMS:
        text = text.replace(form, str(root))
    return text


@dataclass(frozen=True, kw_only=True, slots=True)
class PluginHooks:
    """One ``hooks`` section of a plugin: the file it is in (``rel``, as
    written in the plugin) and its value (``{Event: [...]}``)."""

    rel: str
    path: Path
    hooks: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class Plugin:
    """One plugin. ``key`` identifies where it came from (``name@market`` or
    its folder); ``origin`` says, in words, what turned it on."""

    name: str
    root: Path
    scope: PluginScope
    origin: str
    key: str
    version: str = ""
    description: str = ""
    skill_dirs: tuple[Path, ...] = ()
    command_files: tuple[Path, ...] = ()
    agent_files: tuple[Path, ...] = ()
    hooks: tuple[PluginHooks, ...] = ()
    servers: Mapping[str, McpServerEntry] = field(default_factory=dict)
    server_files: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How messages and trust cards name it."""
        return f"plugin {self.name} ({self.root})"
