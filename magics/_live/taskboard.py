"""The live task board: background tasks (subagents) as rows that keep
updating after the cell that launched them has ended, each with a Stop
button, and the approval cards of background work.

A row reads ``◐ counter · general-purpose · running · 12 s · 3.4k tokens ·
4 tools · glob finished``. Updates come from the task manager's
subscription and are painted at most four times a second; while a task
runs, its elapsed time ticks every second. Widget state reaches its views
whenever it changes, cell or no cell, so nothing needs the cell to run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.tasks import TaskInfo, TaskManager, TaskUpdate

from .card import ApprovalCard, card_with_answer
from .fmt import COLORS, MUTED, duration, esc

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["TaskBoard", "task_line"]

_REPAINT = 0.25
_TICK = 1.0
_STATE = {
    "queued": ("○", COLORS["muted"]),
    "running": ("◐", COLORS["info"]),
    "completed": ("✓", COLORS["ok"]),
    "failed": ("✗", COLORS["error"]),
    "cancelled": ("■", COLORS["muted"]),
    "interrupted": ("■", COLORS["warn"]),
}


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k tokens" if n >= 1000 else f"{n} tokens"


def task_line(info: TaskInfo, now: float | None = None) -> str:
    """One task as a line of text."""
    glyph = _STATE.get(info.state, ("?", ""))[0]
    parts = [f"{glyph} {info.name}"]
    if info.role and info.role != info.name:
        parts.append(info.role)
    parts.append(info.state)
    if info.started_at is not None:
        end = info.ended_at or (now if now is not None else time.time())
        parts.append(duration(max(end - info.started_at, 0.0)))
    usage = info.usage
    parts.append(_tokens(usage.total_input_tokens + usage.output_tokens))
    parts.append(f"{info.tool_count} tool{'s' if info.tool_count != 1 else ''}")
    if info.error:
        parts.append(info.error[:80])
    elif info.last_activity:
        parts.append(info.last_activity[:80])
    return " · ".join(parts)


class _Row:
    def __init__(self, info: TaskInfo, stop: Callable[[str], Any]) -> None:
        self.info = info
        self.html = w.HTML()
        self.stop = w.Button(description="Stop", icon="stop", layout=w.Layout(width="auto"))
        self.stop.add_class("mewcode-task-stop")
        self.stop.on_click(lambda _: stop(self.info.id))
        self.widget = w.HBox([self.html, self.stop], layout=w.Layout(align_items="center"))
        self.widget.add_class("mewcode-task")
        self.shown = ""

    def paint(self, now: float) -> None:
        text = task_line(self.info, now)
        if text == self.shown:
            return
        color = _STATE.get(self.info.state, ("", COLORS["muted"]))[1]
        first, _, rest = text.partition(" · ")
        with self.html.hold_sync():
            self.html.value = f'<span style="color:{color}">{esc(first)}</span>' + (
                f' <span style="{MUTED}">· {esc(rest)}</span>' if rest else ""
            )
        self.stop.disabled = self.info.finished
        self.shown = text


class TaskBoard:
    """Rows for the tasks it tracks (``track``), kept live from ``manager``.

    ``ask`` shows a background task's approval card here and waits for the
    answer; the card of a request answered on another board is closed.
    """

    def __init__(
        self,
        manager: TaskManager,
        *,
        title: str = "Background tasks",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.manager = manager
        self._clock = clock
        self._rows: dict[str, _Row] = {}
        self._cards: dict[str, ApprovalCard] = {}
        self._dirty = False
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self._handle: asyncio.TimerHandle | None = None
        self._ticker: asyncio.TimerHandle | None = None
        self.header = w.HTML(f'<b style="{MUTED}">{esc(title)}</b>')
        self.rows = w.VBox()
        self.cards = w.VBox()
        self.widget = w.VBox(
            [self.header, self.rows, self.cards],
            layout=w.Layout(border="1px solid var(--jp-border-color2,#e0e0e0)", padding="4px 8px"),
        )
        self.widget.add_class("mewcode-taskboard")
        self._unsubscribe = manager.subscribe(self._on_update)

    @property
    def tracked(self) -> list[str]:
        return list(self._rows)

    def track(self, ids: Iterable[str]) -> None:
        """Show these tasks (those the manager knows)."""
        added = False
        for task_id in ids:
            info = self.manager.get(task_id)
            if info is None or task_id in self._rows:
                continue
            self._rows[task_id] = _Row(info, self._stop)
            added = True
        if added:
            self.rows.children = tuple(r.widget for r in self._rows.values())
        self._paint()

    def close(self) -> None:
        self._unsubscribe()
        for handle in (self._handle, self._ticker):
            if handle is not None:
                handle.cancel()

    # --- approvals ---------------------------------------------------------------------

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Show the card for ``request`` (from a tracked task) and wait."""
        card, answered = card_with_answer(request)
        info = self.manager.get(request.task_id or "")
        if info is not None:
            card.widget.heading = (
                f'<div style="{MUTED}">background task {esc(info.name)} ({esc(info.id)}) asks:</div>'
                + card.widget.heading
            )
        self._cards[request.call.id] = card
        self.cards.children = (*self.cards.children, card.widget)
        try:
            return await answered
        finally:
            card.abandon("Answered elsewhere, or no longer waiting for an answer.")

    # --- painting --------------------------------------------------------------------

    def _stop(self, task_id: str) -> None:
        # a click arrives on a kernel subshell's thread (JupyterLab 4.6); tasks
        # belong to the loop the board was made on
        if self._loop is None or _on_loop(self._loop):
            self.manager.stop(task_id)
        else:
            self._loop.call_soon_threadsafe(self.manager.stop, task_id)

    def _on_update(self, update: TaskUpdate) -> None:
        row = self._rows.get(update.task.id)
        if row is None:
            return
        row.info = update.task
        self._dirty = True
        if self._handle is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._paint()
                return
            self._handle = loop.call_later(_REPAINT, self._paint)

    def _paint(self) -> None:
        self._handle = None
        self._dirty = False
        now = self._clock()
        for row in self._rows.values():
            row.paint(now)
        self._schedule_tick()

    def _schedule_tick(self) -> None:
        running = any(r.info.state == "running" for r in self._rows.values())
        if not running or self._ticker is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return

        def tick() -> None:
            self._ticker = None
            self._paint()

        self._ticker = loop.call_later(_TICK, tick)
