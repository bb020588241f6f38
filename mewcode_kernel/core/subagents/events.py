"""The hook events of subagents and their tasks, with Claude Code's payload
keys: ``SubagentStart`` (its ``additionalContext`` reaches the child before
its first request), ``TaskCreated`` (a block refuses the launch, with the
hook's reason as the ``Agent`` call's result) and ``TaskCompleted``. A
child's own events carry its ``agent_id`` and ``agent_type``: it gets a
lifecycle scoped to it, and its ``Stop`` is ``SubagentStop``.

Also here: which model a role asks for (``route_model``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from ..agent import Agent
from ..errors import ToolError
from ..events import AgentEvent
from ..lifecycle import Lifecycle
from ..tools.context import RunContext
from .definition import MODEL_ALIASES

__all__ = ["child_lifecycle", "completed", "route_model", "started", "task_created"]


def child_lifecycle(
    parent: Agent, agent_id: str, agent_type: str, transcript: Path | None
) -> Lifecycle:
    """The parent's hooks, every payload naming the child."""
    where = {"agent_transcript_path": str(transcript)} if transcript is not None else {}
    return parent.lifecycle.scoped(agent_id=agent_id, agent_type=agent_type, **where)


async def started(ctx: RunContext, child: Agent) -> None:
    """``SubagentStart``: the rows go to the caller's cell, the context to
    the child's first request."""
    outcome = await child.lifecycle.fire("SubagentStart")
    for text in outcome.context:
        child.state.add_reminder(text)
    if ctx.call is not None:
        for event in outcome.events:
            ctx.emit(event)


async def task_created(
    ctx: RunContext, lifecycle: Lifecycle, task_id: str, subject: str, description: str
) -> None:
    """``TaskCreated`` before a background task is launched; a block
    refuses it (``ToolError`` with the hook's reason)."""
    outcome = await lifecycle.fire(
        "TaskCreated", task_id=task_id, task_subject=subject, task_description=description
    )
    if ctx.call is not None:
        for event in outcome.events:
            ctx.emit(event)
    if outcome.blocked:
        raise ToolError(f"the task was not created: hook {outcome.by}: {outcome.reason}")


async def completed(
    events: AsyncIterator[AgentEvent],
    lifecycle: Lifecycle,
    task_id: str,
    subject: str,
    description: str,
) -> AsyncIterator[AgentEvent]:
    """A background task's events, then ``TaskCompleted`` once it ended on
    its own (not when stopped or failed: those raise through here)."""
    async for event in events:
        yield event
    outcome = await lifecycle.fire(
        "TaskCompleted", task_id=task_id, task_subject=subject, task_description=description
    )
    for event in outcome.events:
        yield event


def route_model(wanted: str, aliases: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The model id to ask for (``None``: the parent's), and a note."""
    if not wanted or wanted == "inherit":
        return None, None
    if wanted in MODEL_ALIASES:
        mapped = aliases.get(wanted)
        if mapped is None:
            return None, (
                f"no model is configured for {wanted!r} with this provider (set "
                f"providers.<name>.models.{wanted} in .mewcode.yaml); using the parent's model"
            )
        return mapped, None
    return wanted, None
