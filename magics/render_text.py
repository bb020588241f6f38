"""``TextRenderer``: the transcript as text and Markdown outputs.

Used for headless runs (nbclient, nbval, ``jupyter execute``), where saved
notebooks must read well and compare under nbval, and as the fallback when
live widgets are not available. What it prints is deterministic for a given
conversation: no ids, timings or token counts (those go into the final
output's metadata, which nbval does not compare).

Output of one turn::

    ⓘ Using replay of quickstart.cassette.json (offline, ...): no API key is set.
    <Markdown: text the model wrote before calling tools>
    ✓ read_file stats.py
    ✗ denied edit_file stats.py: ... (nobody to ask: MEWCODE_HEADLESS_APPROVAL=deny)
    <Markdown: the final answer, with {"mewcode": provenance} metadata>
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
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
    Notice,
    PermissionDecided,
    RetryScheduled,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnDone,
)
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.tools import Tool

from .render_base import ToolLookup, dispatch

__all__ = ["TextRenderer", "hook_line", "parse_answer", "revert_hint", "tool_summary"]

DisplayFn = Callable[..., Any]
AskLine = Callable[[str], Awaitable[str]]

_NOTICE_MARK = {"info": "ⓘ", "warning": "⚠", "error": "✗"}
_KEY_ARGS = ("path", "file_path", "command", "pattern", "url", "name", "prompt")
_CLEAN_STOPS = {"end_turn", "stop_sequence"}


def tool_summary(call: ToolUseBlock, width: int = 70, tool: Tool | None = None) -> str:
    """``tool key-argument``, e.g. ``read_file stats.py`` or ``bash pytest -q``:
    the argument ``tool``'s metadata names, else the usual suspects."""
    value = tool.display(call.input) if tool is not None else ""
    if not value:
        value = next((call.input[k] for k in _KEY_ARGS if isinstance(call.input.get(k), str)), "")
    if not value:
        value = next((v for v in call.input.values() if isinstance(v, str)), "")
    value = " ".join(value.split())
    if len(value) > width:
        value = value[: width - 1] + "…"
    return f"{call.name} {value}".rstrip()


def revert_hint(revert: TurnRevert) -> list[str]:
    """How to revert a turn, in words without ids (saved notebooks compare)."""
    lines = []
    if revert.files:
        n = len(revert.files)
        names = ", ".join(revert.files[:5]) + (f" and {n - 5} more" if n > 5 else "")
        them = "it" if n == 1 else "them"
        lines.append(
            f"↶ this turn changed {n} file{'s' if n != 1 else ''} ({names}): "
            f"`%agent /rewind {revert.turn}` reverts {them} (`--dry-run` shows the diff first)"
        )
    if revert.commands:
        lines.append(f"↶ {'; '.join(revert.commands)} — {revert.commands_note}")
    return lines


def hook_line(event: HookRan) -> str:
    """``⚓ hook NAME · EVENT · OUTCOME: detail``, the detail's first line."""
    detail = next((ln.strip() for ln in event.detail.splitlines() if ln.strip()), "")
    if len(detail) > 160:
        detail = detail[:159] + "…"
    return f"⚓ hook {event.name} · {event.event} · {event.outcome}" + (
        f": {detail}" if detail else ""
    )


def parse_answer(reply: str) -> ApprovalAnswer:
    """``y``/``yes`` allow, ``a``/``always`` allow for the session, empty or
    ``n``/``no`` deny; any other text denies and is passed to the model."""
    text = reply.strip()
    word = text.lower()
    if word in {"y", "yes"}:
        return ApprovalAnswer(allow=True)
    if word in {"a", "always"}:
        return ApprovalAnswer(allow=True, always=True)
    if word in {"", "n", "no"}:
        return ApprovalAnswer(allow=False)
    return ApprovalAnswer(allow=False, note=text)


class TextRenderer:
    """Renders one agent cell as stream lines and Markdown displays.

    ``interactive``: approvals are asked with ``ask_line`` (the kernel's stdin
    channel); otherwise the core's headless policy decides and ``policy``
    (``allow``/``deny``) is named in the one line that reports it.
    """

    def __init__(
        self,
        *,
        interactive: bool = False,
        ask_line: AskLine | None = None,
        policy: str = "deny",
        display: DisplayFn | None = None,
        write: Callable[[str], object] | None = None,
    ) -> None:
        self.interactive = interactive and ask_line is not None
        self.shows_widgets = False
        self._ask_line = ask_line
        self._policy = policy
        if display is None:
            from IPython.display import display as ipy_display

            display = ipy_display
        self._display = display
        self._write = write or sys.stdout.write
        self._answer = ""
        self._reasons: dict[str, str] = {}
        self._denied: set[str] = set()
        self._errors: list[str] = []
        self._tools: ToolLookup | None = None
        self._revert: TurnRevert | None = None
        # Tools of one round run concurrently and finish in any order; their lines
        # are printed in the order the model called them so saved notebooks compare.
        self._running: list[str] = []
        self._held: dict[str, list[str]] = {}
        self._finished: set[str] = set()

    # --- Renderer protocol -------------------------------------------------------

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
        """Nothing is printed: the provider shows in notices only when it is a replay."""
        self._tools = tools

    def on_event(self, event: AgentEvent) -> None:
        dispatch(self, event)

    def _tool(self, name: str) -> Tool | None:
        return self._tools(name) if self._tools is not None else None

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        if self._ask_line is None:
            raise RuntimeError("this renderer cannot ask")
        reply = await self._ask_line(
            f"Allow {tool_summary(request.call, tool=self._tool(request.call.name))}? [y]es / [a]lways / [N]o (or a note for the model): "
        )
        return parse_answer(reply)

    def offer_revert(self, revert: TurnRevert) -> None:
        """The turn changed files: say how to revert them (at ``finish``)."""
        self._revert = revert

    def show_command(self, result: CommandResult) -> None:
        meta = {"mewcode": result.meta} if result.meta else {}
        self._markdown(result.markdown, metadata=meta)

    def show_error(self, message: str) -> None:
        self._line(f"✗ {message}")

    def finish(
        self,
        done: TurnDone | None,
        *,
        cancelled: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self._release(everything=True)
        for message in self._errors:
            if done is None or message != done.error:
                self._line(f"✗ {message}")
        if done is None and not cancelled:
            return  # a slash command, or nothing ran
        reason = "cancelled" if cancelled or done is None else done.reason
        if done is not None and not cancelled and reason not in _CLEAN_STOPS:
            self._line(f"■ stopped: {reason}")
        if self._revert is not None:
            for line in revert_hint(self._revert):
                self._line(line)
        text = self._answer.strip() or f"*(no answer: {reason})*"
        self._markdown(text, metadata={"mewcode": metadata} if metadata else {})

    # --- events ------------------------------------------------------------------

    def on_assistant_message(self, event: AssistantMessage) -> None:
        text = event.message.text.strip()
        if event.message.tool_uses:
            if text:
                self._markdown(text)
        else:
            self._answer = text

    def on_permission_decided(self, event: PermissionDecided) -> None:
        self._reasons[event.call.id] = event.reason

    def on_approval_requested(self, event: ApprovalRequested) -> None:
        self._line(
            f"? {tool_summary(event.call, tool=self._tool(event.call.name))} needs approval: {event.reason}"
        )

    def on_approval_resolved(self, event: ApprovalResolved) -> None:
        summary = tool_summary(event.call, tool=self._tool(event.call.name))
        if not event.allowed:
            self._denied.add(event.call.id)
        if event.by == "headless":
            reason = self._reasons.get(event.call.id, "needs approval")
            verdict = "allowed" if event.allowed else "denied"
            self._line(
                f"{'✓' if event.allowed else '✗'} {verdict} {summary}: {reason} "
                f"(nobody to ask: MEWCODE_HEADLESS_APPROVAL={self._policy})"
            )
        elif event.allowed:
            rules = f" (always: {', '.join(event.rules_added)})" if event.rules_added else ""
            self._line(f"✓ you allowed {summary}{rules}")
        else:
            note = f" ({event.note})" if event.note else ""
            self._line(f"✗ you denied {summary}{note}")

    def on_tool_started(self, event: ToolStarted) -> None:
        self._running.append(event.call.id)

    def on_tool_finished(self, event: ToolFinished) -> None:
        call_id = event.call.id
        if call_id not in self._denied:
            summary = tool_summary(event.call, tool=self._tool(event.call.name))
            if event.result.is_error:
                first = next((ln for ln in event.result.text.splitlines() if ln.strip()), "failed")
                self._call_line(call_id, f"✗ {summary}: {first.strip()[:160]}")
            else:
                self._call_line(call_id, f"✓ {summary}")
        self._finished.add(call_id)
        self._release()

    def on_tool_progress(self, event: ToolProgress) -> None:
        """What a subagent inside the call does, one indented line per tool."""
        nested = event.nested
        if isinstance(nested, ToolFinished):
            mark = "✗" if nested.result.is_error else "✓"
            line = f"  ↳ {mark} {tool_summary(nested.call, tool=self._tool(nested.call.name))}"
            self._call_line(event.call.id, line)
        elif isinstance(nested, Notice) and nested.level != "info":
            self._call_line(event.call.id, f"  ↳ {_NOTICE_MARK[nested.level]} {nested.message}")

    def _call_line(self, call_id: str, text: str) -> None:
        """Print ``text`` now if ``call_id`` is the earliest call still running,
        else hold it until the calls before it have finished."""
        if not self._running or self._running[0] == call_id or call_id not in self._running:
            self._line(text)
        else:
            self._held.setdefault(call_id, []).append(text)

    def _release(self, *, everything: bool = False) -> None:
        while self._running and (everything or self._running[0] in self._finished):
            call_id = self._running.pop(0)
            self._finished.discard(call_id)
            for text in self._held.pop(call_id, []):
                self._line(text)
            if self._running and not everything:
                for text in self._held.pop(self._running[0], []):
                    self._line(text)

    def on_hook_ran(self, event: HookRan) -> None:
        """One line per hook run (no timing: saved notebooks must compare)."""
        self._line(hook_line(event))

    def on_retry_scheduled(self, event: RetryScheduled) -> None:
        self._line(f"↻ retrying ({event.attempt}/{event.max_attempts}): {event.reason}")

    def on_notice(self, event: Notice) -> None:
        if event.level == "error":
            self._errors.append(event.message)
        else:
            self._line(f"{_NOTICE_MARK[event.level]} {event.message}")

    # --- output ------------------------------------------------------------------

    def _line(self, text: str) -> None:
        self._write(text + "\n")

    def _markdown(self, text: str, *, metadata: dict[str, Any] | None = None) -> None:
        self._display(
            {"text/markdown": text, "text/plain": text}, raw=True, metadata=metadata or {}
        )
