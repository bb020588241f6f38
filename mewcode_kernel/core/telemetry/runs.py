"""One agent's turn as telemetry follows it: ``Run``, spans built from the
events the turn yields, in the order they come.

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

import time
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
from .scope import Scope

__all__ = ["Run"]

_NS = 1_000_000_000
# events that may come between a call's result and its PostToolUse hooks
_AFTER_RESULT = frozenset({"hook_ran", "notice"})


class Run:
    """The spans of one agent's turn (``agent``: ``main``, or the subagent's
    type). ``parent``: the context it sits in; ``links``: the span that
    launched it, for one with its own trace (a background task)."""

    def __init__(
        self,
        scope: Scope,
        *,
        parent: Context,
        agent: str = "main",
        subagent: bool = False,
        links: Sequence[Link] = (),
        prompt: str | None = None,
        name: str = "mewcode.turn",
    ) -> None:
        self.scope = scope
        self.agent = agent
        self.subagent = subagent
        self.info = scope.host.model()
        self.done = False
        attrs: dict[str, Any] = {
            **scope.common(),
            "mewcode.agent.name": agent,
            "mewcode.subagent": subagent,
            "gen_ai.provider.name": scrub.name(self.info.system),
            "gen_ai.request.model": scrub.model_name(self.info.model, self.info.known),
        }
        if prompt is not None:
            attrs["mewcode.prompt.length"] = len(prompt)
            if scope.prompts:
                attrs["mewcode.prompt"] = scope.content(prompt)
        self.span: Span = scope.tracer.start_span(
            name, context=parent, attributes=attrs, links=list(links)
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

    def _submitted(self) -> None:
        prompt, self.prompt = self.prompt, None
        if prompt is None:
            return
        scope = self.scope
        self.span.set_attributes(scope.common())
        body = scope.content(prompt) if scope.prompts else None
        scope.signals.event(
            "user_prompt", {**scope.common(), "prompt_length": len(prompt)}, self.context, body
        )

    # --- dispatch ------------------------------------------------------------------

    def see(self, event: AgentEvent) -> None:
        kind = event.kind
        if self.prompt is not None and kind != "notice":
            self._submitted()
        if self.finishing is not None and kind not in _AFTER_RESULT:
            self._close_finished()
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event)

    # --- model requests ------------------------------------------------------------

    def _model_started(self, event: Any) -> None:
        self._end_model(None, "superseded")
        requested = scrub.model_name(event.model or self.info.model, self.info.known)
        system = scrub.name(self.info.system)
        self.requested = requested
        self.model = self.scope.tracer.start_span(
            f"chat {requested}",
            context=self.context,
            attributes={
                **self.scope.common(),
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": system,
                "gen_ai.system": system,
                "gen_ai.request.model": requested,
                "mewcode.provider.name": scrub.name(self.info.provider),
                "mewcode.request.number": event.turn,
            },
        )
        self.model_context = trace.set_span_in_context(self.model)
        self.request_start = time.perf_counter()
        self.first_token = None

    def _token(self, event: Any) -> None:
        if self.model is not None and self.first_token is None:
            self.first_token = time.perf_counter()

    def _retry(self, event: Any) -> None:
        status = str(event.status) if event.status else "unreachable"
        if self.model is not None:
            self.model.add_event("retry", {"attempt": event.attempt, "status": status})
        self._model_error(status, retried=True, message=event.reason)

    def _model_error(self, status: str, *, retried: bool, message: str | None) -> None:
        scope = self.scope
        scope.signals.error(self.requested, status, retried)
        values = {**scope.common(), "model": self.requested, "status": status, "retried": retried}
        body = scope.content(message) if scope.details and message else None
        scope.signals.event("model_error", values, self.model_context or self.context, body)

    def _answered(self, event: Any) -> None:
        span, scope = self.model, self.scope
        if span is None:
            return
        usage: Usage = event.usage
        model = scrub.response_model(event.model, self.requested)
        seconds = time.perf_counter() - self.request_start
        cost = scope.signals.usage(usage, model)
        attrs: dict[str, Any] = {
            "gen_ai.response.model": model,
            "gen_ai.usage.input_tokens": usage.total_input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
            "gen_ai.usage.cache_creation.input_tokens": usage.cache_creation_tokens,
            "gen_ai.response.finish_reasons": [scrub.reason(event.stop_reason)],
        }
        if self.first_token is not None:
            attrs["mewcode.time_to_first_token_ms"] = round(
                (self.first_token - self.request_start) * 1000, 3
            )
        if cost is not None:
            attrs["mewcode.cost_usd"] = cost
        if scope.prompts and event.message.text:
            attrs["mewcode.response.text"] = scope.content(event.message.text)
        span.set_attributes(attrs)
        span.end()
        scope.signals.request(seconds, self._model_keys(), None)
        values = {
            **scope.common(), "model": model, "input_tokens": usage.total_input_tokens,
            "output_tokens": usage.output_tokens, "duration_ms": round(seconds * 1000, 3),
            "cost_usd": cost, "stop_reason": attrs["gen_ai.response.finish_reasons"][0],
        }  # fmt: skip
        scope.signals.event("model_request", values, self.model_context)
        self.model = self.model_context = None
        self.queue = list(event.message.tool_uses)

    def _model_keys(self) -> dict[str, str]:
        return {
            "gen_ai.provider.name": scrub.name(self.info.system),
            "gen_ai.request.model": self.requested,
        }

    def _end_model(self, status: int | None, why: str) -> None:
        """End a model request that got no answer: ``why`` it did not."""
        span = self.model
        if span is None:
            return
        seconds = time.perf_counter() - self.request_start
        span.set_attribute("mewcode.request.outcome", why)
        error = None
        if why == "error":
            error = str(status) if status else "error"
            span.set_attribute("error.type", error)
            span.set_status(Status(StatusCode.ERROR, "the model request failed"))
            self._model_error(error, retried=False, message=None)
        span.end()
        self.scope.signals.request(seconds, self._model_keys(), error or why)
        self.model = self.model_context = None

    # --- tool calls ----------------------------------------------------------------

    def _call(self, call: Any, start: int | None = None) -> CallSpan:
        found = self.calls.get(call.id)
        if found is None:
            found = self.calls[call.id] = CallSpan.open(self.scope, call, self.context, start)
        return found

    def _decided(self, event: Any) -> None:
        call = self._call(event.call)
        self._unqueue(event.call.id)
        source, layer = scrub.decision_source(event.decided_by)
        call.span.set_attributes(
            {
                "mewcode.tool.permission.outcome": event.outcome,
                "mewcode.tool.permission.layer": layer,
            }
        )
        if self.scope.details:
            call.span.set_attribute(
                "mewcode.tool.decision.reason", self.scope.content(event.reason)
            )
        if event.outcome != "ask":
            call.decide(self.scope, event.outcome, source)
        self.scope.check_mode(self.context)

    def _asked(self, event: Any) -> None:
        call = self._call(event.call)
        call.waiting()
        self.asking = call

    def _resolved(self, event: Any) -> None:
        call = self._call(event.call)
        call.answered()
        self.asking = None
        decision = "allow" if event.allowed else "deny"
        if call.decision:  # asked again while it runs: outside the sandbox, say
            call.span.set_attribute("mewcode.tool.unsandboxed_retry", decision)
            return
        call.decide(self.scope, decision, "person" if event.by == "user" else "headless")

    def _started(self, event: Any) -> None:
        self._call(event.call).start(self.scope)

    def _progress(self, event: Any) -> None:
        nested = event.nested
        if nested is None:
            return
        child = self.children.get(event.call.id)
        if child is None or child.done:
            call = self._call(event.call)
            agent = event.call.input.get("subagent_type")
            known = isinstance(agent, str) and self.scope.host.agent_known(agent)
            agent = scrub.name(agent) if known else "subagent"
            call.span.set_attribute("mewcode.subagent.type", agent)
            child = self.children[event.call.id] = Run(
                self.scope, parent=call.context, agent=agent, subagent=True
            )
            self.scope.nested[event.call.id] = (self, child)
        child.see(nested)

    def _finished(self, event: Any) -> None:
        call = self._call(event.call)
        self._unqueue(event.call.id)
        call.finish(self.scope, event)
        child = self.children.pop(event.call.id, None)
        self.scope.nested.pop(event.call.id, None)
        if child is not None and not child.done:
            child.end("cancelled")
        self.finishing = call

    def _close_finished(self) -> None:
        call, self.finishing = self.finishing, None
        if call is not None:
            self.calls.pop(call.call.id, None)
            call.end()

    def _unqueue(self, call_id: str) -> None:
        self.queue = [c for c in self.queue if c.id != call_id]

    # --- hooks and compactions -----------------------------------------------------

    def _hook(self, event: Any) -> None:
        scope = self.scope
        start = time.time_ns() - int(event.seconds * _NS)
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
            **scope.common(),
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
        span.end()

    def _pre_compact(self, event: Any) -> None:
        self._end_compaction()
        self.compaction = self.scope.tracer.start_span(
            "mewcode.compaction",
            context=self.context,
            attributes={
                **self.scope.common(),
                "mewcode.compaction.trigger": scrub.word(event.trigger),
                "mewcode.compaction.tokens": event.tokens,
                "mewcode.compaction.messages": event.messages,
            },
        )

    def _post_compact(self, event: Any) -> None:
        scope = self.scope
        if self.compaction is None:
            self._pre_compact(_Trigger(event.trigger))
        span = self.compaction
        assert span is not None
        trigger = scrub.word(event.trigger)
        values = {
            "trigger": trigger, "ok": event.ok, "tokens_before": event.tokens_before,
            "tokens_after": event.tokens_after,
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
        scope.signals.event(
            "compaction", {**scope.common(), **values}, trace.set_span_in_context(span), body
        )
        self._end_compaction()

    def _end_compaction(self) -> None:
        span, self.compaction = self.compaction, None
        if span is not None:
            span.end()

    # --- the end -------------------------------------------------------------------

    def _turn_done(self, event: Any) -> None:
        self.end(event.reason, usage=event.usage, turns=event.model_turns, error=event.error,
                 status=event.status)  # fmt: skip

    def end(
        self,
        reason: str,
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
        self._submitted()
        self._end_model(status, "error" if reason == "error" else reason)
        self._close_finished()
        for call in list(self.calls.values()):
            call.end("cancelled" if reason == "cancelled" else "not run")
        self.calls.clear()
        for call_id, child in list(self.children.items()):
            scope.nested.pop(call_id, None)
            child.end("cancelled")
        self.children.clear()
        self._end_compaction()
        reason = scrub.reason(reason)
        attrs: dict[str, Any] = {"mewcode.turn.reason": reason}
        if turns is not None:
            attrs["mewcode.turn.model_requests"] = turns
        if usage is not None:
            attrs.update(
                {
                    "gen_ai.usage.input_tokens": usage.total_input_tokens,
                    "gen_ai.usage.output_tokens": usage.output_tokens,
                }
            )
        if scope.details and error:
            attrs["mewcode.turn.error"] = scope.content(error)
        self.span.set_attributes(attrs)
        if reason == "error":
            self.span.set_status(Status(StatusCode.ERROR, "the turn ended with an error"))
        scope.signals.turn(reason, "subagent" if self.subagent else "main")
        if not self.subagent:
            scope.check_mode(self.context)
        self.span.end()


class _Trigger:
    """A ``PreCompact`` stand-in for a ``PostCompact`` that came alone."""

    def __init__(self, trigger: str) -> None:
        self.trigger = trigger
        self.tokens = 0
        self.messages = 0


_HANDLERS: dict[str, Callable[[Run, Any], None]] = {
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
