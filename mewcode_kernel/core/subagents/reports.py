"""What a subagent's run comes back as: its answer or status line for the
``Agent`` call, its events nested in the caller's progress, the usage it
spent, and the ``<task-notification>`` a finished background task leaves
its parent; and what a fork sees of the parent's conversation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..errors import ToolError
from ..events import AgentEvent, ToolProgress, TurnDone
from ..messages import Message, TextBlock
from ..tasks import TaskInfo
from ..tools.context import RunContext
from ..usage import Usage
from .definition import AgentDefinition
from .fork import fork_history

__all__ = [
    "NOTIFICATION_LIMIT",
    "answer",
    "context_for_fork",
    "nest",
    "role_prompt",
    "status_line",
    "task_message",
    "task_notification",
    "usage_of",
]

NOTIFICATION_LIMIT = 4_000


def task_notification(info: TaskInfo, offload: Callable[[str, str], str | None]) -> str:
    """How a finished background task reaches its parent: a
    ``<task-notification>`` (a long result is cut, the rest ``offload``ed)."""
    lines = [f'Task {info.id} (name="{info.name}"): {info.state}']
    if info.error:
        lines.append(f"Error: {info.error}")
    result = info.result or "(no final answer)"
    if len(result) > NOTIFICATION_LIMIT:
        kept = result[:NOTIFICATION_LIMIT]
        where = offload(info.id, result)
        rest = f"{len(result) - NOTIFICATION_LIMIT:,} more characters"
        result = f"{kept}\n[... {rest}{f' in {where}' if where else ''}; TaskGet shows it all]"
    lines.append(f"Result: {result}")
    return "<task-notification>\n" + "\n".join(lines) + "\n</task-notification>"


RECENT_TURNS = 3


def context_for_fork(messages: list[Message], context: str) -> list[Message]:
    """What a fork skill sees of the parent's live conversation."""
    if context == "none" or not messages:
        return []
    if context == "recent":
        starts = [i for i, m in enumerate(messages) if m.role == "user" and not m.tool_results]
        messages = messages[starts[-RECENT_TURNS] :] if len(starts) >= RECENT_TURNS else messages
    return fork_history(messages)


def task_message(text: str) -> Message:
    return Message(role="user", content=[TextBlock(text=text)])


def nest(ctx: RunContext, event: AgentEvent) -> None:
    if ctx.call is not None:
        ctx.emit(ToolProgress(call=ctx.call, nested=event))


def usage_of(events: list[AgentEvent]) -> Usage:
    total = Usage()
    for event in events:
        if isinstance(event, TurnDone):
            return event.usage
        usage = getattr(event, "usage", None)
        if event.kind == "assistant_message" and isinstance(usage, Usage):
            total = total + usage
    return total


def answer(name: str, done: TurnDone | None) -> str:
    """The subagent's final answer for its caller, or a ``ToolError``."""
    if done is None:
        raise ToolError(f"the {name} subagent ended without an answer")
    if done.reason == "error":
        raise ToolError(f"the {name} subagent stopped with an error: {done.error}")
    text = done.text or "(the subagent gave no final answer)"
    if done.reason in ("max_turns", "unknown_tools"):
        text += f"\n\n[the subagent stopped early: {done.reason}]"
    return text


def status_line(info: TaskInfo, status: str) -> str:
    body: dict[str, Any] = {"task_id": info.id, "name": info.name, "status": status}
    if info.state == "queued":
        body["queued"] = True
    return json.dumps(body)


def role_prompt(definition: AgentDefinition, *, subagent: bool = True) -> str:
    """A role's system prompt: its definition's body (and, for a subagent,
    who reads its answer). Nothing in it changes between runs, so the
    prompt cache holds; where it works comes in the first message."""
    if not subagent:
        return definition.system_prompt
    note = (
        "You are running as a subagent of MewCode: your final answer goes back to the "
        "agent that asked, not to the user."
    )
    return f"{definition.system_prompt}\n\n{note}".strip()
