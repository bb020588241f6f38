"""A session's telemetry on OpenTelemetry: ``OtelTelemetry``.

Each turn's events pass through ``turn`` on their way to the front end:
the loop notes each (``notes``) and hands it to the worker thread
(``worker``), which makes it a ``Run``'s spans, metrics and events; the
turn never waits on any of that. Background subagents run outside any
turn: their events come from the task manager, and each of their turns is
a trace of its own, linked to the ``Agent`` call that launched it. A
foreground subagent that moves to the background keeps its run, now fed by
the task manager.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ..events import AgentEvent, Notice
from ..tasks import TaskInfo, TaskManager, TaskUpdate
from . import scrub
from .notes import Notes
from .options import TelemetryOptions
from .pipeline import pipeline_for
from .runs import Run
from .scope import Moment, Nested, Scope
from .seam import ModelInfo, WatchedSession
from .signals import Signals
from .worker import WORKER

__all__ = ["OtelTelemetry", "caller_context"]


class OtelTelemetry:
    """Traces, metrics and events of one session, exported as ``options`` say."""

    def __init__(
        self, options: TelemetryOptions, host: WatchedSession, tasks: TaskManager | None
    ) -> None:
        pipeline = pipeline_for(options)
        root, problems = caller_context(options)
        self._host = host
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
        self._tasks = Notes(host)
        self._background: dict[str, Nested] = {}
        self._unsubscribe = tasks.subscribe(self._on_task) if tasks is not None else None
        self._closed = False
        WORKER.submit("a session", self._scope.signals.sessions, +1)

    @property
    def enabled(self) -> bool:
        return True

    def notices(self) -> list[Notice]:
        notices, self._notices = self._notices, []
        return notices

    def turn(self, prompt: str, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        notes = Notes(self._host)
        stream = _Stream(self._scope, self._host.model(), prompt=prompt)
        WORKER.submit("a turn", stream.begin, notes.moment(mode=True))
        return _traced(stream, notes, events, "cancelled")

    def compaction(self, events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        notes = Notes(self._host)
        stream = _Stream(self._scope, self._host.model(), name="mewcode.compact")
        WORKER.submit("a compaction", stream.begin, notes.moment(mode=True))
        return _traced(stream, notes, events, "done")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._unsubscribe is not None:
            self._unsubscribe()
        WORKER.submit("a session's end", self._end, self._tasks.moment())

    def _end(self, at: Moment) -> None:
        for run in self._background.values():
            run.end("cancelled", at)
        self._background.clear()
        self._scope.signals.sessions(-1)

    # --- background subagents (the task manager calls these on the loop) --------------

    def _on_task(self, update: TaskUpdate) -> None:
        try:
            self._note_task(update)
        except Exception:  # the task manager goes on whatever telemetry does
            pass

    def _note_task(self, update: TaskUpdate) -> None:
        info = update.task
        if info.kind != "subagent":
            return
        if update.event is None:
            WORKER.submit("a task", self._task_changed, info, self._tasks.moment())
            return
        if not self._host.owns_task(info.id):
            return
        at = self._tasks.note(update.event, (info.id,))
        if at is not None:
            host = self._host
            agent = scrub.name(info.role) if host.agent_known(info.role) else "subagent"
            WORKER.submit(
                "a task's event", self._task_event, info, agent, host.model(), update.event, at
            )

    def _task_changed(self, info: TaskInfo, at: Moment) -> None:
        scope = self._scope
        run = self._background.get(info.id)
        nested = scope.nested.pop(info.parent_call, None) if info.parent_call else None
        if nested is not None and info.state == "running":
            # a foreground subagent moved to the background: its run goes on
            owner, child = nested
            owner.children.pop(info.parent_call, None)
            self._background[info.id] = child
        elif run is not None and info.finished:
            run.end(info.state, at)
            del self._background[info.id]

    def _task_event(
        self, info: TaskInfo, agent: str, model: ModelInfo, event: AgentEvent, at: Moment
    ) -> None:
        scope = self._scope
        scope.noted(at)
        run = self._background.get(info.id)
        if run is None or run.done:
            parent = scope.calls.get(info.parent_call) if info.parent_call else None
            started = Run(
                scope,
                parent=Context(),  # a trace of its own, linked to the call that launched it
                info=model,
                at=at,
                agent=agent,
                subagent=True,
                links=[Link(parent)] if parent is not None else (),
            )
            started.span.set_attribute("mewcode.task.id", scrub.name(info.id, other=""))
            run = self._background[info.id] = started
        run.see(event, at)
        if run.done:
            self._background.pop(info.id, None)


class _Stream:
    """A turn's run, made and fed on the worker."""

    def __init__(
        self, scope: Scope, info: ModelInfo, *, prompt: str | None = None, name: str = ""
    ) -> None:
        self.scope = scope
        self.info = info
        self.prompt = prompt
        self.name = name or "mewcode.turn"
        self.run: Run | None = None

    def begin(self, at: Moment) -> None:
        scope = self.scope
        scope.noted(at)
        scope.check_mode(None, at)
        self.run = Run(
            scope, parent=scope.root, info=self.info, at=at, prompt=self.prompt, name=self.name
        )

    def see(self, event: AgentEvent, at: Moment) -> None:
        if self.run is not None:
            self.scope.noted(at)
            self.run.see(event, at)

    def end(self, reason: str, at: Moment) -> None:
        if self.run is not None:
            self.run.end(reason, at)


async def _traced(
    stream: _Stream, notes: Notes, events: AsyncIterator[AgentEvent], reason: str
) -> AsyncIterator[AgentEvent]:
    """``events``, each noted and handed to the worker before it goes on;
    ``reason``: how the run ends when the stream ends without a ``TurnDone``
    (an interrupt)."""
    try:
        async for event in events:
            try:
                at = notes.note(event)
            except Exception:  # noting never breaks a turn; the worker logs its own failures
                at = None
            if at is not None:
                WORKER.submit("an event", stream.see, event, at)
            yield event
    finally:
        WORKER.submit("the end of a turn", stream.end, reason, notes.moment())


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
