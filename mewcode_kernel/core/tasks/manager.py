"""``TaskManager``: all background work of a front end or session (background
turns, background subagents) under one cap.

A task is launched with the work to do: a function returning the event
stream of an agent run. At most ``max_running`` tasks run at once; the rest
wait their turn in launch order (``queued``), never refused. The manager
consumes each task's events, counts its usage and tool calls, remembers its
last activity and final answer, and passes every event on to the task's own
``on_event`` and to subscribers, who may subscribe long after the cell that
launched the task has ended.

States move only along ``queued → running → completed | failed |
cancelled`` (``queued → cancelled`` too, and ``completed → queued`` when a
finished task is resumed), under a lock; ids are random and checked unique.
A task still queued or running when its manager closes (the session ends,
the kernel shuts down or is culled) ends ``interrupted``, recorded as such
before it is stopped; one found running in a record of an earlier process
(which died without closing) comes back ``interrupted`` too. Work that already runs (a foreground subagent sent to the
background) is ``adopt``ed: it keeps running, now owned by the manager.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..events import AgentEvent, AssistantMessage, ToolFinished, ToolProgress, TurnDone, innermost
from ..usage import Usage

__all__ = ["TaskInfo", "TaskManager", "TaskState", "TaskUpdate"]

TaskState = Literal["queued", "running", "completed", "failed", "cancelled", "interrupted"]
_MOVES: dict[TaskState, frozenset[TaskState]] = {
    "queued": frozenset({"running", "cancelled", "interrupted"}),
    "running": frozenset({"completed", "failed", "cancelled", "interrupted"}),
    "completed": frozenset({"queued"}),
    "failed": frozenset(),
    "cancelled": frozenset(),
    "interrupted": frozenset(),
}
FINISHED: frozenset[TaskState] = frozenset({"completed", "failed", "cancelled", "interrupted"})

Work = Callable[[], AsyncIterator[AgentEvent]]


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskInfo:
    """A snapshot of one task. ``parent_call``: the id of the tool call that
    launched it (a background subagent's ``Agent`` call; ``""``: none)."""

    id: str
    name: str
    kind: str
    description: str
    state: TaskState
    role: str = ""
    launched_at: float
    started_at: float | None = None
    ended_at: float | None = None
    usage: Usage = field(default_factory=Usage)
    tool_count: int = 0
    last_activity: str = ""
    last_activity_at: float | None = None
    result: str = ""
    error: str | None = None
    parent_call: str = ""

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def elapsed(self) -> float:
        """Seconds it has run (so far, or in all)."""
        if self.started_at is None:
            return 0.0
        return (self.ended_at or time.time()) - self.started_at


@dataclass(frozen=True, kw_only=True, slots=True)
class TaskUpdate:
    """What subscribers receive: the task as it is now, and the event that
    changed it (``None`` for a change of state)."""

    task: TaskInfo
    event: AgentEvent | None = None


class _Task:
    def __init__(self, info: TaskInfo, work: Work, on_event: Callable[[AgentEvent], Any] | None):
        self.info = info
        self.work = work
        self.on_event = on_event
        self.runner: asyncio.Task[None] | None = None
        self.done = asyncio.Event()


class TaskManager:
    """Runs background work under a cap (``max_running``, default 4)."""

    def __init__(self, *, max_running: int = 4, clock: Callable[[], float] = time.time) -> None:
        if max_running < 1:
            raise ValueError("max_running must be at least 1")
        self.max_running = max_running
        self._clock = clock
        self._lock = threading.Lock()
        self._tasks: dict[str, _Task] = {}
        self._queue: deque[str] = deque()
        self._subscribers: list[Callable[[TaskUpdate], Any]] = []
        self.peak_running = 0

    # --- reading ------------------------------------------------------------------

    def get(self, task_id: str) -> TaskInfo | None:
        task = self._tasks.get(task_id)
        return task.info if task is not None else None

    def find(self, name: str) -> TaskInfo | None:
        """The most recently launched task called ``name``."""
        named = [t.info for t in self._tasks.values() if t.info.name == name]
        return max(named, key=lambda i: i.launched_at) if named else None

    def list(self) -> list[TaskInfo]:
        """Unfinished tasks first, then by launch time."""
        infos = [t.info for t in self._tasks.values()]
        return sorted(infos, key=lambda i: (i.finished, i.launched_at))

    @property
    def running(self) -> int:
        return sum(1 for t in self._tasks.values() if t.info.state == "running")

    def subscribe(self, callback: Callable[[TaskUpdate], Any]) -> Callable[[], None]:
        """Call ``callback`` with every update of every task; returns the unsubscriber."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    # --- launching and stopping ------------------------------------------------------

    def launch(
        self,
        work: Work,
        *,
        name: str,
        kind: str = "turn",
        description: str = "",
        role: str = "",
        on_event: Callable[[AgentEvent], Any] | None = None,
        task_id: str | None = None,
        parent_call: str = "",
    ) -> TaskInfo:
        """Start ``work`` now, or queue it if ``max_running`` tasks are running.
        ``task_id`` reuses an id chosen earlier (it must be new here)."""
        with self._lock:
            task_id = self._claim(task_id)
            info = TaskInfo(
                id=task_id, name=name, kind=kind, description=description, state="queued",
                role=role, launched_at=self._clock(), parent_call=parent_call,
            )  # fmt: skip
            self._tasks[task_id] = _Task(info, work, on_event)
            self._queue.append(task_id)
        self._publish(self._tasks[task_id].info)
        self._start_queued()
        return self._tasks[task_id].info

    def adopt(
        self,
        work: Work,
        *,
        name: str,
        kind: str = "turn",
        description: str = "",
        role: str = "",
        seen: list[AgentEvent] | None = None,
        on_event: Callable[[AgentEvent], Any] | None = None,
        task_id: str | None = None,
        parent_call: str = "",
    ) -> TaskInfo:
        """Own work that is already running (it is not queued: it runs now);
        ``seen`` are the events it produced before, counted in its totals."""
        with self._lock:
            task_id = self._claim(task_id)
            now = self._clock()
            info = TaskInfo(
                id=task_id, name=name, kind=kind, description=description, state="running",
                role=role, launched_at=now, started_at=now, parent_call=parent_call,
            )  # fmt: skip
            task = self._tasks[task_id] = _Task(info, work, on_event)
            self.peak_running = max(self.peak_running, self.running)
        for event in seen or ():
            self._observe(task, event, forward=False)
        self._publish(task.info)
        self._spawn(task)
        return task.info

    def restore(self, info: TaskInfo) -> TaskInfo:
        """Show a task recorded by an earlier process: one that was still
        queued or running comes back ``interrupted``."""
        if info.id in self._tasks:
            return self._tasks[info.id].info
        if not info.finished:
            info = replace(
                info, state="interrupted", error=info.error or "the process running it stopped"
            )
        task = self._tasks[info.id] = _Task(info, _nothing, None)
        task.done.set()
        return info

    def resume(self, task_id: str, work: Work) -> TaskInfo:
        """Run more ``work`` as the same (completed) task, e.g. after a new
        message to it. Raises ``KeyError`` (unknown) or ``ValueError`` (busy)."""
        task = self._tasks[task_id]
        with self._lock:
            if task.info.state != "completed":
                raise ValueError(f"task {task_id} is {task.info.state}, not completed")
            task.work = work
            task.done = asyncio.Event()
            self._set(task, state="queued", ended_at=None, result="", error=None)
            self._queue.append(task_id)
        self._publish(task.info)
        self._start_queued()
        return task.info

    def stop(self, task_id: str) -> bool:
        """Ask a task to stop; ``False`` if it is unknown or already finished.
        A queued task ends cancelled at once; a running one when it sees it."""
        task = self._tasks.get(task_id)
        if task is None:
            return False
        with self._lock:
            state = task.info.state
            if state == "queued":
                self._queue.remove(task_id)
                self._set(task, state="cancelled", ended_at=self._clock())
                task.done.set()
        if state == "queued":
            self._publish(task.info)
            return True
        if state == "running" and task.runner is not None:
            task.runner.cancel()
            return True
        return False

    async def wait(self, task_id: str | None = None, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Wait until ``task_id`` (default: every task) has finished."""
        ids = [task_id] if task_id is not None else list(self._tasks)
        waits = [self._tasks[i].done.wait() for i in ids if i in self._tasks]
        if waits:
            await asyncio.wait_for(asyncio.gather(*waits), timeout)

    def interrupt_all(self, reason: str) -> list[TaskInfo]:
        """End every queued or running task ``interrupted`` (``reason`` as its
        error), telling subscribers (a recorder writes it) before the work is
        stopped, so the record holds even if the process is killed next.
        Returns the tasks interrupted."""
        ended: list[_Task] = []
        with self._lock:
            now = self._clock()
            for task in self._tasks.values():
                if task.info.state in ("queued", "running"):
                    self._set(task, state="interrupted", ended_at=now, error=reason)
                    ended.append(task)
            self._queue.clear()
        for task in ended:
            task.done.set()
            self._publish(task.info)
        for task in ended:
            if task.runner is not None:
                task.runner.cancel()
        return [task.info for task in ended]

    async def aclose(self, reason: str = "the session closed while it ran") -> None:
        """Interrupt every unfinished task (``interrupt_all``) and wait for them to end."""
        self.interrupt_all(reason)
        runners = [t.runner for t in self._tasks.values() if t.runner is not None]
        if runners:
            await asyncio.gather(*runners, return_exceptions=True)

    # --- inside -----------------------------------------------------------------------

    def _claim(self, task_id: str | None) -> str:
        if task_id is None:
            while True:
                task_id = f"task_{uuid.uuid4().hex[:16]}"
                if task_id not in self._tasks:
                    return task_id
        if task_id in self._tasks:
            raise ValueError(f"task id {task_id} is taken")
        return task_id

    def _set(self, task: _Task, **changes: Any) -> None:
        """Change a task's snapshot; a state change must be an allowed move."""
        new_state = changes.get("state")
        if new_state is not None and new_state != task.info.state:
            if new_state not in _MOVES[task.info.state]:
                raise RuntimeError(f"task {task.info.id}: {task.info.state} -> {new_state}")
        task.info = replace(task.info, **changes)

    def _start_queued(self) -> None:
        started: list[_Task] = []
        with self._lock:
            while self._queue and self.running < self.max_running:
                task = self._tasks[self._queue.popleft()]
                self._set(task, state="running", started_at=task.info.started_at or self._clock())
                started.append(task)
            self.peak_running = max(self.peak_running, self.running)
        for task in started:
            self._publish(task.info)
            self._spawn(task)

    def _spawn(self, task: _Task) -> None:
        task.runner = asyncio.ensure_future(self._run(task))
        # a runner cancelled before it ever ran never reaches _run's handlers
        task.runner.add_done_callback(lambda _, task=task: self._end(task, "cancelled", None))

    async def _run(self, task: _Task) -> None:
        state: TaskState = "completed"
        error: str | None = None
        try:
            async for event in task.work():
                self._observe(task, event)
        except asyncio.CancelledError:
            state = "cancelled"
        except Exception as exc:  # the task failed, the manager and the others go on
            state, error = "failed", f"{type(exc).__name__}: {exc}"
        if state == "completed" and task.info.error:
            state, error = "failed", task.info.error
        self._end(task, state, error)

    def _end(self, task: _Task, state: TaskState, error: str | None) -> None:
        """Finish a running task (once: later calls find it finished)."""
        with self._lock:
            if task.info.state != "running":
                return
            self._set(task, state=state, ended_at=self._clock(), error=error)
        task.done.set()
        self._publish(task.info)
        self._start_queued()

    def _observe(self, task: _Task, event: AgentEvent, *, forward: bool = True) -> None:
        changes: dict[str, Any] = {"last_activity_at": self._clock()}
        deeper = innermost(event) if isinstance(event, ToolProgress) else None
        if isinstance(deeper, AssistantMessage):  # a subagent the task started spent it
            changes["usage"] = task.info.usage + deeper.usage
        elif isinstance(event, AssistantMessage):
            changes["usage"] = task.info.usage + event.usage
            if event.message.text:
                changes["last_activity"] = event.message.text.strip().splitlines()[0][:200]
        elif isinstance(event, ToolFinished):
            changes["tool_count"] = task.info.tool_count + 1
            changes["last_activity"] = f"{event.call.name} finished"
        elif isinstance(event, TurnDone):
            changes["result"] = event.text
            if event.reason == "error":
                changes["error"] = event.error or "the run stopped with an error"
        with self._lock:
            self._set(task, **changes)
        if not forward:
            return
        if task.on_event is not None:
            task.on_event(event)
        self._publish(task.info, event)

    def _publish(self, info: TaskInfo, event: AgentEvent | None = None) -> None:
        update = TaskUpdate(task=info, event=event)
        for callback in list(self._subscribers):
            callback(update)


async def _nothing() -> AsyncIterator[AgentEvent]:
    """The work of a restored task: it ran in another process."""
    return
    yield  # an async generator
