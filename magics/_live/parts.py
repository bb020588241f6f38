"""The pieces of a live transcript. Each is one output of the cell, shown
once and then repainted in place by the ``Painter`` when it changes.

``TextPart`` (a Markdown block of the answer), ``AnswerStream`` (spreads a
streamed answer over text parts: finished blocks are sent once, only the
tail is repainted), ``ThinkingPart`` (a collapsed Accordion widget),
``ToolRow`` (one tool call: a one-line summary that expands to its input and
result) and ``Line`` (a notice, an error, a command's output, the footer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import ipywidgets as w

from mewcode_kernel.core.tools import Tool

from .assets import StyleCarrier, ours
from .blocks import LineBlocks, MarkdownBlocks
from .call_view import input_html
from .diff import ChangeView
from .fmt import (
    COLORS,
    MUTED,
    duration,
    esc,
    key_argument,
    pre,
    truncate,
    whole_seconds,
)
from .markdown import markdown_bundle
from .settle import forget, keep
from .surface import Bundle, Surface

__all__ = [
    "ANSWER_CLASS",
    "AnswerStream",
    "Line",
    "TextPart",
    "ThinkingPart",
    "ToolRow",
    "ToolState",
    "WidgetPart",
]

#: The CSS class of the answer's text (Markdown shown as safe HTML).
ANSWER_CLASS = "mewcode-answer"
#: Messages a new widget costs on IOPub: its comm_open plus those of its
#: Layout (and Style) models.
_HTML_COST = 3
_BOX_COST = 2
_CARRIER_COST = 2
#: Characters of a running tool's output a row keeps (the tail).
_OUTPUT_TAIL = 4000
#: Characters of a running tool's live status shown in its one-line summary.
_LIVE_LINE = 60


class _Part:
    """An output shown once, then updated only when its bundle changed."""

    def __init__(self, surface: Surface) -> None:
        self._surface = surface
        self._handle: Any = None
        self._sent: Bundle | None = None

    @property
    def shown(self) -> bool:
        return self._handle is not None

    def bundle(self) -> Bundle:
        raise NotImplementedError

    def metadata(self) -> dict[str, Any] | None:
        return None

    def paint(self) -> int:
        bundle = self.bundle()
        if bundle == self._sent:
            return 0
        if self._handle is None:
            self._handle = self._surface.show(bundle, metadata=self.metadata())
        else:
            self._surface.update(self._handle, bundle)
        self._sent = bundle
        return 1


class TextPart(_Part):
    """One block of the answer, as Markdown."""

    def __init__(self, surface: Surface) -> None:
        super().__init__(surface)
        self.text = ""
        self.discarded = False

    def bundle(self) -> Bundle:
        if self.discarded:
            return {"text/markdown": "", "text/plain": ""}
        return markdown_bundle(self.text, ANSWER_CLASS)

    def paint(self) -> int:
        if self.discarded and not self.shown:
            return 0
        return super().paint()


class AnswerStream:
    """A streamed answer spread over ``TextPart``s made by ``new_part``."""

    def __init__(self, new_part: Callable[[], TextPart], mark: Callable[[TextPart], None]) -> None:
        self._new = new_part
        self._mark = mark
        self._split = MarkdownBlocks()
        self._current: TextPart | None = None
        self.parts: list[TextPart] = []
        self.text = ""

    def feed(self, text: str) -> None:
        self.text += text
        for block in self._split.feed(text):
            part = self._take()
            part.text = block
            self._mark(part)
            self._current = None
        if self._split.tail:
            part = self._take()
            part.text = self._split.tail
            self._mark(part)

    def discard(self) -> None:
        """Blank what was shown (a retried response starts over)."""
        for part in self.parts:
            part.discarded = True
            self._mark(part)

    def _take(self) -> TextPart:
        if self._current is None:
            self._current = self._new()
            self.parts.append(self._current)
        return self._current


class ThinkingPart:
    """The model's thinking, collapsed under a title; streamed in blocks."""

    def __init__(self, surface: Surface, clock: Callable[[], float]) -> None:
        self._surface = surface
        self._clock = clock
        self._started = clock()
        self._ended: float | None = None
        self._split = LineBlocks()
        self._frozen: list[str] = []  # finished blocks not yet sent
        self.text = ""
        self.accordion: w.Accordion | None = None
        self._box: w.VBox | None = None
        self._tail: w.HTML | None = None
        self._handle: Any = None
        self._final = False

    def feed(self, text: str) -> None:
        self.text += text
        self._frozen += self._split.feed(text)

    def close(self) -> None:
        if self._ended is None:
            self._ended = self._clock()

    @property
    def title(self) -> str:
        if self._ended is None:
            return "Thinking…"
        return f"Thought for {duration(self._ended - self._started)}"

    def static_bundle(self) -> Bundle:
        """The thinking without widgets: a closed ``<details>`` (for saved notebooks)."""
        html = (
            f'<details class="mewcode-thinking"><summary style="cursor:pointer;{MUTED}">'
            f"{esc(self.title)}</summary>{_thinking_html(self.text)}</details>"
        )
        quoted = "\n".join("> " + line for line in self.text.strip().splitlines())
        return {
            "text/html": html,
            "text/markdown": f"*{self.title}*\n\n{quoted}",
            "text/plain": self.title,
        }

    def finalize(self) -> int:
        """Replace the live Accordion by its static form and close the widgets."""
        forget(self)
        if self._final or self.accordion is None:
            return 0
        self._final = True
        self._surface.update(self._handle, self.static_bundle())
        for widget in (self.accordion, self._box, *(self._box.children if self._box else ())):
            if widget is not None:
                widget.close()
        return 1

    def paint(self) -> int:
        if self._final:
            return 0
        blocks = [w.HTML(_thinking_html(b)) for b in self._frozen]
        self._frozen = []
        sent = _HTML_COST * len(blocks)
        ours(*blocks)
        if self.accordion is None:
            self._tail = w.HTML(_thinking_html(self._split.tail))
            self._box = w.VBox([StyleCarrier(), *blocks, self._tail])
            self.accordion = w.Accordion([self._box], titles=(self.title,), selected_index=None)
            self.accordion.add_class("mewcode-thinking")
            ours(self._tail, self._box, self.accordion)
            self._handle = self._surface.show(self.accordion, static=self.static_bundle())
            keep(self, "thinking")
            return sent + _HTML_COST + 2 * _BOX_COST + _CARRIER_COST + 1
        assert self._box is not None and self._tail is not None
        if blocks:
            self._box.children = (*self._box.children[:-1], *blocks, self._tail)
            sent += 1
        sent += _set(self._tail, value=_thinking_html(self._split.tail))
        sent += _set(self.accordion, titles=(self.title,))
        return sent


def _thinking_html(text: str) -> str:
    return (
        f'<div style="white-space:pre-wrap;line-height:1.4;{MUTED};font-size:0.95em">'
        f"{esc(text)}</div>"
    )


def _set(widget: w.Widget, **values: Any) -> int:
    """Set traits in one message; return 1 if anything changed, else 0."""
    changed = {k: v for k, v in values.items() if getattr(widget, k) != v}
    if not changed:
        return 0
    with widget.hold_sync():
        for k, v in changed.items():
            setattr(widget, k, v)
    return 1


ToolState = Literal[
    "pending", "asking", "running", "done", "failed", "denied", "blocked", "cancelled"
]

_GLYPH: dict[str, tuple[str, str]] = {
    "pending": ("○", COLORS["muted"]),
    "asking": ("?", COLORS["warn"]),
    "running": ("◐", COLORS["info"]),
    "done": ("✓", COLORS["ok"]),
    "failed": ("✗", COLORS["error"]),
    "denied": ("⊘", COLORS["error"]),
    "blocked": ("⊘", COLORS["error"]),
    "cancelled": ("■", COLORS["muted"]),
}
_STATE_TEXT = {
    "pending": "preparing",
    "asking": "waiting for approval",
    "running": "running",
    "done": "done",
    "failed": "failed",
    "denied": "denied",
    "blocked": "blocked",
    "cancelled": "cancelled",
}


class ToolRow(_Part):
    """One tool call: ``✓ write_file notes.txt · done · 0.2 s`` expanding to
    the call's input, the permission decision, and the result."""

    def __init__(self, surface: Surface, call_id: str, name: str, tool: Tool | None = None) -> None:
        super().__init__(surface)
        self.call_id = call_id
        self.name = name
        self.tool = tool
        self.input: dict[str, Any] | None = None
        self.state: ToolState = "pending"
        self.permission = ""
        self.result: str | None = None
        self.seconds: float | None = None
        #: The diff of a file change, worked out before the call ran.
        self.change: ChangeView | None = None
        #: When the call started running (for the live elapsed time).
        self.started_at: float | None = None
        self.now: Callable[[], float] | None = None
        self.discarded = False
        self.output = ""  # what the running tool printed so far (its tail)
        self.status = ""  # the running tool's own status line

    def progress(self, *, output: str = "", status: str = "") -> None:
        """Take a running tool's progress: more output (only the tail is
        kept) and its latest status line."""
        if output:
            self.output = (self.output + output)[-_OUTPUT_TAIL:]
        if status:
            self.status = status

    @property
    def live_line(self) -> str:
        """While running: the tool's status, else the last line it printed."""
        if self.state != "running":
            return ""
        if self.status:
            return self.status
        lines = [line for line in self.output.splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""

    def _status(self) -> str:
        status = _STATE_TEXT[self.state]
        if self.seconds is not None and self.state in ("done", "failed"):
            status += f" · {duration(self.seconds)}"
        elif self.state == "running" and self.started_at is not None and self.now is not None:
            status += f" · {whole_seconds(self.now() - self.started_at)}"
        live = self.live_line
        if live:
            status += " · " + (live if len(live) <= _LIVE_LINE else live[: _LIVE_LINE - 1] + "…")
        return status

    @property
    def summary(self) -> str:
        """The row as one line of text (also its ``text/plain``)."""
        glyph = _GLYPH[self.state][0]
        arg = key_argument(self.tool, self.input or {})
        parts = [f"{glyph} {self.name}" + (f" {arg}" if arg else ""), self._status()]
        if self.change is not None:
            parts.append(self.change.summary)
        return " · ".join(parts)

    def bundle(self) -> Bundle:
        if self.discarded:
            return {"text/plain": ""}
        glyph, color = _GLYPH[self.state]
        arg = key_argument(self.tool, self.input or {})
        status = self._status()
        if self.change is not None:
            status = f"{status} · {self.change.summary}"
        summary = (
            f'<span style="color:{color};display:inline-block;width:1.2em">{glyph}</span>'
            f"<b>{esc(self.name)}</b>"
            + (f" <code>{esc(arg)}</code>" if arg else "")
            + f' <span style="{MUTED}">· {esc(status)}</span>'
        )
        body = []
        if self.change is not None and self.change.html:
            body.append(self.change.html)
        elif self.input is not None:
            body += [f'<div style="{MUTED}">input</div>', input_html(self.tool, self.input)]
        if self.permission:
            body.append(f'<div style="{MUTED}">permission: {esc(self.permission)}</div>')
        if self.output and self.result is None:
            body += [f'<div style="{MUTED}">output so far</div>', pre(self.output)]
        if self.result is not None:
            label = "error" if self.state in ("failed", "denied", "blocked") else "result"
            body += [f'<div style="{MUTED}">{label}</div>', pre(truncate(self.result, 4000))]
        html = (
            '<details class="mewcode-tool" style="margin:1px 0">'
            f'<summary style="cursor:pointer">{summary}</summary>'
            f'<div style="margin:2px 0 4px 1.3em">{"".join(body)}</div></details>'
        )
        markdown = self.summary
        if self.change is not None and self.change.markdown:
            markdown += "\n\n" + self.change.markdown
        return {"text/html": html, "text/markdown": markdown, "text/plain": self.summary}

    def paint(self) -> int:
        if self.discarded and not self.shown:
            return 0
        return super().paint()


class Line(_Part):
    """A static output (notice, error, command output, footer), repaintable."""

    def __init__(
        self, surface: Surface, bundle: Bundle, metadata: dict[str, Any] | None = None
    ) -> None:
        super().__init__(surface)
        self.content = bundle
        self._metadata = metadata

    def bundle(self) -> Bundle:
        return self.content

    def adopt(self, handle: Any) -> None:
        """Take over an output shown before this part existed (its handle)."""
        self._handle = handle

    def metadata(self) -> dict[str, Any] | None:
        return self._metadata


class WidgetPart:
    """A widget made elsewhere (a card), shown once in its place beside its
    static form ``static()``; ``finalize`` replaces it by ``static()`` (its
    final state, no widget), after ``closing()`` (e.g. a card still waiting
    says it was not answered). Until then it is kept live under ``kind``
    (``settle``)."""

    def __init__(
        self,
        surface: Surface,
        widget: w.Widget,
        static: Callable[[], Bundle],
        *,
        kind: str = "card",
        closing: Callable[[], object] | None = None,
    ) -> None:
        self._surface = surface
        self.widget = widget
        self._static = static
        self._closing = closing
        self.kind = kind
        self._handle: Any = None
        self.shown = False
        self._final = False

    @property
    def final(self) -> bool:
        """Whether it has given way to its static form."""
        return self._final

    def paint(self) -> int:
        if self.shown or self._final:
            return 0
        self._handle = self._surface.show(self.widget, static=self._static())
        self.shown = True
        keep(self, self.kind)
        return 1

    def finalize(self) -> int:
        forget(self)
        if self._final or not self.shown:
            return 0
        self._final = True
        if self._closing is not None:
            self._closing()
        self._surface.update(self._handle, self._static())
        self.widget.close()
        return 1
