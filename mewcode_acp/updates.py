"""A turn's events as ACP ``session/update``s.

``TurnUpdates`` follows one turn: the model's text and thinking become
message and thought chunks; a tool call becomes a ``tool_call`` when the
model starts it, then ``tool_call_update``s (its title, input and
locations once its arguments are complete; ``in_progress`` when it runs,
with its output as it comes; ``completed`` or ``failed`` with the result,
and for a tool that changes a file the diff, worked out before it ran).
Notices reach the person as text. Everything read from disk for a diff
goes through the session's redactor first, as tool results already have.

A diff is worked out only for a call the permission gate did not deny: a
denied edit of a hidden file must not show the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import ToolCallLocation

from mewcode_kernel.core.events import (
    AgentEvent,
    ApprovalResolved,
    AssistantMessage,
    Notice,
    PermissionDecided,
    PostCompact,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from mewcode_kernel.core.messages import ImageBlock, ToolResultBlock, ToolUseBlock
from mewcode_kernel.core.tools import RunContext, Tool

__all__ = [
    "MAX_SHOWN",
    "TurnUpdates",
    "acp_kind",
    "diff_of",
    "locations_of",
    "result_text",
    "title_of",
]

Update = Any
"""One ``session/update`` payload (a model of ``acp.schema``)."""

MAX_SHOWN = 32_000
"""Characters of a tool's output or result sent to the client (the tail)."""

_KINDS = {"read": "read", "edit": "edit", "exec": "execute"}


def acp_kind(tool: Tool | None) -> str:
    """ACP's kind of a MewCode tool, from its own metadata."""
    if tool is None:
        return "other"
    if tool.search is not None:
        return "search"
    if tool.family == "agent":
        return "think"
    return _KINDS.get(tool.kind, "other")


def title_of(call: ToolUseBlock, tool: Tool | None) -> str:
    shown = tool.display(call.input) if tool is not None else ""
    title = f"{call.name} {shown}".strip()
    return title if len(title) <= 120 else title[:119] + "…"


def _absolute(root: Path, value: str) -> str:
    return os.path.normpath(value if os.path.isabs(value) else os.path.join(root, value))


def locations_of(call: ToolUseBlock, tool: Tool | None, root: Path) -> list[ToolCallLocation]:
    """The files a call names (its path arguments), as absolute paths."""
    if tool is None:
        return []
    paths = [call.input.get(name) for name in tool.path_args]
    return [ToolCallLocation(path=_absolute(root, p)) for p in paths if isinstance(p, str) and p]


def diff_of(
    call: ToolUseBlock, tool: Tool | None, root: Path, redact: Callable[[str], str]
) -> Any | None:
    """The diff of a file-changing call, before it runs (``None``: no file
    change, or it cannot be worked out), with known secrets taken out."""
    if tool is None or tool.preview is None:
        return None
    change = tool.change(RunContext(root=root), call.input)
    if change is None:
        return None
    before = redact(change.before) if change.before is not None else None
    return tool_diff_content(_absolute(root, change.path), redact(change.after), before)


def result_text(result: ToolResultBlock) -> str:
    if isinstance(result.content, str):
        return result.content
    parts = [
        p.describe() if isinstance(p, ImageBlock) else p.text
        for p in result.content
        if isinstance(p, ImageBlock) or p.text
    ]
    return "\n".join(parts)


def _tail(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else "…" + text[-MAX_SHOWN:]


@dataclass
class _Call:
    tool: Tool | None
    diff: Any | None = None
    output: list[str] = field(default_factory=list)
    size: int = 0


class TurnUpdates:
    """The updates of one turn, event by event (``updates(event)``)."""

    def __init__(
        self,
        root: Path,
        tools: Callable[[str], Tool | None],
        redact: Callable[[str], str],
    ) -> None:
        self.root = root
        self._tools = tools
        self._redact = redact
        self._calls: dict[str, _Call] = {}

    @property
    def open_calls(self) -> list[str]:
        """Calls announced and not finished (a cancelled turn closes them)."""
        return list(self._calls)

    def closing(self, status: str = "failed", why: str = "cancelled") -> list[Update]:
        """Updates closing every open call (the turn stopped under them)."""
        updates = [
            update_tool_call(i, status=status, content=[tool_content(text_block(why))])
            for i in self._calls
        ]
        self._calls.clear()
        return updates

    def updates(self, event: AgentEvent) -> list[Update]:
        handler = getattr(self, f"_on_{event.kind}", None)
        return handler(event) if handler is not None else []

    # --- the model ----------------------------------------------------------------

    def _on_text_delta(self, event: TextDelta) -> list[Update]:
        return [update_agent_message_text(event.text)] if event.text else []

    def _on_thinking_delta(self, event: ThinkingDelta) -> list[Update]:
        return [update_agent_thought_text(event.text)] if event.text else []

    def _on_tool_call_started(self, event: ToolCallStarted) -> list[Update]:
        tool = self._tools(event.name)
        self._calls[event.id] = _Call(tool=tool)
        return [
            start_tool_call(event.id, event.name, kind=acp_kind(tool), status="pending")  # type: ignore[arg-type]
        ]

    def _on_assistant_message(self, event: AssistantMessage) -> list[Update]:
        out: list[Update] = []
        for call in event.message.content:
            if not isinstance(call, ToolUseBlock):
                continue
            known = call.id in self._calls
            tool = self._tools(call.name)
            self._calls.setdefault(call.id, _Call(tool=tool))
            fields = {
                "title": title_of(call, tool),
                "kind": acp_kind(tool),
                "locations": locations_of(call, tool, self.root),
                "raw_input": call.input,
            }
            if known:
                out.append(update_tool_call(call.id, **fields))  # type: ignore[arg-type]
            else:
                out.append(start_tool_call(call.id, status="pending", **fields))  # type: ignore[arg-type]
        return out

    # --- permission ---------------------------------------------------------------

    def _on_permission_decided(self, event: PermissionDecided) -> list[Update]:
        if event.outcome != "deny":
            return []
        return self._failed(event.call.id, f"Permission denied: {event.reason}")

    def _on_approval_resolved(self, event: ApprovalResolved) -> list[Update]:
        if event.allowed:
            return []
        who = "nobody could approve it (headless)" if event.by == "headless" else "denied"
        return self._failed(event.call.id, f"Not allowed: {who}")

    def _failed(self, call_id: str, why: str) -> list[Update]:
        self._calls.pop(call_id, None)
        return [update_tool_call(call_id, status="failed", content=[tool_content(text_block(why))])]

    # --- running ------------------------------------------------------------------

    def _on_tool_started(self, event: ToolStarted) -> list[Update]:
        call = event.call
        state = self._calls.setdefault(call.id, _Call(tool=self._tools(call.name)))
        state.diff = diff_of(call, state.tool, self.root, self._redact)  # allowed: it runs now
        content = [state.diff] if state.diff is not None else None
        return [update_tool_call(call.id, status="in_progress", content=content)]

    def _on_tool_progress(self, event: ToolProgress) -> list[Update]:
        state = self._calls.get(event.call.id)
        if state is None or not event.output:
            return []
        state.output.append(event.output)
        state.size += len(event.output)
        if state.size > 2 * MAX_SHOWN:  # keep a bounded tail
            joined = "".join(state.output)[-MAX_SHOWN:]
            state.output, state.size = [joined], len(joined)
        shown = _tail("".join(state.output))
        return [update_tool_call(event.call.id, content=[tool_content(text_block(shown))])]

    def _on_tool_finished(self, event: ToolFinished) -> list[Update]:
        state = self._calls.pop(event.call.id, None)
        failed = event.result.is_error
        content: list[Any] = []
        if state is not None and state.diff is not None and not failed:
            content.append(state.diff)
        text = result_text(event.result)
        if text:
            content.append(tool_content(text_block(_tail(text))))
        return [
            update_tool_call(
                event.call.id, status="failed" if failed else "completed", content=content
            )
        ]

    # --- for the person -----------------------------------------------------------

    def _on_notice(self, event: Notice) -> list[Update]:
        if event.level == "info":
            return [update_agent_thought_text(event.message + "\n")]
        mark = "⚠" if event.level == "warning" else "✖"
        return [update_agent_message_text(f"\n{mark} {event.message}\n")]

    def _on_retry_scheduled(self, event: RetryScheduled) -> list[Update]:
        return [
            update_agent_thought_text(
                f"The model's service failed ({event.reason}); retrying in {event.delay:.0f} s "
                f"({event.attempt}/{event.max_attempts}).\n"
            )
        ]

    def _on_post_compact(self, event: PostCompact) -> list[Update]:
        if not event.ok:
            return [update_agent_thought_text(f"Compaction failed: {event.error}\n")]
        return [
            update_agent_thought_text(
                f"Compacted the conversation: {event.summarized_messages} older messages "
                "summarised.\n"
            )
        ]
