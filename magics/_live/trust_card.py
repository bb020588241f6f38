"""The trust card: what trusting this project's settings would change, with
Trust / Keep ignoring buttons.

A click calls ``on_answer`` once (``True``: trust); from then on the card is
disabled and says what was decided (``abandon`` does the same when nobody
answered, e.g. on an interrupt).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w

from mewcode_kernel.core.trust import ProjectTrust

from .fmt import COLORS, MUTED, esc

__all__ = ["TrustCard"]

_BORDER = "1px solid var(--jp-warn-color1,#f57c00)"
_KIND = {
    "provider": "provider",
    "allow_rule": "allow rule",
    "mode": "mode default",
    "additional_dir": "directory",
    "hooks": "hooks",
    "mcp_server": "MCP server",
    "sandbox": "sandbox",
}


class TrustCard:
    def __init__(self, trust: ProjectTrust, on_answer: Callable[[bool], Any]) -> None:
        self.trust = trust
        self.answer: bool | None = None
        self._on_answer = on_answer
        why = "changed since you trusted them" if trust.state == "changed" else "not trusted yet"
        rows = "".join(
            f"<tr><td><code>{esc(i.file)}</code></td><td>{esc(_KIND[i.kind])}</td>"
            f"<td>{esc(i.detail)}</td></tr>"
            for i in trust.items
        )
        self.header = w.HTML(
            f"<b>Trust this project's settings?</b>"
            f'<div style="{MUTED}">They are {why}: until you trust them only their deny and '
            "ask rules apply. Trusting them would:</div>"
            f'<table style="font-size:90%">{rows}</table>'
            f'<div style="{MUTED}">Remembered for this folder; any change to these settings '
            "asks again.</div>"
        )
        self.trust_button = w.Button(
            description="Trust", button_style="warning", icon="check", tooltip="Use these settings"
        )
        self.ignore_button = w.Button(
            description="Keep ignoring", icon="times", tooltip="Only their deny and ask rules apply"
        )
        self.status = w.HTML("")
        self.widget = w.VBox(
            [self.header, w.HBox([self.trust_button, self.ignore_button]), self.status],
            layout=w.Layout(border=_BORDER, padding="6px 10px", margin="4px 0"),
        )
        self.widget.add_class("mewcode-trust")
        self.trust_button.on_click(lambda _: self._answer(True))
        self.ignore_button.on_click(lambda _: self._answer(False))

    @property
    def disabled(self) -> bool:
        return self.trust_button.disabled and self.ignore_button.disabled

    def _answer(self, yes: bool) -> None:
        if self.answer is not None or self.disabled:
            return
        self.answer = yes
        self._freeze()
        text, color = (
            ("✓ Trusted: the settings apply from now on", COLORS["ok"])
            if yes
            else (
                "✗ Ignored: only their deny and ask rules apply (/trust to change)",
                COLORS["muted"],
            )
        )
        self.status.value = f'<span style="color:{color}">{esc(text)}</span>'
        self._on_answer(yes)

    def abandon(self, reason: str) -> None:
        if self.answer is not None or self.disabled:
            return
        self._freeze()
        self.status.value = f'<span style="color:{COLORS["muted"]}">■ {esc(reason)}</span>'

    def _freeze(self) -> None:
        for button in (self.trust_button, self.ignore_button):
            button.disabled = True
