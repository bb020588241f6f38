"""Subagents: definitions (Markdown + frontmatter) in a layered catalog, the
runner that builds and runs child agents (foreground, background, forks),
and the ``Agent`` and task tools."""

from __future__ import annotations

from .catalog import AgentCatalog, CatalogProblem, load_catalog
from .definition import AgentDefinition, DefinitionError, parse_definition
from .runner import SubagentRequest, SubagentRunner
from .tool_filter import child_tools, is_read_only_role
from .tools import subagent_toolset

__all__ = [
    "AgentCatalog",
    "AgentDefinition",
    "CatalogProblem",
    "DefinitionError",
    "SubagentRequest",
    "SubagentRunner",
    "child_tools",
    "is_read_only_role",
    "load_catalog",
    "parse_definition",
    "subagent_toolset",
]
