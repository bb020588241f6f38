"""One agent's turn as telemetry follows it: ``Run``, spans built from the
events the turn yields, in the order they came, each at the ``Moment`` it
was noted.

``mewcode.turn`` holds the turn; inside it, one ``chat <model>`` span per
model request (the GenAI conventions' attributes: provider, requested and
answering model, tokens, cache tokens, finish reasons, and the time to the
first token), one ``mewcode.tool`` span per call (``calls``), one
``mewcode.hook`` span per hook run (inside the call it ran for), one
``mewcode.compaction`` span per compaction. A subagent's events, nested in
its ``Agent`` call's progress, make a ``Run`` of their own inside that
call's span. The loop checks a round's calls in order, so a ``PreToolUse``
hook belongs to the first call of the round not yet decided, and a
``PostToolUse`` hook to the call that just finished.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, Status, StatusCode

from ..events import AgentEvent
from ..messages import ToolUseBlock
from ..usage import Usage
from . import scrub
from .calls import CallSpan
from .scope import Moment, Scope
from .seam import ModelInfo

__all__ = ["Run"]

_NS = 1_000_000_000
# events that may come between a call's result and its PostToolUse hooks
_AFTER_RESULT = frozenset({"hook_ran", "notice"})


class Run:
    """The spans of one agent's turn (``agent``: ``main``, or the subagent's
    type), begun ``at``. ``parent``: the context it sits in; ``links``: the
    span that launched it, for one with its own trace (a background task);
    ``info``: who answers it."""

    def __init__(
        self,
        scope: Scope,
        *,
        parent: Context,
        info: ModelInfo,
        at: Moment,
        agent: str = "main",
        subagent: bool = False,
        links: Sequence[Link] = (),
        prompt: str | None = None,
        name: str = "mewcode.turn",
    ) -> None:
        self.scope = scope
        self.agent = agent
        self.subagent = subagent
        self.info = info
        self.done = False
        attrs: dict[str, Any] = {
            "mewcode.agent.name": agent,
            "mewcode.subagent": subagent,
            "gen_ai.provider.name": scrub.name(info.system),
            "gen_ai.request.model": scrub.model_name(info.model, info.known),
            "mewcode.provider.name": scrub.name(info.provider),
        }
        if prompt is not None:
            attrs["mewcode.prompt.length"] = len(prompt)
            if scope.prompts:
                attrs["mewcode.prompt"] = scope.content(prompt)
        self.span: Span = scope.tracer.start_span(
            name, context=parent, attributes=attrs, links=list(links), start_time=at.ns
        )
        self.context = trace.set_span_in_context(self.span)
        self.model: Span | None = None
        self.model_context: Context | None = None
        self.requested = ""
        self.request_start = 0.0
        self.first_token: float | None = None
        self.calls: dict[str, CallSpan] = {}
        self.queue: list[ToolUseBlock] = []  # this round's calls not yet decided, in order
        self.asking: CallSpan | None = None
        self.finishing: CallSpan | None = None
        self.compaction: Span | None = None
        self.children: dict[str, Run] = {}
        # told once the session has its id (a first turn creates the session on disk)
        self.prompt = prompt

    def _submitted(self, at: Moment) -> None:
        prompt, self.prompt = self.prompt, None
        if prompt is None:
            return
        scope = self.scope
        self.span.set_attributes(scope.common())
        body = scope.content(prompt) if scope.prompts else None
        values = {**scope.common(), "prompt_length": len(prompt)}
        scope.signals.event("user_prompt", values, self.context, at.ns, body)

    # --- dispatch ------------------------------------------------------------------

    def see(self, event: AgentEvent, at: Moment) -> None:
        kind = event.kind
        if self.prompt is not None and kind != "notice":
            self._submitted(at)
        if self.finishing is not None and kind not in _AFTER_RESULT:
            self._close_finished(at)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event, at)

    # --- model requests ------------------------------------------------------------

    def _model_started(self, event: Any, at: Moment) -> None:
        self._end_model(None, "superseded", at)
        requested = scrub.model_name(event.model or self.info.model, self.info.known)
        self.requested = requested
        # each attribute costs the exporter's encoder some 8 µs: the hot spans
        # carry the GenAI conventions' and little else (the turn has the rest)
        self.model = self.scope.tracer.start_span(
            f"chat {requested}",
            context=self.context,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": scrub.name(self.info.system),
                "gen_ai.request.model": requested,
            },
            start_time=at.ns,
        )
        self.model_context = trace.set_span_in_context(self.model)
        self.request_start = at.perf
        self.first_token = None

    def _token(self, event: Any, at: Moment) -> None:
        if self.model is not None and self.first_token is None:
            self.first_token = at.perf

    def _retry(self, event: Any, at: Moment) -> None:
        status = str(event.status) if event.status else "unreachable"
        if self.model is not None:
            self.model.add_event("retry", {"attempt": event.attempt, "status": status}, at.ns)
        self._model_error(status, retried=True, message=event.reason, at=at)

    def _model_error(self, status: str, *, retried: bool, message: str | None, at: Moment) -> None:
        scope = self.scope
        scope.signals.error(self.requested, status, retried)
        values = {**scope.common(), "model": self.requested, "status": status, "retried": retried}
        body = scope.content(message) if scope.details and message else None
        scope.signals.event("model_error", values, self.model_context or self.context, at.ns, body)

    def _answered(self, event: Any, at: Moment) -> None:
        span, scope = self.model, self.scope
        if span is None:
            return
        usage: Usage = event.usage
        model = scrub.response_model(event.model, self.requested)
        seconds = at.perf - self.request_start
        cost = scope.signals.usage(usage, model)
        finish = scrub.reason(event.stop_reason)
        attrs: dict[str, Any] = {
            "gen_ai.response.model": model,
            "gen_ai.usage.input_tokens": usage.total_input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "gen_ai.response.finish_reasons": [finish],
        }
        if usage.cache_read_tokens:
            attrs["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
        if usage.cache_creation_tokens:
            attrs["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_creation_tokens
        if self.first_token is not None:
            ttft = round((self.first_token - self.request_start) * 1000, 3)
            attrs["mewcode.time_to_first_token_ms"] = ttft
        if cost is not None:
            attrs["mewcode.cost_usd"] = cost
        if scope.prompts and event.message.text:
            attrs["mewcode.response.text"] = scope.content(event.message.text)
        span.set_attributes(attrs)
        span.end(end_time=at.ns)
        scope.signals.request(seconds, self._model_keys(), None)
        values = {
            **scope.common(), "model": model, "input_tokens": usage.total_input_tokens,
            "output_tokens": usage.output_tokens, "duration_ms": round(seconds * 1000, 3),
            "cost_usd": cost, "stop_reason": finish,
        }  # fmt: skip
        scope.signals.event("model_request", values, self.model_context, at.ns)
        self.model = self.model_context = None
        self.queue = list(event.message.tool_uses)

    def _model_keys(self) -> dict[str, str]:
        return {
            "gen_ai.provider.name": scrub.name(self.info.system),
            "gen_ai.request.model": self.requested,
        }

    def _end_model(self, status: int | None, why: str, at: Moment) -> None:
        """End a model request that got no answer: ``why`` it did not."""
        span = self.model
        if span is None:
            return
        seconds = at.perf - self.request_start
        span.set_attribute("mewcode.request.outcome", why)
        error = None
        if why == "error":
            error = str(status) if status else "error"
            span.set_attribute("error.type", error)
            span.set_status(Status(StatusCode.ERROR, "the model request failed"))
            self._model_error(error, retried=False, message=None, at=at)
        span.end(end_time=at.ns)
        self.scope.signals.request(seconds, self._model_keys(), error or why)
        self.model = self.model_context = None

    # --- tool calls ----------------------------------------------------------------

    def _call(self, call: Any, start: int) -> CallSpan:
        found = self.calls.get(call.id)
        if found is None:
            found = self.calls[call.id] = CallSpan.open(self.scope, call, self.context, start)
        return found

    def _decided(self, event: Any, at: Moment) -> None:
        call = self._call(event.call, at.ns)
        self._unqueue(event.call.id)
        source, layer = scrub.decision_source(event.decided_by)
        if source == "policy":  # which of the engine's layers (a rule, mode or hook: said already)
            call.span.set_attribute("mewcode.tool.permission.layer", layer)
        call.asked = call.asked or event.outcome == "ask"
        if self.scope.details:
            call.span.set_attribute(
                "mewcode.tool.decision.reason", self.scope.content(event.reason)
            )
        if event.outcome != "ask":
            call.decide(self.scope, event.outcome, source, at)
        self.scope.check_mode(self.context, at)

    def _asked(self, event: Any, at: Moment) -> None:
        call = self._call(event.call, at.ns)
        call.waiting(at)
        self.asking = call

    def _resolved(self, event: Any, at: Moment) -> None:
        call = self._call(event.call, at.ns)
        call.answered(at)
        self.asking = None
        decision = "allow" if event.allowed else "deny"
        if call.decision:  # asked again while it runs: outside the sandbox, say
            call.span.set_attribute("mewcode.tool.unsandboxed_retry", decision)
            return
        call.decide(self.scope, decision, "person" if event.by == "user" else "headless", at)

    def _started(self, event: Any, at: Moment) -> None:
        self._call(event.call, at.ns).start(self.scope, at)

    def _progress(self, event: Any, at: Moment) -> None:
        nested = event.nested
        if nested is None:
            return
        child = self.children.get(event.call.id)
        if child is None or child.done:
            call = self._call(event.call, at.ns)
            agent = event.call.input.get("subagent_type")
            known = isinstance(agent, str) and self.scope.host.agent_known(agent)
            agent = scrub.name(agent) if known else "subagent"
            call.span.set_attribute("mewcode.subagent.type", agent)
            child = self.children[event.call.id] = Run(
                self.scope, parent=call.context, info=self.info, at=at, agent=agent, subagent=True
            )
            self.scope.nested[event.call.id] = (self, child)
        child.see(nested, at)

    def _finished(self, event: Any, at: Moment) -> None:
        call = self._call(event.call, at.ns)
        self._unqueue(event.call.id)
        call.finish(self.scope, event, at)
        child = self.children.pop(event.call.id, None)
        self.scope.nested.pop(event.call.id, None)
        if child is not None and not child.done:
            child.end("cancelled", at)
        self.finishing = call

    def _close_finished(self, at: Moment) -> None:
        call, self.finishing = self.finishing, None
        if call is not None:
            self.calls.pop(call.call.id, None)
            call.end(at)

    def _unqueue(self, call_id: str) -> None:
        self.queue = [c for c in self.queue if c.id != call_id]

    # --- hooks and compactions -----------------------------------------------------

    def _hook(self, event: Any, at: Moment) -> None:
        scope = self.scope
        start = at.ns - int(event.seconds * _NS)
        parent = self.context
        if event.event == "PreToolUse" and self.queue:
            call = self._call(self.queue[0], start)
            call.hook_blocked = call.hook_blocked or event.outcome == "blocked"
            parent = call.context
        elif event.event == "PostToolUse" and self.finishing is not None:
            parent = self.finishing.context
        elif event.event == "Notification" and self.asking is not None:
            parent = self.asking.context
        elif event.event in {"PreCompact", "PostCompact"} and self.compaction is not None:
            parent = trace.set_span_in_context(self.compaction)
        attrs: dict[str, Any] = {
            "mewcode.hook.event": scrub.name(event.event, other="other"),
            "mewcode.hook.name": scrub.name(event.name, spaces=True, other="hook"),
            "mewcode.hook.outcome": scrub.hook_outcome(event.outcome),
            "mewcode.hook.duration_ms": round(event.seconds * 1000, 3),
        }
        if scope.details:
            attrs["mewcode.hook.detail"] = scope.content(event.detail)
            attrs["mewcode.hook.output"] = scope.content(event.output)
        span = scope.tracer.start_span(
            "mewcode.hook", context=parent, attributes=attrs, start_time=start
        )
        if event.outcome == "failed":
            span.set_status(Status(StatusCode.ERROR, "the hook failed"))
        span.end(end_time=at.ns)

    def _pre_compact(self, event: Any, at: Moment) -> None:
        self._end_compaction(at)
        self.compaction = self.scope.tracer.start_span(
            "mewcode.compaction",
            context=self.context,
            attributes={
                "mewcode.compaction.trigger": scrub.word(event.trigger),
                "mewcode.compaction.tokens": event.tokens,
                "mewcode.compaction.messages": event.messages,
            },
            start_time=at.ns,
        )

    def _post_compact(self, event: Any, at: Moment) -> None:
        scope = self.scope
        if self.compaction is None:
            self._pre_compact(_Trigger(event.trigger), at)
        span = self.compaction
        assert span is not None
        values = {
            "trigger": scrub.word(event.trigger), "ok": event.ok,
            "tokens_before": event.tokens_before, "tokens_after": event.tokens_after,
        }  # fmt: skip
        span.set_attributes(
            {f"mewcode.compaction.{k}": v for k, v in values.items() if k != "trigger"}
            | {
                "mewcode.compaction.summarized_messages": event.summarized_messages,
                "mewcode.compaction.kept_messages": event.kept_messages,
                "gen_ai.usage.input_tokens": event.usage.total_input_tokens,
                "gen_ai.usage.output_tokens": event.usage.output_tokens,
            }
        )
        scope.signals.usage(event.usage, scrub.model_name(self.info.model, self.info.known))
        if not event.ok:
            span.set_status(Status(StatusCode.ERROR, "the compaction failed"))
        body = scope.content(event.error) if scope.details and event.error else None
        context = trace.set_span_in_context(span)
        scope.signals.event("compaction", {**scope.common(), **values}, context, at.ns, body)
        self._end_compaction(at)

    def _end_compaction(self, at: Moment) -> None:
        span, self.compaction = self.compaction, None
        if span is not None:
            span.end(end_time=at.ns)

    # --- the end -------------------------------------------------------------------

    def _turn_done(self, event: Any, at: Moment) -> None:
        self.end(event.reason, at, usage=event.usage, turns=event.model_turns,
                 error=event.error, status=event.status)  # fmt: skip

    def end(
        self,
        reason: str,
        at: Moment,
        *,
        usage: Usage | None = None,
        turns: int | None = None,
        error: str | None = None,
        status: int | None = None,
    ) -> None:
        """End the turn and whatever in it is still open."""
        if self.done:
            return
        self.done = True
        scope = self.scope
        self._submitted(at)
        self._end_model(status, "error" if reason == "error" else reason, at)
        self._close_finished(at)
        for call in list(self.calls.values()):
            call.end(at, "cancelled" if reason == "cancelled" else "not run")
        self.calls.clear()
        for call_id, child in list(self.children.items()):
            scope.nested.pop(call_id, None)
            child.end("cancelled", at)
        self.children.clear()
        self._end_compaction(at)
        reason = scrub.reason(reason)
        attrs: dict[str, Any] = {"mewcode.turn.reason": reason}
        if turns is not None:
            attrs["mewcode.turn.model_requests"] = turns
        if usage is not None:
            attrs["gen_ai.usage.input_tokens"] = usage.total_input_tokens
            attrs["gen_ai.usage.output_tokens"] = usage.output_tokens
        if scope.details and error:
            attrs["mewcode.turn.error"] = scope.content(error)
        self.span.set_attributes(attrs)
        if reason == "error":
            self.span.set_status(Status(StatusCode.ERROR, "the turn ended with an error"))
        scope.signals.turn(reason, "subagent" if self.subagent else "main")
        if not self.subagent:
            scope.check_mode(self.context, at)
        self.span.end(end_time=at.ns)


class _Trigger:
    """A ``PreCompact`` stand-in for a ``PostCompact`` that came alone."""

    def __init__(self, trigger: str) -> None:
        self.trigger = trigger
        self.tokens = 0
        self.messages = 0


_HANDLERS: dict[str, Callable[[Run, Any, Moment], None]] = {
    "model_request_started": Run._model_started,
    "text_delta": Run._token,
    "thinking_delta": Run._token,
    "tool_call_started": Run._token,
    "retry_scheduled": Run._retry,
    "assistant_message": Run._answered,
    "permission_decided": Run._decided,
    "approval_requested": Run._asked,
    "approval_resolved": Run._resolved,
    "tool_started": Run._started,
    "tool_progress": Run._progress,
    "tool_finished": Run._finished,
    "hook_ran": Run._hook,
    "pre_compact": Run._pre_compact,
    "post_compact": Run._post_compact,
    "turn_done": Run._turn_done,
}
#: the kinds a run does something with (the loop notes no others)
SEEN = frozenset(_HANDLERS)
