"""The elicitation card: an MCP server's form (``ElicitationRequest``) with
Submit / Decline / Cancel, drawn like the approval card and shown in the
running cell the same way (``ask_form``, called by the live renderer).

The fields reach the view as JSON and every text a server wrote (titles,
descriptions, choices) is set as text there, never as HTML; the heading is
escaped here. A submitted answer is checked against the form
(``check_answer``): a wrong value is said on the card and the form waits
for a corrected one. ``static_bundle`` is the final state for a saved
notebook, without the values typed (they were for the server only).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from typing import Any

import traitlets as t

from mewcode_kernel.core.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    check_answer,
)

from .assets import LiveWidget, css, esm
from .fmt import COLORS, esc
from .handoff import answer_future
from .surface import Bundle

__all__ = ["ElicitCard", "ask_form"]

_SLICE = 0.5  # seconds between checks of a waiting card (an interrupt is honoured)
_VERDICTS = {
    "accept": ("✓ answered", "ok"),
    "decline": ("✗ declined", "error"),
    "cancel": ("■ dismissed", "muted"),
}


class ElicitWidget(LiveWidget):
    _esm = esm("elicit")
    _css = css("card") + "\n" + css("elicit")
    heading = t.Unicode("").tag(sync=True)
    fields = t.Unicode("[]").tag(sync=True)
    problem = t.Unicode("").tag(sync=True)
    decided = t.Unicode("").tag(sync=True)


class ElicitCard:
    def __init__(self, request: ElicitationRequest, on_answer: Any) -> None:
        self.request = request
        self.answer: ElicitationAnswer | None = None
        self._on_answer = on_answer
        self._verdict: tuple[str, str] | None = None
        self.widget = ElicitWidget(
            heading=self._heading_html(),
            fields=json.dumps([asdict(f) for f in request.fields]),
            offline=f"■ {esc(self._subject)} · not answered: the kernel stopped",
        )
        self.widget.on_msg(self._on_message)

    @property
    def _subject(self) -> str:
        return f"form from MCP server {self.request.server}"

    def _heading_html(self) -> str:
        return (
            f"<b>MCP server <code>{esc(self.request.server)}</code> asks:</b> "
            f"{esc(self.request.message)}"
        )

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("event") != "decide":
            return
        action = content.get("action")
        if action not in ("accept", "decline", "cancel"):
            return
        values = content.get("values")
        self.decide(action, values if isinstance(values, dict) else {})

    def decide(self, action: str, values: dict[str, Any] | None = None) -> None:
        """The person's answer; a wrong value is said on the card instead."""
        if self._verdict is not None:
            return
        content = None
        if action == "accept":
            try:
                content = check_answer(self.request.fields, values or {})
            except ValueError as exc:
                self.widget.problem = ""  # a change even when the same problem repeats
                self.widget.problem = f"{exc}."
                return
        self.answer = ElicitationAnswer(action=action, content=content)  # type: ignore[arg-type]
        text, color = _VERDICTS[action]
        self._set_verdict(f"{text} {self._subject}", COLORS[color])
        self._on_answer(self.answer)

    def abandon(self, reason: str) -> None:
        if self._verdict is None:
            self._set_verdict(f"■ {self._subject} · not answered: {reason}", COLORS["muted"])

    def _set_verdict(self, text: str, color: str) -> None:
        self._verdict = (text, color)
        with self.widget.hold_sync():
            self.widget.problem = ""
            self.widget.decided = f'<span style="color:{color}">{esc(text)}</span>'
            self.widget.offline = ""

    def static_bundle(self) -> Bundle:
        line = self._verdict[0] if self._verdict else f"? {self._subject} · waiting for an answer"
        color = self._verdict[1] if self._verdict else COLORS["warn"]
        html = (
            '<div class="mewcode-approval mewcode-card-static" '
            f'style="margin:1px 0;color:{color}">{esc(line)}</div>'
        )
        return {"text/html": html, "text/markdown": line, "text/plain": line}


async def ask_form(renderer: Any, request: ElicitationRequest) -> ElicitationAnswer:
    """Show ``request`` as a card in the cell of ``renderer`` (the live
    ``WidgetRenderer``, which calls this) and wait for the person."""
    from .parts import WidgetPart

    answered, resolve = answer_future()
    card = ElicitCard(request, resolve)
    part = WidgetPart(
        renderer._surface,
        card.widget,
        card.static_bundle,
        closing=lambda: card.abandon("kernel stopped"),
    )
    renderer._widget_parts.append(part)
    renderer._add(part)
    renderer.painter.flush()
    try:
        while not answered.done():
            await asyncio.wait((answered,), timeout=_SLICE)
    except asyncio.CancelledError:
        card.abandon("Interrupted before an answer.")
        answered.cancel()
        raise
    return answered.result()
