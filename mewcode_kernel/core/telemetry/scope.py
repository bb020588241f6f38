"""What the runs of one session's telemetry share: ``Scope``.

The tracer and the signals, the session being watched, what the user
opted in to, the spans of recent tool calls (a background task links to
the call that launched it), the subagent runs nested in a call (taken over
by the task when a foreground subagent moves to the background), and the
permission mode last seen.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from opentelemetry.context import Context
from opentelemetry.trace import SpanContext, Tracer

from ..events import AgentEvent
from . import scrub
from .seam import WatchedSession
from .signals import Signals

__all__ = ["Nested", "Scope"]


class Nested(Protocol):
    """A run as the scope keeps it (``runs.Run``): the runs nested in its
    calls, whether it ended, what it sees, how it ends."""

    children: dict[str, Any]
    done: bool

    def see(self, event: AgentEvent) -> None: ...

    def end(self, reason: str) -> None: ...


_RECENT_CALLS = 512


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

    def remember_call(self, call_id: str, span: SpanContext) -> None:
        self.calls[call_id] = span
        if len(self.calls) > _RECENT_CALLS:
            self.calls.popitem(last=False)

    def common(self) -> dict[str, Any]:
        """What every span and event of the session carries."""
        return {"session.id": scrub.name(self.host.session_id() or "", other="")}

    def content(self, value: object) -> str:
        """A text the user opted in to, cleaned (``scrub.text``)."""
        return scrub.text(value, self.host.redact)

    def check_mode(self, context: Context | None) -> None:
        """Tell of a permission mode changed since last seen (a ``/mode``, a
        cell's ``--mode``, a tool leaving plan mode)."""
        now = scrub.name(self.host.mode(), other="other")
        if now == self.mode:
            return
        before, self.mode = self.mode, now
        if before:
            self.signals.event(
                "permission_mode_changed", {**self.common(), "from": before, "to": now}, context
            )
