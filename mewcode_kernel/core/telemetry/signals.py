"""Metrics and events (OpenTelemetry logs): ``Signals``, what a session's
telemetry records besides its spans.

Metrics: tokens by type and model, cost, tool decisions by tool, decision
and who decided, lines added and removed by edits, turns, model request
latency and errors by status, active sessions. Events, each tied to the
span it happened in: a prompt submitted, a model request, a model error, a
tool decision, a tool result, a permission mode changed, a compaction.
Every attribute value reaching here is already a name or a number, or a
text that ``scrub.text`` cleaned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.context import Context

from ..pricing import estimate_cost
from ..usage import Usage
from .pipeline import Pipeline
from .scrub import attributes

__all__ = ["EVENT_PREFIX", "Signals"]

EVENT_PREFIX = "mewcode."
_TOKEN_TYPES = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_read", "cache_read_tokens"),
    ("cache_creation", "cache_creation_tokens"),
)


class Signals:
    """The instruments and the event logger of one pipeline, for one session
    (``common``: the attributes every event carries: the session's id)."""

    def __init__(self, pipeline: Pipeline) -> None:
        meter = pipeline.meter
        self._logger = pipeline.logger
        self._tokens = meter.create_counter(
            "mewcode.token.usage", unit="{token}", description="Tokens by type and model"
        )
        self._cost = meter.create_counter(
            "mewcode.cost.usage", unit="USD", description="Estimated cost by model (list price)"
        )
        self._decisions = meter.create_counter(
            "mewcode.tool.decisions", unit="{decision}", description="Tool permission decisions"
        )
        self._lines = meter.create_counter(
            "mewcode.lines_of_code.count", unit="{line}", description="Lines added and removed"
        )
        self._turns = meter.create_counter("mewcode.turn.count", unit="{turn}")
        self._errors = meter.create_counter(
            "mewcode.model_request.errors", unit="{error}", description="Failed model requests"
        )
        self._latency = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="Model request latency"
        )
        self._active = meter.create_up_down_counter(
            "mewcode.session.active", unit="{session}", description="Sessions open"
        )

    # --- metrics -------------------------------------------------------------------

    def usage(self, usage: Usage, model: str) -> float | None:
        """Count ``usage`` on ``model``; the estimated cost, when its price is known."""
        for kind, field in _TOKEN_TYPES:
            count = getattr(usage, field)
            if count:
                self._tokens.add(count, {"type": kind, "model": model})
        cost = estimate_cost(model, usage)
        if cost:
            self._cost.add(cost, {"model": model})
        return cost

    def decision(self, tool: str, decision: str, source: str) -> None:
        self._decisions.add(1, {"tool": tool, "decision": decision, "source": source})

    def lines(self, added: int, removed: int) -> None:
        if added:
            self._lines.add(added, {"type": "added"})
        if removed:
            self._lines.add(removed, {"type": "removed"})

    def turn(self, reason: str, agent: str) -> None:
        self._turns.add(1, {"reason": reason, "agent": agent})

    def request(self, seconds: float, info: Mapping[str, str], error: str | None) -> None:
        """One model request's latency (``error``: its status, when it failed)."""
        self._latency.record(seconds, attributes(
            {**info, "gen_ai.operation.name": "chat", "error.type": error}
        ))  # fmt: skip

    def error(self, model: str, status: str, retried: bool) -> None:
        self._errors.add(1, {"model": model, "status": status, "retried": retried})

    def sessions(self, delta: int) -> None:
        self._active.add(delta)

    # --- events --------------------------------------------------------------------

    def event(
        self,
        name: str,
        values: Mapping[str, Any],
        context: Context | None,
        ns: int,
        body: str | None = None,
    ) -> None:
        """Emit the event ``mewcode.<name>`` that happened at ``ns`` in
        ``context`` (the span it belongs to)."""
        self._logger.emit(
            timestamp=ns,
            context=context,
            event_name=EVENT_PREFIX + name,
            body=body,
            attributes=attributes({"event.name": EVENT_PREFIX + name, **values}),
        )
