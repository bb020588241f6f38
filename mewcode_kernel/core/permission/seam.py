"""The permission seam: what the agent loop asks before every tool call, and
how an "ask" reaches a person.

``PermissionGate`` says everything a caller needs (mode, rules, what to
offer, how to remember an "always allow", where decisions are logged), so
no caller asks what concrete gate it holds. ``ApprovalHandler`` is the
front end's side: it shows a request and returns the person's answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from ..messages import ToolUseBlock
from ..tools.base import Tool
from .decision import Decision
from .modes import Mode
from .rules import Rule, RuleProblem

if TYPE_CHECKING:
    from ..tools.context import RunContext

__all__ = [
    "ApprovalAnswer",
    "ApprovalHandler",
    "ApprovalRequest",
    "NobodyToAsk",
    "PermissionGate",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovalRequest:
    """A call that needs a person's yes or no. ``rules`` are the rules an
    "Always allow" would add; ``cwd`` is where a command would run;
    ``task_id`` the background task asking (``None``: the running cell)."""

    call: ToolUseBlock
    tool: Tool
    reason: str
    rules: tuple[str, ...] = ()
    cwd: Path | None = None
    task_id: str | None = None


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
"""Raises ``NobodyToAsk`` when it finds that nobody can answer."""


class NobodyToAsk(Exception):
    """Raised by an ``ApprovalHandler`` that finds nobody can answer (an ACP
    client that cannot show permission requests): the call is then decided
    as if no handler were set (the headless policy; never a person's yes)."""


class PermissionGate(Protocol):
    """Asked before every tool call; holds the mode and the rules."""

    @property
    def mode(self) -> Mode: ...

    @mode.setter
    def mode(self, value: str) -> None: ...

    @property
    def read_only(self) -> bool:
        """A read-only role's gate: nothing that may write is allowed, and what
        it runs gets the file system read-only."""
        ...

    @property
    def additional_dirs(self) -> tuple[Path, ...]:
        """Directories besides the root where reads and edits count as inside."""
        ...

    @property
    def problems(self) -> list[RuleProblem]:
        """Rules that could not be used, to show once to the person."""
        ...

    async def check(self, call: ToolUseBlock, tool: Tool, ctx: RunContext) -> Decision:
        """Decide ``call``; the decision is logged (``on_audit``)."""
        ...

    def record_approval(
        self,
        call: ToolUseBlock,
        tool: Tool,
        *,
        allowed: bool,
        by: Literal["user", "headless", "hook"],
        rules_added: tuple[str, ...] = (),
        note: str | None = None,
    ) -> None:
        """Log how an "ask" was answered (the one place approvals are logged)."""
        ...

    def suggest(self, call: ToolUseBlock, tool: Tool) -> list[str]:
        """The rules ``remember`` would add for ``call``."""
        ...

    def remember(self, call: ToolUseBlock, tool: Tool, *, save: bool = False) -> list[str]:
        """Called after an "always allow" answer; returns the rules it added."""
        ...

    def offered_tools(self, tools: Iterable[Tool]) -> list[Tool]:
        """The tools the model may be offered now (plan mode: read-only only)."""
        ...

    def list_rules(self) -> list[Rule]:
        """The active rules, deny first, then ask, then allow."""
        ...

    def derive(self, *, mode: Mode | None = None, read_only: bool = False) -> PermissionGate:
        """A gate for a subagent: the same rules and log, its own mode (never
        more lenient than this gate's), read-only if asked (or if this is)."""
        ...
