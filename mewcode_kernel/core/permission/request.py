"""``PermissionRequest``: what the engine needs to know about one call, read
from the tool's own metadata (the engine never names a tool)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..messages import ToolUseBlock
from ..tools.base import RuleFamily, SearchSpec, Tool

__all__ = ["Category", "PermissionRequest", "categorize"]

Category = Literal["read", "edit", "exec", "other"]


def categorize(tool: Tool) -> Category:
    """``read`` / ``edit`` / ``exec`` / ``other`` from the tool's metadata.

    An MCP tool is read-only only when its server annotates it
    ``readOnlyHint: true``; a read-only flag alone does not make it so.
    """
    if tool.family == "mcp":
        read = tool.read_only and tool.annotations.get("readOnlyHint") is True
        return "read" if read else "exec"
    if tool.read_only:
        return "read"
    return "other" if tool.kind == "read" else tool.kind


@dataclass(frozen=True, kw_only=True, slots=True)
class PermissionRequest:
    """One call as the engine sees it.

    ``names``: the rule names covering the tool; ``families``: for rules
    naming other tools of the session, how each reads its specifier (used
    where a call touches files another tool's rules guard, e.g. a shell
    redirection and ``Read`` rules). ``sandboxed``: what the call starts runs
    in an active OS sandbox (writes held to the project, denied paths hidden).
    """

    tool: str
    input: Mapping[str, Any]
    category: Category
    family: RuleFamily
    names: frozenset[str]
    path_args: tuple[str, ...] = ()
    search: SearchSpec | None = None
    reads_paths: bool = False
    subject: str | None = None
    default_allow: bool = False
    families: Mapping[str, RuleFamily] = field(default_factory=dict)
    sandboxed: bool = False

    @classmethod
    def from_call(
        cls,
        call: ToolUseBlock,
        tool: Tool,
        families: Mapping[str, RuleFamily] | None = None,
        *,
        sandbox_active: bool = False,
    ) -> PermissionRequest:
        """The request for ``call`` of ``tool`` (``sandbox_active``: the session's
        OS sandbox is on, which counts for tools that run in it)."""
        known = dict(families or {})
        for name in tool.names_for_rules:
            known.setdefault(name, tool.family)
        return cls(
            tool=tool.name,
            input=dict(call.input),
            category=categorize(tool),
            family=tool.family,
            names=tool.names_for_rules,
            path_args=tool.path_args,
            search=tool.search,
            reads_paths=tool.reads_paths,
            subject=tool.subject(call.input),
            default_allow=tool.default_allow,
            families=known,
            sandboxed=sandbox_active and tool.sandboxed,
        )

    @property
    def file_family(self) -> bool:
        """Whether rules for this tool are path rules (it names paths or walks a tree)."""
        return self.family in ("read", "edit") and bool(self.path_args or self.search)
