"""The approval card: what the agent wants to do (a diff, a command), and
Allow / Always allow / Deny, with an optional note to the model and a box that
saves an "Always allow" rule to the project.

The view is a small anywidget (``static/card.js``): a click sends one custom
message carrying the note and the save box as they are at that moment, so a
state update still throttled in the front end cannot lose what was typed.
The answer calls ``on_answer`` once; the card then collapses to one line
(``✓ allowed edit_file stats.py · rule added Edit(stats.py)``) that expands to
what was asked. ``abandon`` does the same when nobody answered.
``static_bundle`` is the card's final state as HTML, Markdown and text, for
the saved notebook (without the diff: the tool row above keeps it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import traitlets as t

from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest

from .assets import LiveWidget, css, esm
from .call_view import describe_call
from .diff import ChangeView
from .fmt import COLORS, esc, key_argument
from .handoff import answer_future
from .surface import Bundle

__all__ = ["ApprovalCard", "CardWidget", "Choice", "card_with_answer"]

Choice = Literal["allow", "always", "deny"]


class CardWidget(LiveWidget):
    """The card's synced state; ``decided`` (HTML) is empty while it waits."""

    _esm = esm("card")
    _css = css("card")
    heading = t.Unicode("").tag(sync=True)
    detail = t.Unicode("").tag(sync=True)
    note = t.Unicode("").tag(sync=True)
    save = t.Bool(False).tag(sync=True)
    decided = t.Unicode("").tag(sync=True)


class ApprovalCard:
    def __init__(
        self,
        request: ApprovalRequest,
        on_answer: Callable[[ApprovalAnswer], Any],
        *,
        root: Path | None = None,
        change: ChangeView | None = None,
    ) -> None:
        self.request = request
        self.answer: ApprovalAnswer | None = None
        self.view = describe_call(request, root, change)
        self._on_answer = on_answer
        self._rules: tuple[str, ...] = ()
        self._verdict: tuple[str, str] | None = None  # (text, colour)
        self.widget = CardWidget(
            heading=self.view.title_html,
            detail=self.view.detail_html,
            offline=self._offline_html(),
        )
        self.widget.on_msg(self._on_message)

    @property
    def answered(self) -> bool:
        return self.answer is not None

    @property
    def decided(self) -> bool:
        return self._verdict is not None

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("event") != "decide":
            return
        choice = content.get("choice")
        if choice not in ("allow", "always", "deny"):
            return
        note = content.get("note")
        self.decide(
            choice, note=note if isinstance(note, str) else "", save=bool(content.get("save"))
        )

    def decide(self, choice: Choice, *, note: str = "", save: bool = False) -> None:
        """The person's answer, with the note and save box as they were at the click."""
        if self.decided:
            return
        text = note.strip() or None
        if choice == "deny":
            answer = ApprovalAnswer(allow=False, note=text)
        elif choice == "always":
            answer = ApprovalAnswer(allow=True, always=True, save=save, note=text)
        else:
            answer = ApprovalAnswer(allow=True, note=text)
        self.answer = answer
        with self.widget.hold_sync():
            self.widget.note = note
            self.widget.save = save
            self._set_verdict(*_verdict_of(answer, self._subject))
        self._on_answer(answer)

    def abandon(self, reason: str) -> None:
        """Close an unanswered card, saying why (e.g. the turn was interrupted)."""
        if self.decided:
            return
        self._set_verdict(f"■ {self._subject} · not answered: {reason}", COLORS["muted"])

    def rules_added(self, rules: tuple[str, ...]) -> None:
        """Say which permission rules the "Always allow" answer added."""
        if rules and self._verdict is not None:
            self._rules = rules
            self._set_verdict(*self._verdict)

    @property
    def line(self) -> str:
        """The decided card as one line of text (empty while it waits)."""
        if self._verdict is None:
            return ""
        text = self._verdict[0]
        if self._rules:
            text += " · rule added " + ", ".join(self._rules)
        return text

    def static_bundle(self) -> Bundle:
        """The card's current state without the widget: for a saved notebook."""
        line = self.line or f"? {self._subject} · waiting for approval"
        color = self._verdict[1] if self._verdict else COLORS["warn"]
        html = (
            '<details class="mewcode-approval mewcode-card-static" style="margin:1px 0">'
            f'<summary style="cursor:pointer;color:{color}">{esc(line)}</summary>'
            f'<div style="margin:2px 0 4px 1.3em">{self.view.title_html}'
            f"{self.view.brief_html}</div></details>"
        )
        markdown = f"{line}\n\n{self.view.markdown}"
        return {"text/html": html, "text/markdown": markdown, "text/plain": line}

    def _offline_html(self) -> str:
        """What the card says once the kernel is gone (see ``common.js``)."""
        if self._verdict is None:
            return f"■ {esc(self._subject)} · not answered: the kernel stopped"
        return ""

    @property
    def _subject(self) -> str:
        call = self.request.call
        arg = key_argument(self.request.tool, call.input, limit=80)
        return f"{call.name} {arg}".rstrip()

    def _set_verdict(self, text: str, color: str) -> None:
        self._verdict = (text, color)
        with self.widget.hold_sync():
            self.widget.decided = f'<span style="color:{color}">{esc(self.line)}</span>'
            self.widget.offline = ""


def _verdict_of(answer: ApprovalAnswer, subject: str) -> tuple[str, str]:
    if not answer.allow:
        text = f"✗ denied {subject}"
        if answer.note:
            text += f" · note to the model: “{answer.note}”"
        return text, COLORS["error"]
    if answer.always:
        text = f"✓ always allowed {subject}"
        if answer.save:
            text += " · saved to the project"
        return text, COLORS["ok"]
    return f"✓ allowed {subject}", COLORS["ok"]


def card_with_answer(
    request: ApprovalRequest, **options: Any
) -> tuple[ApprovalCard, asyncio.Future[ApprovalAnswer]]:
    """A card for ``request`` (``options``: ``root``, ``change``) and the
    future its first answer resolves, on the running loop (see ``handoff``)."""
    answered, resolve = answer_future()
    return ApprovalCard(request, resolve, **options), answered
