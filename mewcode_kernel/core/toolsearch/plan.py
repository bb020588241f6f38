"""Which tool definitions a request carries when tool search is on.

MCP tools are *deferrable*: when their definitions, counted with the
estimate compaction uses (``context.tokens.estimate_tools``), would take
more than ``share`` of the context window, every one of them is left out
and ``search_tools`` is offered in their place. The tools the model found
since (the conversation's ``found_tools``, in the order they were found)
are appended after the others, so the tools prefix of one request is the
prefix of the next and the provider's prompt cache holds.

Deferral needs the search tool among the offered tools: an agent built
without it (a caller's own registry) is sent every definition, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..config import ToolSearchSettings
from ..context.tokens import estimate_tools
from ..providers.base import ToolSpec
from ..tools.base import Tool
from .search_tool import SEARCH_TOOLS

__all__ = ["ToolPlan", "deferrable", "plan_tools"]


def deferrable(tool: Tool) -> bool:
    """A tool whose definition may be left out of requests: an MCP server's
    own (``mcp__<server>__<tool>``), never MewCode's tools for reading
    resources, which stay offered whatever the number of servers."""
    return tool.family == "mcp" and tool.name.startswith("mcp__")


class ToolPlan:
    """The outcome of ``plan_tools``: ``specs`` to send, and the deferrable
    tools ``search_tools`` may look through (empty when nothing is deferred)."""

    __slots__ = ("searchable", "specs")

    def __init__(self, specs: list[ToolSpec], searchable: list[Tool]) -> None:
        self.specs = specs
        self.searchable = searchable

    @property
    def deferring(self) -> bool:
        return bool(self.searchable)


def plan_tools(
    offered: Sequence[Tool],
    found: Sequence[str],
    *,
    window: int,
    settings: ToolSearchSettings,
) -> ToolPlan:
    """The tool definitions for the next request (see the module docstring).

    ``offered``: what the gate offers, in registry order; ``found``: names
    ``search_tools`` returned in this conversation, oldest first (names no
    longer offered are skipped, never reordered)."""
    search = [t for t in offered if t.name == SEARCH_TOOLS]
    later = [t for t in offered if deferrable(t)]
    budget = settings.share * window
    if (
        not search
        or not later
        or not settings.enabled
        or estimate_tools([t.spec() for t in later]) <= budget
    ):
        return ToolPlan([t.spec() for t in offered if t.name != SEARCH_TOOLS], [])
    by_name = {t.name: t for t in later}
    appended: list[ToolSpec] = []
    seen: set[str] = set()
    for name in found:
        tool = by_name.get(name)
        if tool is not None and name not in seen:
            seen.add(name)
            appended.append(tool.spec())
    kept = [t.spec() for t in offered if not deferrable(t)]
    return ToolPlan(kept + appended, later)
