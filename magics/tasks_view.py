"""Background tasks in the notebook: a live board in the cell that launched
them (and wherever ``/tasks`` is run), and approvals of background work
shown on the boards that show the asking task.

A board stays live after its cell ends (widget updates reach their views at
any time) until every task on it has finished; it then gives way to its
static form (a board of finished tasks is shown static from the start), so
a saved notebook keeps what happened and no dead Stop button. An approval
asked by a background task goes to every live board showing that task; the
first answer counts, the other cards close. With no board showing it
(nobody to ask), the task is told nobody could be asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.tasks import TaskManager, TaskUpdate

if TYPE_CHECKING:
    from ._live.surface import Surface
    from ._live.taskboard import TaskBoard

__all__ = ["TaskBoards"]

_KEEP = 32


class TaskBoards:
    """The boards of one shell; ``surface`` is where a board is shown (the
    running cell's outputs by default); ``root``: the project, for the diffs
    of background approval cards."""

    def __init__(
        self, manager: TaskManager, *, root: Path | None = None, surface: Surface | None = None
    ) -> None:
        self.manager = manager
        self.root = root
        self._surface = surface
        self.boards: list[TaskBoard] = []

    def show(self, ids: Iterable[str], *, title: str = "Background tasks") -> TaskBoard:
        """A new board in the running cell, showing ``ids``."""
        from ._live.parts import Line, WidgetPart
        from ._live.surface import CellSurface
        from ._live.taskboard import TaskBoard

        surface = self._surface or CellSurface()
        board = TaskBoard(self.manager, title=title, root=self.root)
        board.track(ids)
        if board.done:  # nothing left to watch: the static form alone
            Line(surface, board.static_bundle()).paint()
            return board
        part = WidgetPart(surface, board.widget, board.static_bundle, kind="board")
        part.paint()

        def done() -> None:
            part.finalize()
            for card in board.widget.cards:
                card.close()
            if board in self.boards:
                self.boards.remove(board)

        board.on_done = done
        self.boards.append(board)
        for old in self.boards[:-_KEEP]:
            old.close()
        self.boards = self.boards[-_KEEP:]
        return board

    @contextmanager
    def watch(self, *, enabled: bool) -> Iterator[None]:
        """While a cell runs: the first subagent task it launches puts a board
        in the cell; later ones join that board (or a new one, once it is done)."""
        if not enabled:
            yield
            return
        board: list[TaskBoard] = []

        def on_update(update: TaskUpdate) -> None:
            info = update.task
            if info.kind != "subagent" or update.event is not None:
                return
            if not board or board[-1].done:
                if not board or info.id not in board[-1].tracked:
                    board.append(self.show([info.id]))
            elif info.id not in board[-1].tracked:
                board[-1].track([info.id])

        unsubscribe = self.manager.subscribe(on_update)
        try:
            yield
        finally:
            unsubscribe()

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """The background approval handler: ask on every board showing the task."""
        showing = [b for b in self.boards if request.task_id in b.tracked and not b.done]
        if not showing:
            return ApprovalAnswer(
                allow=False, note="no task board shows this task, so nobody could be asked"
            )
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(b.ask(request)) for b in showing]
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            return next(iter(done)).result()
        finally:
            for wait in waits:
                wait.cancel()
