"""The session's task list as the client's plan (``plan`` updates).

MewCode's task list is the background work a session launched (background
subagents and turns, ``/tasks`` in a notebook). Each time a task changes
state the client gets the whole list again, as ACP's ``plan`` replaces the
one shown: one entry a task, in launch order, ``pending`` while queued,
``in_progress`` while running, ``completed`` once over (a task that failed,
was cancelled or interrupted says so in its text: ACP has no such status).
Tasks live on past the turn that launched them, so the updates are sent in
the order the changes happened, whenever they happen, from one sender.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from acp.helpers import plan_entry, update_plan
from acp.schema import AgentPlanUpdate

from mewcode_kernel.core.tasks import TaskInfo, TaskManager, TaskUpdate

__all__ = ["TaskPlan", "plan_of"]

_STATUS = {"queued": "pending", "running": "in_progress"}
_ENDED_BADLY = frozenset({"failed", "cancelled", "interrupted"})


def _content(task: TaskInfo) -> str:
    who = f"{task.name} ({task.role})" if task.role and task.role != task.name else task.name
    text = f"{who}: {task.description}" if task.description else who
    return f"{text} [{task.state}]" if task.state in _ENDED_BADLY else text


def plan_of(tasks: Iterable[TaskInfo]) -> AgentPlanUpdate:
    """The plan showing ``tasks``, in launch order."""
    ordered = sorted(tasks, key=lambda t: t.launched_at)
    return update_plan(
        plan_entry(_content(t), status=_STATUS.get(t.state, "completed"))  # type: ignore[arg-type]
        for t in ordered
    )


class TaskPlan:
    """Follows one session's task manager and sends its plan on every change
    of a task's state, until ``close``."""

    def __init__(self, tasks: TaskManager, send: Callable[[Any], Awaitable[None]]) -> None:
        self._tasks = tasks
        self._send = send
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[AgentPlanUpdate] = asyncio.Queue()
        self._sender = asyncio.ensure_future(self._run())
        self._unsubscribe: Callable[[], None] | None = tasks.subscribe(self._on_update)

    def _on_update(self, update: TaskUpdate) -> None:
        if update.event is not None:  # a task's own progress: its state is unchanged
            return
        plan = plan_of(self._tasks.list())  # as it is now, whichever thread tells
        with contextlib.suppress(RuntimeError):  # the server's loop is already closed
            self._loop.call_soon_threadsafe(self._queue.put_nowait, plan)

    async def _run(self) -> None:
        while True:
            plan = await self._queue.get()
            with contextlib.suppress(Exception):  # the client may be gone
                await self._send(plan)

    async def close(self) -> None:
        """Stop following (the session ends); plans not yet sent are dropped."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._sender
