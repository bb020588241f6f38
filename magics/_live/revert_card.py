"""The "Revert N files" card under a turn that changed files.

A small anywidget (``static/revert.js``): the button asks for a preview
(the diff from each file as it is now to what the revert leaves, and which
files changed since the turn and are left alone), then Restore carries it
out and the card shows what happened. Files changed since are overwritten
only by the explicit "Overwrite changed files too" button. The work is the
core's (``checkpoints.TurnRevert``, a coroutine: restoring an open
notebook's cells talks to the front end), run on the kernel's event loop, one click at a time; clicks may arrive on
a kernel subshell's thread, which hands the work over and returns.

Unlike the approval cards, this card outlives its turn: its clicks come
later. Only the latest turn's card is live: the controller replaces the
live cards by their static form (``static_bundle``: what happened, or the
``/rewind SESSION:N`` that reverts the turn) when the next agent turn
starts, when the kernel shuts down or restarts (``settle`` kind
``"revert"``), and, once ``/rewind`` has reverted a card's turn, after that
command (``settle_reverted``), so no button is left offering a revert that
was made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import traitlets as t

from mewcode_kernel.core.checkpoints import RevertPlan, TurnRevert

from .assets import LiveWidget, css, esm
from .diff import ADDED_TINT, REMOVED_TINT
from .fmt import BOX_BACKGROUND, COLORS, MUTED, esc
from .parts import WidgetPart
from .surface import Bundle

__all__ = ["RevertCard", "RevertWidget", "plan_html", "settle_reverted", "track"]

#: the cards shown and not yet settled, each with the part that shows it
_LIVE: list[tuple[RevertCard, WidgetPart]] = []

_DIFF_BOX = (
    "margin:2px 0 6px;padding:4px 6px;overflow:auto;max-height:24em;white-space:pre;"
    f"background:{BOX_BACKGROUND};border-radius:3px;"
    "font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,12px)"
)
_TINT = {"+": ADDED_TINT, "-": REMOVED_TINT, "@": MUTED}
_ACTION = {
    "restore": ("restore", COLORS["ok"]),
    "delete": ("delete (the turn created it)", COLORS["ok"]),
    "unchanged": ("nothing to do", COLORS["muted"]),
    "conflict": ("changed since the turn: left alone", COLORS["warn"]),
    "refused": ("not reverted", COLORS["error"]),
}


class RevertWidget(LiveWidget):
    """``state``: ``ready`` (the button), ``preview`` (the plan, Restore /
    Cancel), ``done`` (the outcome)."""

    _esm = esm("revert")
    _css = css("revert")
    label = t.Unicode("").tag(sync=True)
    state = t.Unicode("ready").tag(sync=True)
    body = t.Unicode("").tag(sync=True)
    conflicts = t.Bool(False).tag(sync=True)
    can_restore = t.Bool(False).tag(sync=True)


def _diff_html(diff: str) -> str:
    rows = []
    for line in diff.splitlines():
        style = _TINT.get(line[:1], "") if not line.startswith(("---", "+++")) else MUTED
        rows.append(f'<div style="{style}">{esc(line) or " "}</div>')
    return f'<div class="mewcode-diff" style="{_DIFF_BOX}">{"".join(rows)}</div>'


def plan_html(plan: RevertPlan) -> str:
    """The plan (or its outcome, once applied) as HTML: one line per file, diffs below."""
    items = []
    for item in plan.items:
        if plan.applied:
            ok = item.outcome in ("restored", "deleted", "already gone")
            what, color = item.outcome, COLORS["ok"] if ok else COLORS["warn"]
        else:
            what, color = _ACTION[item.action]
            if item.reason:
                what += f" ({item.reason})"
        diff = _diff_html(item.diff) if item.diff and not plan.applied else ""
        items.append(
            f'<div class="mewcode-revert-file"><code>{esc(item.shown)}</code> · '
            f'<span style="color:{color}">{esc(what)}</span>{diff}</div>'
        )
    for summary in plan.untracked:
        items.append(
            f'<div class="mewcode-revert-file"><code>{esc(summary)}</code> · '
            f'<span style="color:{COLORS["muted"]}">{esc(plan.record.commands_note)}</span></div>'
        )
    return "".join(items)


class RevertCard:
    """The card for one turn; ``widget`` is what is shown."""

    def __init__(self, revert: TurnRevert) -> None:
        self.revert = revert
        n = len(revert.files)
        self.last: RevertPlan | None = None
        self.widget = RevertWidget(label=f"Revert {n} file{'s' if n != 1 else ''}")
        self.widget.offline = self.static_bundle()["text/html"]
        self.widget.on_msg(self._on_message)
        self._busy = asyncio.Lock()  # one click's work at a time
        try:  # made on the kernel's loop (the turn's end), which the work runs on
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    def reverted(self) -> bool:
        """Whether the turn has been reverted (here or by ``/rewind``)."""
        return self.revert.reverted() is not None

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        event = content.get("event")
        if event == "preview":
            self._run(self.preview)
        elif event == "restore":
            force = bool(content.get("force"))
            self._run(lambda: self.restore(force=force))
        elif event == "cancel" and self.widget.state == "preview":
            self.widget.state = "ready"

    def _run(self, work: Callable[[], Coroutine[Any, Any, RevertPlan]]) -> None:
        """Run ``work`` on the kernel's loop, one click at a time. Never waited
        for here: a click may arrive on a subshell's thread, and the front end's
        answers that restoring an open notebook needs arrive on that thread too."""

        async def guarded() -> None:
            async with self._busy:
                try:
                    await work()
                except Exception as exc:  # shown in the card, never lost in the kernel log
                    self._show(
                        "done", f'<span style="color:{COLORS["error"]}">✗ {esc(str(exc))}</span>'
                    )

        loop = self._loop
        if loop is None or loop.is_closed():
            asyncio.run(guarded())
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(guarded())
        else:
            asyncio.run_coroutine_threadsafe(guarded(), loop)

    async def preview(self) -> RevertPlan:
        plan = self.last = await self.revert.plan()
        head = (
            "Nothing to revert: every file is already as before the turn."
            if not plan.changes and not plan.conflicts
            else "Reverting would:"
        )
        with self.widget.hold_sync():
            self.widget.conflicts = bool(plan.conflicts)
            self.widget.can_restore = bool(plan.changes or plan.conflicts)
            self._show("preview", f"<div>{esc(head)}</div>{plan_html(plan)}")
        return plan

    async def restore(self, *, force: bool = False) -> RevertPlan:
        plan = self.last = await self.revert.apply(force=force)
        if not plan.applied:  # a file changed since, or nothing to do: nothing was touched
            with self.widget.hold_sync():
                self.widget.conflicts = bool(plan.conflicts)
                self.widget.can_restore = bool(plan.changes or plan.conflicts)
                why = (
                    "Nothing reverted: some files changed since the turn."
                    if plan.conflicts
                    else "Nothing to revert."
                )
                self._show("preview", f"<div>{esc(why)}</div>{plan_html(plan)}")
            return plan
        done = sum(1 for i in plan.items if i.outcome in ("restored", "deleted"))
        head = f"↶ Reverted {done} file{'s' if done != 1 else ''}:"
        self._show("done", f'<div style="color:{COLORS["ok"]}">{esc(head)}</div>{plan_html(plan)}')
        return plan

    def static_bundle(self) -> Bundle:
        """The card without the widget, for a saved notebook: what the revert
        did (here, or by ``/rewind``), or the command that reverts the turn."""
        plan = self.last
        if plan is not None and plan.applied:
            done = sum(1 for i in plan.items if i.outcome in ("restored", "deleted"))
            head = f"↶ Reverted {done} file{'s' if done != 1 else ''} of this turn"
            lines = [f"{i.shown}: {i.outcome}" for i in plan.items]
            html = f'<div style="{MUTED}">{esc(head)}:</div>{plan_html(plan)}'
            text = head + ":\n" + "\n".join(lines)
            return {"text/html": html, "text/markdown": text, "text/plain": text}
        reverted = self.revert.reverted()
        if reverted is not None:
            outcomes = reverted.get("files") if isinstance(reverted.get("files"), dict) else {}
            lines = [f"{name}: {outcome}" for name, outcome in outcomes.items()]
            text = "↶ this turn was reverted (/rewind)" + (
                ":\n" + "\n".join(lines) if lines else ""
            )
            items = "".join(f"<div><code>{esc(line)}</code></div>" for line in lines)
            html = (
                f'<div class="mewcode-revert-static" style="{MUTED}">'
                f"↶ this turn was reverted (<code>/rewind</code>){':' if lines else ''}</div>{items}"
            )
            return {"text/html": html, "text/markdown": text, "text/plain": text}
        files = self.revert.files
        names = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        command = f"%agent /rewind {self.revert.label}"
        head = f"↶ this turn changed {len(files)} file{'s' if len(files) != 1 else ''} ({names}): "
        them = "it" if len(files) == 1 else "them"
        text = f"{head}`{command}` reverts {them}"
        html = (
            f'<div class="mewcode-revert-static" style="{MUTED}">{esc(head)}'
            f"<code>{esc(command)}</code> reverts {them}</div>"
        )
        return {"text/html": html, "text/markdown": text, "text/plain": text}

    def _show(self, state: str, body: str) -> None:
        with self.widget.hold_sync():
            self.widget.body = body
            self.widget.state = state
            if state == "done":  # the outcome stays readable once the kernel is gone
                self.widget.offline = ""


def track(card: RevertCard, part: WidgetPart) -> None:
    """Remember a card shown by ``part`` until it is settled."""
    _LIVE[:] = [(c, p) for c, p in _LIVE if not p.final]
    _LIVE.append((card, part))


def settle_reverted() -> int:
    """Settle the live cards whose turn has been reverted (``/rewind``): their
    button would offer what is done."""
    done = 0
    for card, part in list(_LIVE):
        if card.reverted():
            _LIVE.remove((card, part))
            done += part.finalize()
    return done
