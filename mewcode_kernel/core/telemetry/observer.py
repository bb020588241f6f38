"""A session's telemetry on OpenTelemetry: ``OtelTelemetry``.

Each turn's events pass through ``turn`` on their way to the front end and
become a ``Run``'s spans as they pass; nothing in the core waits on it.
Background subagents run outside any turn: their events come from the task
manager, and each of their turns is a trace of its own, linked to the
``Agent`` call that launched it. A foreground subagent that moves to the
background keeps its run, now fed by the task manager.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..events import AgentEvent, Notice
from ..tasks import TaskManager, TaskUpdate
from . import scrub
from .options import TelemetryOptions
from .pipeline import pipeline_for
from .runs import Run
from .scope import Nested, Scope
from .seam import WatchedSession
from .signals import Signals

__all__ = ["OtelTelemetry", "caller_context"]

_log = logging.getLogger(__name__)


def _safely(told: set[str], what: str, fn: Callable[..., None], *args: Any) -> None:
    """``fn(*args)``; telemetry never breaks a turn or the task manager (a
    failure is logged, once per kind and session, in ``told``)."""
    try:
        fn(*args)
    except Exception:
        if what not in told:
            told.add(what)
            _log.warning("telemetry: %s failed; the session goes on", what, exc_info=True)


class OtelTelemetry:
    """Traces, metrics and events of one session, exported as ``options`` say."""

    def __init__(
        self, options: TelemetryOptions, host: WatchedSession, tasks: TaskManager | None
    ) -> None:
        pipeline = pipeline_for(options)
        root, problems = caller_context(options)
        self._scope = Scope(
            tracer=pipeline.tracer,
            signals=Signals(pipeline),
            host=host,
            prompts=options.log_user_prompts,
            details=options.log_tool_details,
            root=root,
        )
        self._notices = [
            Notice(level="warning", message=f"Telemetry: {p}")
            for p in (*options.problems, *pipeline.problems, *problems)
        ]
        self._background: dict[str, Nested] = {}
        self._told: set[str] = set()
        self._unsubscribe = (
            tasks.subscribe(lambda u: _safely(self._told, "a task update", self._on_task, u))
            if tasks is not None
            else None
        )
        self._closed = False
        self._scope.signals.sessions(+1)

    @property
    def enabled(self) -> bool:
        return True

    def notices(self) -> list[Notice]:
        notices, self._notices = self._notices, []
        return notices

    def turn(self, prompt: str, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        scope = self._scope
        scope.check_mode(None)
        return _traced(Run(scope, parent=scope.root, prompt=prompt), events, self._told)

    def compaction(self, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        run = Run(self._scope, parent=self._scope.root, name="mewcode.compact")
        return _traced(run, events, self._told, reason="done")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._unsubscribe is not None:
            self._unsubscribe()
        for run in self._background.values():
            run.end("cancelled")
        self._background.clear()
        self._scope.signals.sessions(-1)

    def _on_task(self, update: TaskUpdate) -> None:
        info = update.task
        if info.kind != "subagent":
            return
        scope = self._scope
        run = self._background.get(info.id)
        if update.event is None:
            nested = scope.nested.pop(info.parent_call, None) if info.parent_call else None
            if nested is not None and info.state == "running":
                # a foreground subagent moved to the background: its run goes on
                owner, child = nested
                owner.children.pop(info.parent_call, None)
                self._background[info.id] = child
            elif run is not None and info.finished:
                run.end(info.state)
                del self._background[info.id]
            return
        if not scope.host.owns_task(info.id):
            return
        if run is None or run.done:
            parent = scope.calls.get(info.parent_call) if info.parent_call else None
            agent = info.role if scope.host.agent_known(info.role) else "subagent"
            started = Run(
                scope,
                parent=Context(),  # a trace of its own, linked to the call that launched it
                agent=scrub.name(agent),
                subagent=True,
                links=[Link(parent)] if parent is not None else (),
            )
            started.span.set_attribute("mewcode.task.id", scrub.name(info.id, other=""))
            run = self._background[info.id] = started
        run.see(update.event)
        if run.done:
            self._background.pop(info.id, None)


async def _traced(
    run: Run, events: AsyncIterator[AgentEvent], told: set[str], *, reason: str = "cancelled"
) -> AsyncIterator[AgentEvent]:
    """``events``, each seen by ``run`` before it goes on; ``reason``: how the
    run ends when the stream ends without a ``TurnDone`` (an interrupt)."""
    try:
        async for event in events:
            _safely(told, "an event", run.see, event)
            yield event
    finally:
        _safely(told, "the end of a turn", run.end, reason)


def caller_context(options: TelemetryOptions) -> tuple[Context, list[str]]:
    """The caller's trace from ``TRACEPARENT`` (an empty context, a new trace
    per turn, when there is none or it is not a valid one)."""
    if not options.traceparent:
        return Context(), []
    carrier = {"traceparent": options.traceparent}
    if options.tracestate:
        carrier["tracestate"] = options.tracestate
    context = TraceContextTextMapPropagator().extract(carrier, context=Context())
    if not trace.get_current_span(context).get_span_context().is_valid:
        return Context(), [
            "TRACEPARENT is not a valid W3C traceparent; turns start their own traces"
        ]
    return context, []
