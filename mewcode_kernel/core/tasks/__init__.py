"""Background work: the task manager that owns every background turn and
background subagent (states, cap and queue, usage, subscriptions), and
each session's record of the tasks it launched."""

from __future__ import annotations

from .manager import FINISHED, TaskInfo, TaskManager, TaskState, TaskUpdate
from .records import TaskRecorder

__all__ = ["FINISHED", "TaskInfo", "TaskManager", "TaskRecorder", "TaskState", "TaskUpdate"]
