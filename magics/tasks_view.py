"""Background tasks in the notebook: a live board in the cell that launched
them (and wherever ``/tasks`` is run), and approvals of background work
shown on the boards that show the asking task.

A board stays live after its cell ends (widget updates reach their views at
any time). An approval asked by a background task goes to every board
showing that task; the first answer counts, the other cards close. With no
board showing it (nobody to ask), the headless policy decides, which the
session arranges by not installing a handler for headless cells.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.tasks import TaskManager, TaskUpdate

if TYPE_CHECKING:
    from ._live.taskboard import TaskBoard

__all__ = ["TaskBoards"]

_KEEP = 32


def _display(widget: Any) -> None:
    from IPython.display import display

    display(widget)


class TaskBoards:
    """The boards of one shell. ``display`` shows a widget in the running cell."""

    def __init__(self, manager: TaskManager, *, display: Callable[[Any], None] = _display) -> None:
        self.manager = manager
        self._display = display
        self.boards: list[TaskBoard] = []

    def show(self, ids: Iterable[str], *, title: str = "Background tasks") -> TaskBoard:
        """A new board in the running cell, showing ``ids``."""
        from ._live.taskboard import TaskBoard

        board = TaskBoard(self.manager, title=title)
        board.track(ids)
        self._display(board.widget)
        self.boards.append(board)
        for old in self.boards[:-_KEEP]:
            old.close()
        self.boards = self.boards[-_KEEP:]
        return board

    @contextmanager
    def watch(self, *, enabled: bool) -> Iterator[None]:
        """While a cell runs: the first subagent task it launches puts a board
        in the cell; later ones join that board."""
        if not enabled:
            yield
            return
        board: list[TaskBoard] = []

        def on_update(update: TaskUpdate) -> None:
            info = update.task
            if info.kind != "subagent" or update.event is not None:
                return
            if not board:
                board.append(self.show([info.id]))
            elif info.id not in board[0].tracked:
                board[0].track([info.id])

        unsubscribe = self.manager.subscribe(on_update)
        try:
            yield
        finally:
            unsubscribe()

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """The background approval handler: ask on every board showing the task."""
        showing = [b for b in self.boards if request.task_id in b.tracked]
        if not showing:
            return ApprovalAnswer(
                allow=False, note="no task board shows this task, so nobody could be asked"
            )
        waits = [asyncio.ensure_future(b.ask(request)) for b in showing]
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            return next(iter(done)).result()
        finally:
            for wait in waits:
                wait.cancel()
