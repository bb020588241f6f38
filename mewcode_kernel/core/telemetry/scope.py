"""What the runs of one session's telemetry share (``Scope``), and what was
noted on the event loop when an event passed (``Moment``).

The scope holds the tracer and the signals, the session being watched, what
the user opted in to, the spans of recent tool calls (a background task
links to the call that launched it), the subagent runs nested in a call
(taken over by the task when a foreground subagent moves to the
background), and the session's id and permission mode as last noted.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from opentelemetry.context import Context
from opentelemetry.trace import SpanContext, Tracer

from ..events import AgentEvent
from ..tools.base import FileChange
from . import scrub
from .seam import WatchedSession
from .signals import Signals

__all__ = ["Moment", "Nested", "Scope"]

_RECENT_CALLS = 512


@dataclass(frozen=True, slots=True)
class Moment:
    """When an event passed (``ns``: the wall clock, for timestamps;
    ``perf``: the monotonic clock, for durations), and what of the session
    had to be read right then: its id, its permission mode (``""``: not
    read), and the change an edit was about to make (read before it ran)."""

    ns: int
    perf: float
    session: str = ""
    mode: str = ""
    change: FileChange | None = None


class Nested(Protocol):
    """A run as the scope keeps it (``runs.Run``): the runs nested in its
    calls, whether it ended, what it sees, how it ends."""

    children: dict[str, Any]
    done: bool

    def see(self, event: AgentEvent, at: Moment) -> None: ...

    def end(self, reason: str, at: Moment) -> None: ...


@dataclass(kw_only=True)
class Scope:
    tracer: Tracer
    signals: Signals
    host: WatchedSession
    prompts: bool
    details: bool
    #: the caller's trace (``TRACEPARENT``) that turns join; else each starts its own
    root: Context = field(default_factory=Context)
    calls: OrderedDict[str, SpanContext] = field(default_factory=OrderedDict)
    #: call id -> (the run whose call it is, the subagent's run inside it)
    nested: dict[str, tuple[Nested, Nested]] = field(default_factory=dict)
    mode: str = ""
    _session: str | None = None
    _common: dict[str, Any] = field(default_factory=dict)

    def remember_call(self, call_id: str, span: SpanContext) -> None:
        self.calls[call_id] = span
        if len(self.calls) > _RECENT_CALLS:
            self.calls.popitem(last=False)

    def common(self) -> dict[str, Any]:
        """What every event of the session carries: its id (none before its
        first turn, another after a ``/clear``), as last noted."""
        return self._common

    def noted(self, at: Moment) -> None:
        """What ``at`` says of the session is now the latest."""
        if at.session != self._session:
            self._session = at.session
            self._common = {"session.id": scrub.name(at.session, other="")}

    def content(self, value: object) -> str:
        """A text the user opted in to, cleaned (``scrub.text``)."""
        return scrub.text(value, self.host.redact)

    def check_mode(self, context: Context | None, at: Moment) -> None:
        """Tell of a permission mode changed since last noted (a ``/mode``, a
        cell's ``--mode``, a tool leaving plan mode)."""
        if not at.mode:
            return
        now = scrub.name(at.mode, other="other")
        if now == self.mode:
            return
        before, self.mode = self.mode, now
        if before:
            self.signals.event(
                "permission_mode_changed",
                {**self.common(), "from": before, "to": now},
                context,
                at.ns,
            )
