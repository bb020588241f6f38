"""What the event loop notes of an event before passing it on: ``Notes``.

The loop only decides whether an event matters (a run does nothing with
most text deltas, and nothing with a command's output), takes the time,
and reads what cannot wait: the session's id and permission mode as they
are now, and the change an edit is about to make (the file is read before
the tool writes it). Everything else is the worker's (``worker``).
"""

from __future__ import annotations

import time

from ..events import AgentEvent
from .calls import reads_change
from .runs import SEEN
from .scope import Moment
from .seam import WatchedSession

__all__ = ["Notes"]

_TOKENS = frozenset({"text_delta", "thinking_delta", "tool_call_started"})
_MODE_READ = frozenset({"permission_decided", "turn_done"})


class Notes:
    """Notes the events of one stream (a turn's, or a task manager's) of the
    session ``host``."""

    def __init__(self, host: WatchedSession) -> None:
        self.host = host
        # the runs (by their path of nesting calls) waiting for a first token
        self._awaiting: set[tuple[str, ...]] = set()

    def moment(self, *, mode: bool = False) -> Moment:
        """Now, with the session's id (and its mode, if ``mode``)."""
        host = self.host
        return Moment(
            ns=time.time_ns(),
            perf=time.perf_counter(),
            session=host.session_id() or "",
            mode=host.mode() if mode else "",
        )

    def note(self, event: AgentEvent, prefix: tuple[str, ...] = ()) -> Moment | None:
        """The moment of ``event``, or ``None`` when no run would do anything
        with it. ``prefix``: what tells its stream apart (a task's id)."""
        path = prefix
        inner = event
        while inner.kind == "tool_progress" and inner.nested is not None:  # type: ignore[union-attr]
            path = (*path, inner.call.id)  # type: ignore[union-attr]
            inner = inner.nested  # type: ignore[union-attr]
        kind = inner.kind
        if kind not in SEEN or kind == "tool_progress":
            return None
        if kind in _TOKENS:
            if path not in self._awaiting:
                return None
            self._awaiting.discard(path)
        elif kind == "model_request_started":
            self._awaiting.add(path)
        at = self.moment(mode=kind in _MODE_READ)
        if kind == "tool_started":
            call = inner.call  # type: ignore[union-attr]
            if reads_change(self.host.tool(call.name)):
                try:
                    change = self.host.change(call)
                except Exception:  # counting lines must never break a turn
                    change = None
                at = Moment(at.ns, at.perf, at.session, at.mode, change)
        return at
