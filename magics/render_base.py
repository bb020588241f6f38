"""The seam between the controller that runs a turn and what draws it.

One ``Renderer`` per agent cell. The controller feeds it every ``AgentEvent``
(dispatched to ``on_<kind>`` methods), asks it for approvals, and calls
``finish`` once at the end, whatever happened (done, error, cancelled).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from mewcode_kernel.core.commands import CommandResult
from mewcode_kernel.core.events import AgentEvent, TurnDone
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.tools import Tool

__all__ = ["Renderer", "ToolLookup", "dispatch"]

ToolLookup = Callable[[str], Tool | None]


class Renderer(Protocol):
    #: False for renderers that cannot ask a person (headless runs).
    interactive: bool
    #: True when it draws live widgets (so task boards can be shown beside it).
    shows_widgets: bool

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
        """Begin drawing a turn. ``tools`` finds a tool's metadata by name (what a
        row shows); ``root``: the project root (for previews of file changes);
        ``started_at`` (``time.monotonic()``): when the cell began; ``starting``:
        the display id of the cell's "starting…" line, for a renderer that keeps
        it up to date."""
        ...

    def on_event(self, event: AgentEvent) -> None:
        """Draw one event (usually ``dispatch(self, event)``)."""
        ...

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Show an approval card and wait for the answer (interactive only)."""
        ...

    def show_command(self, result: CommandResult) -> None: ...

    def show_error(self, message: str) -> None:
        """A readable error for an expected failure (bad option, config, provider)."""
        ...

    def finish(
        self,
        done: TurnDone | None,
        *,
        cancelled: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Flush everything and show the footer. ``metadata`` is the cell's provenance
        (session_id, provider, model, tokens, tools_used, stop_reason, ..., and
        ``cost_usd`` when known); the last output carries it as ``{"mewcode": metadata}``.
        ``finish(None)`` after ``show_command`` just flushes."""
        ...


def dispatch(renderer: object, event: AgentEvent) -> None:
    """Call ``renderer.on_<event.kind>(event)`` if the renderer has it."""
    handler = getattr(renderer, f"on_{event.kind}", None)
    if handler is not None:
        handler(event)
