"""``TaskRecorder``: the task table of one session (``tasks.jsonl``).

A session records every background unit it launches (background turns and
subagents alike) as the task manager reports each change of state, and
shows them again when it is resumed (running ones as interrupted). The
record lives in the folder of the session that launched the task, whoever
owns the manager it runs in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..session.records import task_table
from ..usage import Usage
from .manager import TaskInfo, TaskManager, TaskUpdate

__all__ = ["TaskRecorder"]


class TaskRecorder:
    """Records the tasks ``track``ed in ``manager`` under ``session_dir()``
    (nothing while the session has no folder yet)."""

    def __init__(self, manager: TaskManager, session_dir: Callable[[], Path | None]) -> None:
        self.manager = manager
        self._session_dir = session_dir
        self._tracked: dict[str, Path | None] = {}  # task id -> where it is recorded
        self._unsubscribe: Callable[[], None] | None = manager.subscribe(self._on_update)

    def track(self, task_id: str) -> None:
        """Record this task from now on (and now), in the session's folder of
        this moment (it stays there after ``/clear`` moved on)."""
        self._tracked[task_id] = self._session_dir()
        info = self.manager.get(task_id)
        if info is not None:
            self._write(info)

    def restore(self, directory: Path) -> list[TaskInfo]:
        """The tasks recorded in ``directory`` (a resumed session), shown
        again in the manager and recorded from now on."""
        latest: dict[str, dict[str, Any]] = {}
        for record in task_table(directory).read():
            if isinstance(record.get("id"), str):
                latest[record["id"]] = record
        restored = []
        for record in latest.values():
            info = self.manager.restore(_info(record))
            self._tracked[info.id] = directory
            restored.append(info)
        return restored

    def tasks(self) -> list[TaskInfo]:
        """Every task this session launched or restored, as the manager has it
        now (unfinished first, then by launch time)."""
        return [i for i in self.manager.list() if i.id in self._tracked]

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _on_update(self, update: TaskUpdate) -> None:
        if update.event is None and update.task.id in self._tracked:
            self._write(update.task)

    def _write(self, info: TaskInfo) -> None:
        directory = self._tracked.get(info.id) or self._session_dir()
        if directory is not None:
            task_table(directory).append(_record(info))


def _record(info: TaskInfo) -> dict[str, Any]:
    return {
        "id": info.id, "name": info.name, "kind": info.kind, "role": info.role,
        "description": info.description, "state": info.state, "launched_at": info.launched_at,
        "started_at": info.started_at, "ended_at": info.ended_at, "usage": info.usage.to_dict(),
        "tool_count": info.tool_count, "last_activity": info.last_activity,
        "result": info.result, "error": info.error, "recorded_at": time.time(),
    }  # fmt: skip


def _info(record: Mapping[str, Any]) -> TaskInfo:
    usage = record.get("usage") or {}
    return TaskInfo(
        id=record["id"], name=str(record.get("name", "")), kind=str(record.get("kind", "subagent")),
        description=str(record.get("description", "")), role=str(record.get("role", "")),
        state=record.get("state", "interrupted"), launched_at=float(record.get("launched_at") or 0),
        started_at=record.get("started_at"), ended_at=record.get("ended_at"),
        usage=Usage.from_dict(usage) if isinstance(usage, dict) else Usage(),
        tool_count=int(record.get("tool_count") or 0),
        last_activity=str(record.get("last_activity") or ""),
        result=str(record.get("result") or ""), error=record.get("error"),
    )  # fmt: skip
