"""The live task board: background tasks (subagents) as rows that keep
updating after the cell that launched them has ended, each with a Stop
button while it can be stopped, and the approval cards of background work.

A row reads ``◐ counter · general-purpose · running · 12 s · ~3.4k tokens ·
4 tools · glob finished``: while its model streams, the tokens count what
has streamed so far (``~``, an estimate until the response ends); a task
waiting on one of the board's cards says ``waiting for you``. Updates come
from the task manager's subscription and are painted at most four times a
second; while a task runs, its elapsed time ticks every second. Widget
state reaches its views whenever it changes, cell or no cell.

The board is one widget (``static/board.js``) with its static form beside
it; once every task it shows has finished and no card waits, ``on_done``
is called and its owner replaces it by that static form.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import traitlets as t
from ipywidgets import widget_serialization

from mewcode_kernel.core.events import AssistantMessage, TextDelta, ThinkingDelta
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.tasks import TaskInfo, TaskManager, TaskUpdate

from .assets import LiveWidget, css, esm
from .card import ApprovalCard, CardWidget, card_with_answer
from .fmt import COLORS, MUTED, duration, esc
from .surface import Bundle

__all__ = ["BoardWidget", "TaskBoard", "task_line"]

_REPAINT = 0.25
_TICK = 1.0
_CHARS_PER_TOKEN = 4  # for the estimate while a response streams
_STATE = {
    "queued": ("○", COLORS["muted"]),
    "running": ("◐", COLORS["info"]),
    "waiting": ("?", COLORS["warn"]),
    "completed": ("✓", COLORS["ok"]),
    "failed": ("✗", COLORS["error"]),
    "cancelled": ("■", COLORS["muted"]),
    "interrupted": ("■", COLORS["warn"]),
}
_WAITING = "waiting for you"


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _tokens(n: int, estimate: bool = False) -> str:
    shown = f"{n / 1000:.1f}k tokens" if n >= 1000 else f"{n} tokens"
    return "~" + shown if estimate else shown


def task_line(
    info: TaskInfo, now: float | None = None, *, streamed: int = 0, waiting: bool = False
) -> str:
    """One task as a line of text; ``streamed``: characters of the response in
    flight (counted as an estimate); ``waiting``: a card waits for the person."""
    live = waiting and info.state == "running"
    glyph = _STATE["waiting" if live else info.state][0] if info.state in _STATE else "?"
    parts = [f"{glyph} {info.name}"]
    if info.role and info.role != info.name:
        parts.append(info.role)
    parts.append(_WAITING if live else info.state)
    if info.started_at is not None:
        end = info.ended_at or (now if now is not None else time.time())
        parts.append(duration(max(end - info.started_at, 0.0)))
    usage = info.usage
    counted = usage.total_input_tokens + usage.output_tokens
    estimate = streamed > 0 and not info.finished
    # a finished task's count is the provider's: what streamed is in it
    parts.append(_tokens(counted + (streamed // _CHARS_PER_TOKEN if estimate else 0), estimate))
    parts.append(f"{info.tool_count} tool{'s' if info.tool_count != 1 else ''}")
    if info.error:
        parts.append(info.error[:80])
    elif info.last_activity:
        parts.append(info.last_activity[:80])
    return " · ".join(parts)


class BoardWidget(LiveWidget):
    """``rows``: ``{id, state, html, stoppable}`` each; ``cards``: the approval
    cards of its tasks, drawn below the rows."""

    _esm = esm("board")
    _css = css("board")
    title = t.Unicode("").tag(sync=True)
    rows = t.List(t.Dict()).tag(sync=True)
    cards = t.List(t.Instance(CardWidget)).tag(sync=True, **widget_serialization)


class _Row:
    def __init__(self, info: TaskInfo) -> None:
        self.info = info
        self.streamed = 0  # characters of the response in flight
        self.asking = 0  # cards of this task waiting on this board

    def line(self, now: float) -> str:
        return task_line(self.info, now, streamed=self.streamed, waiting=self.asking > 0)

    def state(self) -> str:
        return "waiting" if self.asking and self.info.state == "running" else self.info.state

    def html(self, now: float) -> str:
        color = _STATE.get(self.state(), ("", COLORS["muted"]))[1]
        first, _, rest = self.line(now).partition(" · ")
        return f'<span style="color:{color}">{esc(first)}</span>' + (
            f' <span style="{MUTED}">· {esc(rest)}</span>' if rest else ""
        )


class TaskBoard:
    """Rows for the tasks it tracks (``track``), kept live from ``manager``.

    ``ask`` shows a background task's approval card here (with the diff of a
    file change, read from ``root``) and waits for the answer; the card of a
    request answered on another board is closed. ``on_done`` is called once
    every tracked task has finished and no card waits.
    """

    def __init__(
        self,
        manager: TaskManager,
        *,
        title: str = "Background tasks",
        root: Path | None = None,
        clock: Callable[[], float] = time.time,
        on_done: Callable[[], Any] | None = None,
    ) -> None:
        self.manager = manager
        self.title = title
        self.root = root
        self.on_done = on_done
        self._clock = clock
        self._rows: dict[str, _Row] = {}
        self._cards: list[ApprovalCard] = []
        self._waiting = 0
        self.done = False
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        self._handle: asyncio.TimerHandle | None = None
        self._ticker: asyncio.TimerHandle | None = None
        self.widget = BoardWidget(
            title=title,
            offline=f'<div style="{MUTED}">■ the kernel stopped: this board no longer updates</div>',
        )
        self.widget.on_msg(self._on_message)
        self._unsubscribe = manager.subscribe(self._on_update)

    @property
    def tracked(self) -> list[str]:
        return list(self._rows)

    @property
    def finished(self) -> bool:
        """Every task shown has finished and no card waits."""
        return not self._waiting and all(r.info.finished for r in self._rows.values())

    def track(self, ids: Iterable[str]) -> None:
        """Show these tasks (those the manager knows)."""
        for task_id in ids:
            info = self.manager.get(task_id)
            if info is not None and task_id not in self._rows:
                self._rows[task_id] = _Row(info)
        self._paint()

    def close(self) -> None:
        self._unsubscribe()
        for handle in (self._handle, self._ticker):
            if handle is not None:
                handle.cancel()

    def static_bundle(self) -> Bundle:
        """The board without the widget: its rows and answered cards as they are."""
        now = self._clock()
        rows = [r.line(now) for r in self._rows.values()]
        cards = [c.line or f"? {c.request.call.name} · waiting for approval" for c in self._cards]
        html = (
            '<div class="mewcode-taskboard mewcode-board-static" style="margin:4px 0">'
            f'<div style="{MUTED};font-weight:bold">{esc(self.title)}</div>'
            + "".join(f'<div class="mewcode-task">{r.html(now)}</div>' for r in self._rows.values())
            + "".join(f'<div class="mewcode-approval">{esc(line)}</div>' for line in cards)
            + "</div>"
        )
        text = "\n".join([self.title, *rows, *cards])
        return {"text/html": html, "text/markdown": text, "text/plain": text}

    # --- approvals ---------------------------------------------------------------------

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Show the card for ``request`` (from a tracked task) and wait."""
        card, answered = card_with_answer(request, root=self.root)
        info = self.manager.get(request.task_id or "")
        row = self._rows.get(request.task_id or "")
        if info is not None:
            card.widget.heading = (
                f'<div style="{MUTED}">background task {esc(info.name)} ({esc(info.id)}) asks:</div>'
                + card.widget.heading
            )
        self._cards.append(card)
        self.widget.cards = [c.widget for c in self._cards]
        self._waiting += 1
        if row is not None:
            row.asking += 1
        self._paint()
        try:
            return await answered
        finally:
            card.abandon("Answered elsewhere, or no longer waiting for an answer.")
            self._waiting -= 1
            if row is not None:
                row.asking -= 1
            self._paint()

    # --- painting --------------------------------------------------------------------

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "stop":
            task_id = content.get("id")
            if isinstance(task_id, str) and task_id in self._rows:
                self._stop(task_id)

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
        event = update.event
        if isinstance(event, TextDelta | ThinkingDelta):
            row.streamed += len(event.text)
        elif isinstance(event, AssistantMessage):
            row.streamed = 0  # its usage is counted now
        if self._handle is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self._paint()
                return
            self._handle = loop.call_later(_REPAINT, self._paint)

    def _paint(self) -> None:
        self._handle = None
        if self.done:
            return
        now = self._clock()
        self.widget.rows = [
            {
                "id": task_id,
                "state": row.state(),
                "html": row.html(now),
                "stoppable": not row.info.finished,
            }
            for task_id, row in self._rows.items()
        ]
        if self._rows and self.finished:
            self.done = True
            self.close()
            if self.on_done is not None:
                self.on_done()
            return
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
