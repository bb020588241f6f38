"""Which of the parent's tools a subagent gets (the reference design's
five-layer filter, on tool metadata):

1. the parent's tools, 2. minus the ``Agent`` tool unless the child may
delegate in turn (``nest``), 3. for background runs only the tools marked
``background_ok`` (file tools, ``bash``, skills, MCP tools; not ``Agent``:
a background run does not nest), 4. minus the definition's
``disallowedTools``, 5. within its ``tools`` allowlist when it has one
(``system`` tools such as ``load_skill`` are never filtered out by an
allowlist). Entries match a tool's name, one of its aliases (``Read``,
``Bash``, ...) or, with ``*``, a pattern (``mcp__github__*``).
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from ..tools.base import Tool
from .definition import AgentDefinition

__all__ = ["child_tools", "is_read_only_role", "unknown_entries"]


def _named(tool: Tool, entries: Iterable[str]) -> bool:
    names = {tool.name, *tool.aliases}
    return any(e in names or ("*" in e and fnmatchcase(tool.name, e)) for e in entries)


def child_tools(
    parent: Iterable[Tool], definition: AgentDefinition, *, background: bool, nest: bool = False
) -> list[Tool]:
    """The tools a run of ``definition`` is offered, in the parent's order
    (``nest``: the child may start subagents of its own)."""
    tools = [t for t in parent if nest or t.family != "agent"]
    if background:
        tools = [t for t in tools if t.background_ok]
    tools = [t for t in tools if not _named(t, definition.disallowed_tools)]
    if definition.tools is not None:
        tools = [t for t in tools if t.system or _named(t, definition.tools)]
    return tools


def is_read_only_role(definition: AgentDefinition, tools: Iterable[Tool]) -> bool:
    """A role left without the file-editing tools (``Explore``) or in plan
    mode (``Plan``) is read-only: the permission engine then refuses anything
    that may write, by any route (a shell redirection, an MCP tool, a skill
    install)."""
    return definition.permission_mode == "plan" or not any(t.family == "edit" for t in tools)


def unknown_entries(definition: AgentDefinition, parent: Iterable[Tool]) -> list[str]:
    """Entries of the definition's lists that match no tool of the parent."""
    known = list(parent)
    entries = [*(definition.tools or ()), *definition.disallowed_tools]
    return [e for e in dict.fromkeys(entries) if not any(_named(t, [e]) for t in known)]
