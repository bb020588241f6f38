"""The approval card: what the agent wants to do, and Allow / Always allow /
Deny buttons, with an optional note to the model and a box that saves an
"Always allow" rule to the project.

A click calls ``on_answer`` once with the ``ApprovalAnswer``; from then on
the card is disabled and says what was decided (``abandon`` does the same
when nobody answered, e.g. on an interrupt).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest

from .fmt import COLORS, MUTED, esc, key_argument, pre, pretty_json

__all__ = ["ApprovalCard", "card_with_answer"]

_BORDER = "1px solid var(--jp-border-color1,#bdbdbd)"


class ApprovalCard:
    def __init__(
        self, request: ApprovalRequest, on_answer: Callable[[ApprovalAnswer], Any]
    ) -> None:
        call = request.call
        arg = key_argument(request.tool, call.input, limit=120)
        self.request = request
        self.answer: ApprovalAnswer | None = None
        self._on_answer = on_answer
        self.header = w.HTML(
            f"<b>Allow <code>{esc(call.name)}</code>"
            + (f" <code>{esc(arg)}</code>" if arg else "")
            + "?</b>"
            + f'<div style="{MUTED}">{esc(request.reason)}</div>'
            + '<details><summary style="cursor:pointer">input</summary>'
            + pre(pretty_json(call.input))
            + "</details>"
        )
        self.allow = w.Button(
            description="Allow", button_style="success", icon="check", tooltip="Run this call once"
        )
        self.always = w.Button(
            description="Always allow",
            button_style="info",
            icon="check-double",
            tooltip="Run it, and allow such calls for the rest of this session",
        )
        self.deny = w.Button(
            description="Deny",
            button_style="danger",
            icon="times",
            tooltip="Do not run it; the note below is passed to the model",
        )
        self.note = w.Text(
            placeholder="Optional note to the model (sent with Deny)",
            layout=w.Layout(flex="1 1 auto", width="auto"),
        )
        self.save = w.Checkbox(
            value=False,
            description="Save “Always allow” to this project",
            indent=False,
            layout=w.Layout(width="auto"),
        )
        self.status = w.HTML("")
        self.widget = w.VBox(
            [
                self.header,
                w.HBox([self.allow, self.always, self.deny]),
                w.HBox([self.note, self.save]),
                self.status,
            ],
            layout=w.Layout(border=_BORDER, padding="6px 10px", margin="4px 0"),
        )
        self.widget.add_class("mewcode-approval")
        self.allow.on_click(lambda _: self._answer(ApprovalAnswer(allow=True, note=self._note())))
        self.always.on_click(
            lambda _: self._answer(
                ApprovalAnswer(allow=True, always=True, save=self.save.value, note=self._note())
            )
        )
        self.deny.on_click(lambda _: self._answer(ApprovalAnswer(allow=False, note=self._note())))

    @property
    def answered(self) -> bool:
        return self.answer is not None

    @property
    def disabled(self) -> bool:
        return all(c.disabled for c in self._controls)

    @property
    def _controls(self) -> tuple[w.Button | w.Text | w.Checkbox, ...]:
        return (self.allow, self.always, self.deny, self.note, self.save)

    def _note(self) -> str | None:
        return self.note.value.strip() or None

    def _answer(self, answer: ApprovalAnswer) -> None:
        if self.answer is not None or self.disabled:
            return
        self.answer = answer
        chosen = self.deny if not answer.allow else self.always if answer.always else self.allow
        self._freeze(keep=chosen)
        self.status.value = _decision_html(answer)
        self._on_answer(answer)

    def abandon(self, reason: str) -> None:
        """Disable an unanswered card, saying why (e.g. the turn was interrupted)."""
        if self.answer is not None or self.disabled:
            return
        self._freeze(keep=None)
        self.status.value = f'<span style="color:{COLORS["muted"]}">■ {esc(reason)}</span>'

    def rules_added(self, rules: tuple[str, ...]) -> None:
        """Say which permission rules the "Always allow" answer added."""
        if rules:
            listed = ", ".join(f"<code>{esc(r)}</code>" for r in rules)
            self.status.value += f'<div style="{MUTED}">rule added: {listed}</div>'

    def _freeze(self, keep: w.Button | None) -> None:
        for control in self._controls:
            with control.hold_sync():
                control.disabled = True
                if isinstance(control, w.Button) and control is not keep:
                    control.button_style = ""


def _decision_html(answer: ApprovalAnswer) -> str:
    if answer.allow:
        text = "✓ Allowed"
        if answer.always:
            text = "✓ Always allowed for this session"
            if answer.save:
                text += ", saved to the project"
        color = COLORS["ok"]
    else:
        text = "✗ Denied"
        color = COLORS["error"]
    text += " by you"
    if answer.note and not answer.allow:
        text += f" — note to the model: “{answer.note}”"
    return f'<span style="color:{color}">{esc(text)}</span>'


def card_with_answer(
    request: ApprovalRequest,
) -> tuple[ApprovalCard, asyncio.Future[ApprovalAnswer]]:
    """A card for ``request`` and the future its first answer resolves."""
    answered: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()

    def resolve(answer: ApprovalAnswer) -> None:
        if not answered.done():
            answered.set_result(answer)

    return ApprovalCard(request, resolve), answered
