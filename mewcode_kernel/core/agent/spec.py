"""What an agent may do: ``AgentSpec``.

A frozen value: the tools it is offered, the permission gate that judges
its calls (mode, rules, read-only), its instructions and model, and how
long a turn may go on. A subagent's spec is its parent's, narrowed
(``narrowed``): never a tool, a mode or a write the parent lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from ..config import ToolSearchSettings
from ..permission.modes import Mode
from ..permission.seam import PermissionGate
from ..tools.base import Tool
from ..tools.registry import ToolRegistry

__all__ = ["DEFAULT_MAX_TURNS", "UNKNOWN_TOOL_TURN_LIMIT", "AgentSpec"]

DEFAULT_MAX_TURNS = 25
UNKNOWN_TOOL_TURN_LIMIT = 3


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentSpec:
    """What an agent may do.

    ``system_prompt`` is the text, or where to read it when a request is
    made (a session's prompt is refreshed after a compaction, also mid-turn);
    ``model``: the model to ask for (``None``: the provider's own);
    ``unknown_tool_limit``: model turns in a row that call only unknown tools
    before the turn ends; ``tool_search``: when MCP tool definitions are
    left out of requests for ``search_tools`` to find; ``depth``: how many
    delegations below the session's agent this one runs (0: the session's
    own, 1: its subagent, ...)."""

    tools: ToolRegistry
    gate: PermissionGate
    system_prompt: str | Callable[[], str] = ""
    model: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    max_tokens: int | None = None
    unknown_tool_limit: int = UNKNOWN_TOOL_TURN_LIMIT
    tool_search: ToolSearchSettings = field(default_factory=ToolSearchSettings)
    depth: int = 0

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise ValueError("max_turns must be at least 1")

    def prompt(self) -> str:
        """The system prompt as of now."""
        source = self.system_prompt
        return source() if callable(source) else source

    def narrowed(
        self,
        *,
        tools: Iterable[Tool] | None = None,
        mode: Mode | None = None,
        read_only: bool = False,
        system_prompt: str | Callable[[], str] | None = None,
        model: str | None = None,
        max_turns: int | None = None,
        unknown_tool_limit: int | None = None,
        delegated: bool = False,
    ) -> AgentSpec:
        """A spec for a child or a role: ``tools`` among this spec's only, a
        gate derived from this one (never a more lenient mode; read-only if
        asked or if this one is), other fields replaced where given;
        ``delegated``: the spec of a child this one starts (one level deeper)."""
        mine = {t.name for t in self.tools}
        kept = self.tools if tools is None else ToolRegistry([t for t in tools if t.name in mine])
        return replace(
            self,
            tools=kept,
            gate=self.gate.derive(mode=mode, read_only=read_only),
            system_prompt=self.system_prompt if system_prompt is None else system_prompt,
            model=model or self.model,
            max_turns=self.max_turns if max_turns is None else max_turns,
            unknown_tool_limit=(
                self.unknown_tool_limit if unknown_tool_limit is None else unknown_tool_limit
            ),
            depth=self.depth + 1 if delegated else self.depth,
        )
