"""The one-line outputs of a transcript: notices, errors and the footer."""

from __future__ import annotations

from typing import Any

from mewcode_kernel.core.events import HookRan, TurnDone

from .fmt import COLORS, MUTED, duration, esc, pre, usage_line
from .surface import Bundle

__all__ = ["error_bundle", "footer_bundle", "hook_bundle", "line_bundle"]

_ENDINGS = {
    "end_turn": ("✓", "done", COLORS["ok"]),
    "stop_sequence": ("✓", "done", COLORS["ok"]),
    "cancelled": ("■", "interrupted", COLORS["muted"]),
    "max_turns": ("⚠", "stopped at the turn limit", COLORS["warn"]),
    "max_tokens": ("⚠", "cut off at the output token limit", COLORS["warn"]),
    "refusal": ("⚠", "the model declined", COLORS["warn"]),
    "error": ("✗", "stopped by an error", COLORS["error"]),
}


def line_bundle(text: str, color: str) -> Bundle:
    return {"text/html": f'<div style="color:{color}">{esc(text)}</div>', "text/plain": text}


_HOOK_COLOR = {"blocked": COLORS["error"], "failed": COLORS["warn"], "deny": COLORS["error"]}


def hook_bundle(event: HookRan) -> Bundle:
    """A hook run as a collapsed row (``⚓ PreToolUse · guard · blocked · 0.1 s``)
    that expands to why and what it printed."""
    took = "" if event.outcome == "started" else f" · {duration(event.seconds)}"
    summary = f"⚓ {event.event} · {event.name} · {event.outcome}{took}"
    color = _HOOK_COLOR.get(event.outcome, COLORS["muted"])
    body = []
    if event.detail:
        body.append(f'<div style="{MUTED}">{esc(event.detail)}</div>')
    body.append(pre(event.output) if event.output else f'<div style="{MUTED}">(no output)</div>')
    html = (
        '<details class="mewcode-hook" style="margin:1px 0">'
        f'<summary style="cursor:pointer;color:{color}">{esc(summary)}</summary>'
        f'<div style="margin:2px 0 4px 1.3em">{"".join(body)}</div></details>'
    )
    text = summary + (f": {event.detail}" if event.detail else "")
    return {"text/html": html, "text/plain": text}


def error_bundle(message: str) -> Bundle:
    html = (
        '<div style="border-left:3px solid '
        f'{COLORS["error"]};padding:4px 8px;margin:2px 0;white-space:pre-wrap">'
        f'<b style="color:{COLORS["error"]}">Error</b> {esc(message)}</div>'
    )
    return {"text/html": html, "text/plain": f"Error: {message}"}


def footer_bundle(
    done: TurnDone | None,
    *,
    cancelled: bool,
    metadata: dict[str, Any],
    elapsed: float,
    label: str,
    session_id: str | None,
) -> Bundle:
    items: list[str] = []
    color = COLORS["muted"]
    if cancelled or done is not None:
        reason = "cancelled" if cancelled or done is None else done.reason
        glyph, status, color = _ENDINGS.get(reason, ("⚠", f"stopped ({reason})", COLORS["warn"]))
        items.append(f"{glyph} {status}")
    title = ""
    if done is not None:
        items.append(usage_line(done.usage))
        items.append(f"{done.model_turns} model turn{'s' if done.model_turns != 1 else ''}")
        title = f"session total: {usage_line(done.session_usage)}"
    items.append(duration(elapsed))
    cost = metadata.get("cost_usd")
    if isinstance(cost, int | float):
        items.append(f"${cost:,.4f}")
    if label:
        items.append(label)
    if session_id:
        items.append(f"session {session_id}")
    text = " · ".join(items)
    first, _, rest = text.partition(" · ")
    html = (
        f'<div class="mewcode-footer" style="{MUTED};font-size:0.9em;margin-top:4px" '
        f'title="{esc(title)}">'
        f'<span style="color:{color}">{esc(first)}</span>'
        + (f" · {esc(rest)}" if rest else "")
        + "</div>"
    )
    return {"text/html": html, "text/plain": text}
