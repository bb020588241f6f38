"""The telemetry seam: what a session asks of its telemetry (``Telemetry``),
what telemetry reads of the session (``WatchedSession``), and the telemetry
of a session that exports nothing (``NullTelemetry``).

A session hands every turn's event stream to ``Telemetry.turn`` and uses
what comes back; ``NullTelemetry`` gives the stream back as it is, so a
session with telemetry off pays one method call per turn and imports
nothing of OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

from ..events import AgentEvent, Notice
from ..messages import ToolUseBlock
from ..tools.base import FileChange, Tool

__all__ = ["ModelInfo", "NullTelemetry", "Telemetry", "WatchedSession"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelInfo:
    """Who answers: the wire protocol (``anthropic``, ``openai``: the GenAI
    conventions' provider), the configured provider's name, its model, and
    the models the session knows by configuration (its aliases')."""

    system: str
    provider: str
    model: str
    known: frozenset[str] = frozenset()


@dataclass(frozen=True, kw_only=True, slots=True)
class WatchedSession:
    """What telemetry reads of the session it watches, each when it needs it:
    its id, permission mode and model; a tool by name (``None``: not one of
    its tools); whether a subagent type is defined; what a call would change
    in a file (read just before it runs); whether a task is one it launched;
    and its redactor (secrets by value, in every form)."""

    session_id: Callable[[], str | None]
    mode: Callable[[], str]
    model: Callable[[], ModelInfo]
    tool: Callable[[str], Tool | None]
    agent_known: Callable[[str], bool]
    change: Callable[[ToolUseBlock], FileChange | None]
    owns_task: Callable[[str], bool]
    redact: Callable[[str], str]


class Telemetry(Protocol):
    """A session's telemetry."""

    @property
    def enabled(self) -> bool: ...

    def turn(self, prompt: str, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        """``events`` (one user turn's), traced as they pass."""
        ...

    def compaction(self, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        """``events`` of a compaction asked for outside a turn (``/compact``)."""
        ...

    def notices(self) -> list[Notice]:
        """What the person should know about the export (once)."""
        ...

    def close(self) -> None:
        """The session ended."""
        ...


class NullTelemetry:
    """Exports nothing, costs nothing: the streams pass as they are."""

    def __init__(self, notices: list[Notice] | None = None) -> None:
        self._notices = notices or []

    @property
    def enabled(self) -> bool:
        return False

    def turn(self, prompt: str, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        return events

    def compaction(self, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        return events

    def notices(self) -> list[Notice]:
        notices, self._notices = self._notices, []
        return notices

    def close(self) -> None:
        return None
