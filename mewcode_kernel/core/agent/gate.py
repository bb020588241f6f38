"""The permission seam: an async gate asked before every tool call.

The full engine (modes, rules, sandbox) plugs in here; until then
``DefaultGate`` says: read-only inside the root, allow; anything else, ask.
When the answer is "ask" and nobody can be asked, the loop denies.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from ..messages import ToolUseBlock
from ..tools.base import Tool, ToolContext

__all__ = [
    "ApprovalAnswer",
    "ApprovalHandler",
    "ApprovalRequest",
    "Decision",
    "DefaultGate",
    "PermissionGate",
    "is_inside",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """``personal``: an "ask" only a person may answer (e.g. a write outside the
    root); a headless "allow" policy does not apply to it."""

    outcome: Literal["allow", "deny", "ask"]
    reason: str
    decided_by: str
    personal: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalRequest:
    call: ToolUseBlock
    tool: Tool
    reason: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalAnswer:
    """The person's answer. ``always`` asks the gate to allow such calls for the
    rest of the session, ``save`` also writes that rule to the project's local
    settings; ``note`` is passed to the model when the call is denied."""

    allow: bool
    always: bool = False
    save: bool = False
    note: str | None = None


ApprovalHandler = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]


class PermissionGate(Protocol):
    async def check(self, call: ToolUseBlock, tool: Tool, ctx: ToolContext) -> Decision: ...

    def remember(self, call: ToolUseBlock, tool: Tool, *, save: bool = False) -> list[str]:
        """Called after an "always allow" answer; returns the rules it added."""
        ...

    def offered_tools(self, tools: Iterable[Tool]) -> list[Tool]:
        """The tools the model may be offered now (plan mode: read-only only)."""
        ...


def is_inside(path: Path, roots: tuple[Path, ...]) -> bool:
    """Whether the fully resolved ``path`` lies inside one of ``roots``."""
    resolved = Path(os.path.realpath(path))
    return any(resolved == r or r in resolved.parents for r in roots)


class DefaultGate:
    """Read-only calls whose paths resolve inside the root: allow. Else: ask."""

    def __init__(self) -> None:
        self._always: set[str] = set()

    async def check(self, call: ToolUseBlock, tool: Tool, ctx: ToolContext) -> Decision:
        if tool.name in self._always:
            return Decision(
                outcome="allow", reason="always allowed this session", decided_by="session"
            )
        if not tool.read_only:
            return Decision(
                outcome="ask",
                reason=f"{tool.name} changes files or runs commands",
                decided_by="default",
            )
        outside = _first_outside(call, tool, ctx)
        if outside is not None:
            return Decision(
                outcome="ask", reason=f"{outside} is outside the project root", decided_by="default"
            )
        return Decision(
            outcome="allow", reason="read-only inside the project root", decided_by="default"
        )

    def remember(self, call: ToolUseBlock, tool: Tool, *, save: bool = False) -> list[str]:
        self._always.add(tool.name)
        return [tool.name]

    def offered_tools(self, tools: Iterable[Tool]) -> list[Tool]:
        return list(tools)


def _first_outside(call: ToolUseBlock, tool: Tool, ctx: ToolContext) -> str | None:
    """The first path argument that resolves outside the root and additional dirs."""
    roots = tuple(Path(os.path.realpath(r)) for r in (ctx.root, *ctx.additional_dirs))
    for arg in tool.path_args:
        value = call.input.get(arg)
        if not isinstance(value, str) or not value:
            continue
        target = Path(os.path.expanduser(value))
        if not target.is_absolute():
            target = ctx.root / target
        if not is_inside(target, roots):
            return value
    return None
