"""Background work: the task manager that owns every background turn and
background subagent (states, cap and queue, usage, subscriptions)."""

from __future__ import annotations

from .manager import FINISHED, TaskInfo, TaskManager, TaskState, TaskUpdate

__all__ = ["FINISHED", "TaskInfo", "TaskManager", "TaskState", "TaskUpdate"]
