"""One tool call as telemetry follows it: ``CallSpan``, the ``mewcode.tool``
span from the call's first event (its ``PreToolUse`` hook, or its
permission decision) to its result, with who decided and how long the
person took, an MCP call's client span inside it, and the lines an edit
added and removed.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ..events import ToolFinished
from ..messages import ToolUseBlock
from ..tools.base import FileChange, Tool
from . import scrub
from .scope import Moment, Scope

__all__ = ["CallSpan", "line_counts", "reads_change"]

# an edit of files larger than this is not diffed to count its lines
_MOST_DIFFED = 1 << 20


def reads_change(tool: Tool | None) -> bool:
    """Whether a call of ``tool`` edits a file whose change can be read first."""
    return tool is not None and tool.file_effect == "edited" and tool.preview is not None


@dataclass(kw_only=True)
class CallSpan:
    call: ToolUseBlock
    tool: Tool | None
    name: str
    span: Span
    context: Context
    decision: str = ""
    asked: bool = False  # the gate's answer was "ask"
    hook_blocked: bool = False
    asked_at: float | None = None
    waited: float = 0.0
    started: bool = False
    mcp: Span | None = None
    change: FileChange | None = None

    @classmethod
    def open(cls, scope: Scope, call: ToolUseBlock, parent: Context, start: int) -> CallSpan:
        tool = scope.host.tool(call.name)
        # a name the model made up is not exported: it could carry anything
        shown = scrub.name(call.name) if tool is not None else "unknown"
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": shown}
        if scope.details:
            attrs["mewcode.tool.input"] = scope.content(call.input)
        span = scope.tracer.start_span(
            "mewcode.tool", context=parent, attributes=attrs, start_time=start
        )
        scope.remember_call(call.id, span.get_span_context())
        return cls(
            call=call, tool=tool, name=shown, span=span, context=trace.set_span_in_context(span)
        )

    def decide(self, scope: Scope, decision: str, source: str, at: Moment) -> None:
        """The call's final permission: ``allow`` or ``deny``, and who said it."""
        self.decision = decision
        self.span.set_attributes(
            {"mewcode.tool.decision": decision, "mewcode.tool.decision.source": source}
        )
        scope.signals.decision(self.name, decision, source)
        scope.signals.event(
            "tool_decision",
            {**scope.common(), "tool": self.name, "decision": decision, "source": source},
            self.context,
            at.ns,
        )

    def start(self, scope: Scope, at: Moment) -> None:
        """The tool begins to run: an MCP call's client span opens; an edit's
        change was read on the loop just before."""
        self.started = True
        self.change = at.change
        tool = self.tool
        if tool is None or tool.family != "mcp":
            return
        _, _, rest = self.call.name.partition("__")
        server, _, remote = rest.partition("__")
        self.mcp = scope.tracer.start_span(
            f"tools/call {scrub.name(remote)}",
            context=self.context,
            kind=SpanKind.CLIENT,
            attributes={
                "mcp.method.name": "tools/call",
                "gen_ai.tool.name": scrub.name(remote),
                "mewcode.mcp.server": scrub.name(server),
            },
            start_time=at.ns,
        )

    def finish(self, scope: Scope, event: ToolFinished, at: Moment) -> str:
        """The result: the outcome in a word (also returned)."""
        result = event.result
        if not self.started:
            if self.decision == "deny":
                outcome = "denied"
            elif self.hook_blocked:
                outcome = "blocked"
            elif self.tool is None:
                outcome = "unknown_tool"
            else:
                outcome = "invalid_input" if not self.decision else "refused"
        else:
            outcome = "error" if result.is_error else "ok"
        duration = round(event.duration * 1000, 3)
        attrs: dict[str, object] = {
            "mewcode.tool.outcome": outcome,
            "mewcode.tool.duration_ms": duration,
        }
        if self.asked or self.waited:
            attrs["mewcode.tool.wait_ms"] = round(self.waited * 1000, 3)
        if outcome == "ok" and self.change is not None:
            added, removed = line_counts(self.change)
            attrs.update({"mewcode.lines.added": added, "mewcode.lines.removed": removed})
            scope.signals.lines(added, removed)
        if scope.details:
            attrs["mewcode.tool.output"] = scope.content(result.text)
        self.span.set_attributes(attrs)
        if result.is_error:
            self.span.set_status(Status(StatusCode.ERROR, f"tool {outcome}"))
        if self.mcp is not None:
            if result.is_error:
                self.mcp.set_status(Status(StatusCode.ERROR, "the MCP call failed"))
            self.mcp.end(end_time=at.ns)
            self.mcp = None
        values = {**scope.common(), "tool": self.name, "outcome": outcome, "duration_ms": duration}
        body = scope.content(result.text) if scope.details else None
        scope.signals.event("tool_result", values, self.context, at.ns, body)
        return outcome

    def waiting(self, at: Moment) -> None:
        self.asked_at = at.perf

    def answered(self, at: Moment) -> None:
        if self.asked_at is not None:
            self.waited += at.perf - self.asked_at
            self.asked_at = None

    def end(self, at: Moment, outcome: str | None = None) -> None:
        """End the span (``outcome``: it never finished, say why)."""
        if outcome is not None:
            self.span.set_attribute("mewcode.tool.outcome", outcome)
        if self.mcp is not None:
            self.mcp.end(end_time=at.ns)
            self.mcp = None
        self.span.end(end_time=at.ns)


def line_counts(change: FileChange) -> tuple[int, int]:
    """Lines ``change`` adds and removes (a file's whole text replaced counts
    as its new lines added and old ones removed when too large to diff)."""
    before = (change.before or "").splitlines()
    after = (change.after or "").splitlines()
    if len(change.before or "") + len(change.after or "") > _MOST_DIFFED:
        return len(after), len(before)
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in {"replace", "delete"}:
            removed += i2 - i1
        if tag in {"replace", "insert"}:
            added += j2 - j1
    return added, removed
