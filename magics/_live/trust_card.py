"""The trust card: what trusting this project's settings would change, with
Trust / Keep ignoring buttons (``static/trust.js``).

A click calls ``on_answer`` once (``True``: trust), from whatever thread the
front end's message arrives on; the card's static form (``static_bundle``)
then says what was decided, and the caller replaces the card by it, so no
answered card stays open (and none is left in a saved notebook).
``abandon`` closes it when nobody answered (an interrupt, the kernel going
away).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import traitlets as t

from mewcode_kernel.core.trust import ProjectTrust

from .assets import LiveWidget, css, esm
from .fmt import COLORS, MUTED, esc
from .surface import Bundle

__all__ = ["TrustCard", "TrustWidget"]


class TrustWidget(LiveWidget):
    _esm = esm("trust")
    _css = css("trust")
    body = t.Unicode("").tag(sync=True)


class TrustCard:
    def __init__(self, trust: ProjectTrust, on_answer: Callable[[bool], Any]) -> None:
        self.trust = trust
        self.answer: bool | None = None
        self._on_answer = on_answer
        self._verdict: tuple[str, str] | None = None  # (text, colour)
        why = "changed since you trusted them" if trust.state == "changed" else "not trusted yet"
        # each item's detail says what it does ("MCP server 'time' runs …"): no kind column
        items = "".join(
            f"<li><code>{esc(i.file)}</code>: {esc(i.detail)}</li>" for i in trust.items
        )
        self.body = (
            "<b>Trust this project's settings?</b>"
            f'<div style="{MUTED}">They are {why}: until you trust them only their deny and '
            "ask rules apply. Trusting them would:</div>"
            f'<ul style="margin:4px 0;padding-left:1.4em">{items}</ul>'
            f'<div style="{MUTED}">Remembered for this folder; any change to these settings '
            "asks again.</div>"
        )
        self.widget = TrustWidget(
            body=self.body, offline=f'<div style="{MUTED}">■ not answered: the kernel stopped</div>'
        )
        self.widget.on_msg(self._on_message)

    @property
    def decided(self) -> bool:
        return self._verdict is not None

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "answer":
            self.decide(content.get("trust") is True)

    def decide(self, yes: bool) -> None:
        if self.decided:
            return
        self.answer = yes
        self._verdict = (
            ("✓ Trusted this project's settings: they apply from now on", COLORS["ok"])
            if yes
            else (
                "✗ Still ignoring this project's settings: only their deny and ask rules "
                "apply (/trust to change)",
                COLORS["muted"],
            )
        )
        self._on_answer(yes)

    def abandon(self, reason: str) -> None:
        if not self.decided:
            self._verdict = (f"■ Trust not answered: {reason}", COLORS["muted"])

    def static_bundle(self) -> Bundle:
        """The card without the widget: the question while it waits, then the
        answer, expanding to what was asked."""
        if self._verdict is None:
            text = "? Trust this project's settings? (waiting for an answer)"
            lines = "\n".join(f"- `{i.file}`: {i.detail}" for i in self.trust.items)
            html = f'<div class="mewcode-trust-static">{self.body}</div>'
            return {"text/html": html, "text/markdown": f"{text}\n\n{lines}", "text/plain": text}
        text, color = self._verdict
        html = (
            '<details class="mewcode-trust-static" style="margin:1px 0">'
            f'<summary style="cursor:pointer;color:{color}">{esc(text)}</summary>'
            f'<div style="margin:2px 0 4px 1.3em">{self.body}</div></details>'
        )
        return {"text/html": html, "text/markdown": text, "text/plain": text}
