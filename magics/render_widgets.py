"""Live rendering of an agent cell with ipywidgets, for a person at a notebook.

The transcript is a run of the cell's outputs, in the order things happened:
the answer as Markdown (finished blocks sent once, the growing tail repainted
in place), the model's thinking collapsed in an Accordion, one compact row
per tool call (``✓ write_file notes.txt · done · 0.2 s``, expanding to its
input, the permission decision and the result), notices, an approval card
when a call needs a person's yes or no, and a footer with tokens, turns,
time and cost. Static pieces are plain MIME bundles (cheapest on IOPub, and
still readable in a saved notebook); widgets are used where something must
stay live (the thinking Accordion keeps its open/closed state while text
streams in; the card has buttons).

Repaints are coalesced by ``magics._live.coalesce.Painter``: about 20 per
second per part and at most ``budget`` messages per tick, on the running
loop's timers (no threads); everything is flushed before a card waits for a
click and at the end. An approval is an ``asyncio.Future`` resolved by the
button's callback: ipykernel >= 7.4 handles comm messages while an async
cell awaits. The wait is sliced (0.25 s) so an interrupt is seen at once.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mewcode_kernel.core.checkpoints import TurnRevert
from mewcode_kernel.core.commands import CommandResult
from mewcode_kernel.core.events import (
    AgentEvent,
    ApprovalRequested,
    ApprovalResolved,
    AssistantMessage,
    HookRan,
    ModelRequestStarted,
    Notice,
    PermissionDecided,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnDone,
)
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest

from ._live.call_view import change_of
from ._live.card import ApprovalCard, card_with_answer
from ._live.coalesce import Paintable, Painter
from ._live.elicit_card import ElicitationAnswer, ElicitationRequest, ask_form
from ._live.fmt import COLORS, duration, key_argument, whole_seconds
from ._live.lines import error_bundle, footer_bundle, hook_bundle, line_bundle
from ._live.markdown import markdown_bundle
from ._live.parts import AnswerStream, Line, TextPart, ThinkingPart, ToolRow, WidgetPart
from ._live.revert_card import RevertCard, track
from ._live.surface import BoxSurface, CellSurface, Surface
from .render_base import ToolLookup, dispatch
from .render_text import revert_hint

__all__ = ["WidgetRenderer"]

#: How long one slice of waiting for a click lasts (see the module docstring).
ASK_SLICE = 0.25
#: How often running times ("starting… 2 s", a running tool) are redrawn.
TICK = 0.5

_NOTICE_COLOR = {"info": COLORS["muted"], "warning": COLORS["warn"], "error": COLORS["error"]}
_NOTICE_GLYPH = {"info": "ℹ", "warning": "⚠", "error": "✗"}


class WidgetRenderer:
    """A ``Renderer`` (see ``render_base``) drawing one agent cell live.

    ``surface`` is where outputs go: by default the running cell's outputs,
    or, with ``background=True`` (a turn that goes on after its cell ends),
    one box widget displayed right away, while the cell still runs;
    ``interval`` and ``budget`` bound repaints (seconds between ticks,
    messages per tick). The footer shows ``metadata["cost_usd"]`` when the
    caller knows the cost, and carries ``metadata`` as the output's
    ``mewcode`` metadata (the cell's provenance).
    """

    interactive = True
    shows_widgets = True

    def __init__(
        self,
        *,
        background: bool = False,
        surface: Surface | None = None,
        interval: float = 0.05,
        budget: int = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if surface is None:
            surface = BoxSurface() if background else CellSurface()
        self._surface: Surface = surface
        self._interval = interval
        self._budget = budget
        self._clock = clock
        self._painter: Painter | None = None
        self._started_at = clock()
        self._label = ""
        self._session_id: str | None = None
        self._answer: AnswerStream | None = None
        self._thinking: ThinkingPart | None = None
        self._rows: dict[str, ToolRow] = {}
        self._cards: dict[str, ApprovalCard] = {}
        self._round_answers: list[AnswerStream] = []
        self._round_rows: list[ToolRow] = []
        self._widget_parts: list[WidgetPart | ThinkingPart] = []
        self._root: Path | None = None
        self._starting: Line | None = None
        self._ticker: asyncio.TimerHandle | None = None
        self._context: contextvars.Context | None = None
        self._finished = False
        self._tools: ToolLookup | None = None
        self._revert: TurnRevert | None = None
        #: the "Revert N files" card under the turn, once shown
        self.revert_card: RevertCard | None = None

    @property
    def painter(self) -> Painter:
        """The paint scheduler (created by ``start``)."""
        if self._painter is None:
            self.start(prompt="", provider_label="", session_id=None)
        assert self._painter is not None
        return self._painter

    # --- the Renderer protocol -------------------------------------------------

    def start(
        self,
        *,
        prompt: str,
        provider_label: str,
        session_id: str | None,
        tools: ToolLookup | None = None,
        root: Path | None = None,
        started_at: float | None = None,
        starting: str | None = None,
    ) -> None:
        """``tools`` finds a tool's metadata by name; ``started_at`` (this
        renderer's clock): when the cell began, for the footer's wall time;
        ``starting``: the handle of a "starting…" line the controller already
        shows, kept ticking here until the first output."""
        self._tools = tools
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self._context = contextvars.copy_context()
        self._painter = Painter(
            loop=loop,
            context=self._context,
            interval=self._interval,
            budget=self._budget,
            clock=self._clock,
        )
        self._started_at = self._clock() if started_at is None else started_at
        self._label = provider_label
        self._session_id = session_id
        self._root = root
        self._starting = Line(self._surface, self._starting_bundle())
        if starting is not None:
            self._starting.adopt(starting)
        self._mark(self._starting)
        self._schedule_tick()

    def on_event(self, event: AgentEvent) -> None:
        if not self._finished:
            if event.kind not in ("notice", "model_request_started"):
                self._first_output()
            dispatch(self, event)

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        row = self._rows.get(request.call.id)
        change = row.change if row is not None else None
        card, answered = card_with_answer(request, root=self._root, change=change)
        self._cards[request.call.id] = card
        if row is not None:
            self._set_row(row, state="asking")
        stop = card.abandon
        part = WidgetPart(
            self._surface, card.widget, card.static_bundle, closing=lambda: stop("kernel stopped")
        )
        self._widget_parts.append(part)
        self._add(part)
        self.painter.flush()
        try:
            while not answered.done():
                await asyncio.wait((answered,), timeout=ASK_SLICE)
        except asyncio.CancelledError:
            card.abandon("Interrupted before an answer.")
            answered.cancel()
            raise
        return answered.result()

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        return await ask_form(self, request)  # an MCP server's form, as a card

    def offer_revert(self, revert: TurnRevert) -> None:
        """The turn changed files: ``finish`` shows "Revert N files" above the footer."""
        self._revert = revert

    def show_command(self, result: CommandResult) -> None:
        bundle = error_bundle(result.markdown) if result.error else markdown_bundle(result.markdown)
        self._add(Line(self._surface, bundle))
        self.painter.flush()

    def show_error(self, message: str) -> None:
        self._add(Line(self._surface, error_bundle(message)))
        self.painter.flush()

    def finish(
        self,
        done: TurnDone | None,
        *,
        cancelled: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if self._finished:
            return
        self._stop_ticking()
        self._first_output()
        self._end_text()
        self._end_thinking()
        for row in self._rows.values():
            if row.state in ("pending", "asking", "running"):
                self._set_row(row, state="cancelled")
        for card in self._cards.values():
            card.abandon(
                "Interrupted before an answer." if cancelled else "The turn ended before an answer."
            )
        self._show_revert()
        if done is not None or cancelled or metadata:
            footer = footer_bundle(
                done,
                cancelled=cancelled,
                metadata=metadata or {},
                elapsed=self._clock() - self._started_at,
                label=self._label,
                session_id=self._session_id or (metadata or {}).get("session_id"),
            )
            self._add(Line(self._surface, footer, {"mewcode": metadata} if metadata else None))
        self.painter.flush()
        # Widgets give way to their final state as plain HTML/Markdown, so the
        # saved notebook reads without a kernel (no "model not found").
        for part in self._widget_parts:
            part.finalize()
        if isinstance(self._surface, BoxSurface):  # a background turn: its box too
            self._surface.finalize()
        self.painter.close()
        self._finished = True

    def _show_revert(self) -> None:
        """The revert card (it stays live after the turn: its clicks come later),
        or, for a turn that only ran commands, the line saying they are not tracked."""
        revert = self._revert
        if revert is None:
            return
        if revert.files:
            card = self.revert_card = RevertCard(revert)
            if isinstance(self._surface, BoxSurface):  # the box settles with its turn
                self._add(Line(self._surface, card.static_bundle()))
            else:  # live after the turn; settled by the next turn or the kernel going away
                part = WidgetPart(self._surface, card.widget, card.static_bundle, kind="revert")
                track(card, part)
                self._add(part)
        for line in revert_hint(revert)[1 if revert.files else 0 :]:
            self._add(Line(self._surface, line_bundle(line, COLORS["muted"])))

    # --- events ----------------------------------------------------------------

    def on_model_request_started(self, event: ModelRequestStarted) -> None:
        self._round_answers = []
        self._round_rows = []

    def on_text_delta(self, event: TextDelta) -> None:
        self._end_thinking()
        if self._answer is None:
            self._answer = AnswerStream(self._new_text_part, self._mark)
            self._round_answers.append(self._answer)
        self._answer.feed(event.text)

    def on_thinking_delta(self, event: ThinkingDelta) -> None:
        if self._thinking is None:
            self._thinking = ThinkingPart(self._surface, self._clock)
            self._widget_parts.append(self._thinking)
            self._add(self._thinking, keep_thinking=True)
        self._thinking.feed(event.text)
        self._mark(self._thinking)

    def on_tool_call_started(self, event: ToolCallStarted) -> None:
        self._row(event.id, event.name)

    def on_retry_scheduled(self, event: RetryScheduled) -> None:
        self._end_text()
        self._end_thinking()
        for answer in self._round_answers:
            answer.discard()
        for row in self._round_rows:
            row.discarded = True
            self._rows.pop(row.call_id, None)
            self._mark(row)
        self._round_answers, self._round_rows = [], []
        text = (
            f"↻ Retrying in {duration(event.delay)} (attempt {event.attempt} of "
            f"{event.max_attempts}): {event.reason}"
        )
        self._add(Line(self._surface, line_bundle(text, COLORS["warn"])))

    def on_assistant_message(self, event: AssistantMessage) -> None:
        self._end_thinking()
        message = event.message
        if message.text and not any(a.text for a in self._round_answers):
            self.on_text_delta(TextDelta(text=message.text))  # the provider did not stream
        self._end_text()
        for call in message.tool_uses:
            row = self._row(call.id, call.name)
            if row.tool is not None and row.tool.preview is not None and row.change is None:
                try:  # read before the call runs: this is the "before" of the diff
                    row.change = change_of(row.tool, call, self._root)
                except Exception:  # a preview must never break the turn
                    row.change = None
            self._set_row(row, input=call.input)

    def on_permission_decided(self, event: PermissionDecided) -> None:
        row = self._call_row(event.call)
        state = "blocked" if event.outcome == "deny" else row.state
        self._set_row(
            row,
            state=state,
            permission=f"{event.outcome} — {event.reason} ({event.decided_by})",
        )

    def on_approval_requested(self, event: ApprovalRequested) -> None:
        self._set_row(self._call_row(event.call), state="asking")

    def on_approval_resolved(self, event: ApprovalResolved) -> None:
        row = self._call_row(event.call)
        who = "you" if event.by == "user" else "the headless policy"
        verdict = f"allowed by {who}" if event.allowed else f"denied by {who}"
        if event.rules_added:
            verdict += f" (rule added: {', '.join(event.rules_added)})"
        if event.note and not event.allowed:
            verdict += f" — note: {event.note}"
        self._set_row(
            row,
            state="pending" if event.allowed else "denied",
            permission=f"{row.permission}; {verdict}" if row.permission else verdict,
        )
        card = self._cards.get(event.call.id)
        if card is not None:
            card.rules_added(event.rules_added)

    def on_tool_started(self, event: ToolStarted) -> None:
        row = self._call_row(event.call)
        row.started_at, row.now = self._clock(), self._clock
        self._set_row(row, state="running")
        self._schedule_tick()

    def on_tool_progress(self, event: ToolProgress) -> None:
        row = self._call_row(event.call)
        nested = event.nested
        if nested is None:
            row.progress(output=event.output, status=event.status)
        elif isinstance(nested, ToolStarted):
            row.progress(status=f"↳ {nested.call.name} {self._arg(nested.call)}".rstrip())
        elif isinstance(nested, ToolFinished):
            mark = "✗" if nested.result.is_error else "✓"
            line = f"{mark} {nested.call.name} {self._arg(nested.call)}".rstrip()
            row.progress(output=line + "\n", status=f"↳ {line}")
        elif isinstance(nested, Notice):
            row.progress(output=f"{_NOTICE_GLYPH[nested.level]} {nested.message}\n")
        else:
            return
        self._mark(row)

    def _arg(self, call: ToolUseBlock) -> str:
        tool = self._tools(call.name) if self._tools is not None else None
        return key_argument(tool, call.input, limit=60)

    def on_tool_finished(self, event: ToolFinished) -> None:
        row = self._call_row(event.call)
        result = event.result
        if row.state in ("denied", "blocked"):
            self._set_row(row, result=result.text)
        else:
            state = "failed" if result.is_error else "done"
            self._set_row(row, state=state, result=result.text, seconds=event.duration)

    def on_hook_ran(self, event: HookRan) -> None:
        self._add(Line(self._surface, hook_bundle(event)))

    def on_notice(self, event: Notice) -> None:
        text = f"{_NOTICE_GLYPH[event.level]} {event.message}"
        self._add(Line(self._surface, line_bundle(text, _NOTICE_COLOR[event.level])))

    # --- running times -----------------------------------------------------------

    def _starting_bundle(self) -> dict[str, str]:
        text = f"◌ starting… {whole_seconds(self._clock() - self._started_at)}"
        return line_bundle(text, COLORS["muted"])

    def _first_output(self) -> None:
        """The first thing the turn shows replaces the "starting…" line."""
        if self._starting is not None:
            self._starting.content = {"text/plain": ""}
            self._mark(self._starting)
            self._starting = None

    def _schedule_tick(self) -> None:
        if self._ticker is not None or self._finished:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._ticker = loop.call_later(TICK, self._tick, context=self._context)

    def _tick(self) -> None:
        self._ticker = None
        if self._finished:
            return
        ticking = False
        if self._starting is not None:
            self._starting.content = self._starting_bundle()
            self._mark(self._starting)
            ticking = True
        for row in self._rows.values():
            if row.state == "running":
                self._mark(row)
                ticking = True
        if ticking:
            self._schedule_tick()

    def _stop_ticking(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None

    # --- helpers ---------------------------------------------------------------

    def _mark(self, part: Paintable) -> None:
        self.painter.mark(part)

    def _add(self, part: Paintable, *, keep_thinking: bool = False) -> None:
        """Append a new output after everything shown so far."""
        self._end_text()
        if not keep_thinking:
            self._end_thinking()
        self._mark(part)

    def _new_text_part(self) -> TextPart:
        self._end_thinking()
        return TextPart(self._surface)

    def _end_text(self) -> None:
        self._answer = None

    def _end_thinking(self) -> None:
        if self._thinking is not None:
            self._thinking.close()
            self._mark(self._thinking)
            self._thinking = None

    def _row(self, call_id: str, name: str) -> ToolRow:
        row = self._rows.get(call_id)
        if row is None:
            tool = self._tools(name) if self._tools is not None else None
            row = self._rows[call_id] = ToolRow(self._surface, call_id, name, tool)
            self._round_rows.append(row)
            self._add(row)
        return row

    def _call_row(self, call: ToolUseBlock) -> ToolRow:
        row = self._row(call.id, call.name)
        if row.input is None:
            row.input = call.input
        return row

    def _set_row(self, row: ToolRow, **changes: Any) -> None:
        for name, value in changes.items():
            setattr(row, name, value)
        self._mark(row)
