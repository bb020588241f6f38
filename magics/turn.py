"""Running one agent turn for a cell: which renderer draws it, who answers
approvals, how an interrupt ends it, and the provenance the cell carries."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.agent.loop import HEADLESS_ENV, headless_policy
from mewcode_kernel.core.events import AgentEvent, Notice, ToolStarted, TurnDone
from mewcode_kernel.core.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationHandler,
    ElicitationRequest,
)
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalHandler, ApprovalRequest
from mewcode_kernel.core.pricing import estimate_cost
from mewcode_kernel.core.usage import Usage

from . import interrupt
from .errors import AgentCellError
from .frontends import renderer_for
from .render_base import Renderer
from .render_text import TextRenderer

__all__ = [
    "TurnOutcome",
    "approval_handler_for",
    "cell_origin",
    "drive_turn",
    "headless_setting",
    "pick_renderer",
    "provenance",
    "turn_events",
]

#: ipykernel dispatches comm messages (widget clicks) while an async cell awaits from 7.4 on.
CLICKS_WHILE_AWAITING = (7, 4)


@dataclass(kw_only=True)
class TurnOutcome:
    done: TurnDone | None
    cancelled: bool
    tools_used: list[str] = field(default_factory=list)


def headless_setting() -> tuple[bool, str]:
    """The headless approval policy as (allow, its name); a readable error if invalid."""
    try:
        allow = headless_policy()
    except ValueError as exc:
        raise AgentCellError(str(exc)) from None
    return allow, "allow" if allow else "deny"


def pick_renderer(
    shell: Any,
    *,
    background: bool,
    policy: str,
    kernel_version: tuple[int, ...] | None = None,
) -> tuple[Renderer, str | None]:
    """The renderer for a cell, and a warning to show with it (or ``None``).

    Interactive when the execute request allowed stdin (a person at a live
    front end): the live widgets where the cell's client can draw them
    (``frontends.renderer_for``: ``MEWCODE_RENDERER``, else what the client
    showed), else text asking over stdin (``jupyter console``, terminal
    IPython; not for background turns: stdin belongs to the running cell).
    Headless otherwise (nbclient, nbval, ``jupyter execute``). ``kernel_version``
    defaults to the installed ipykernel's.
    """
    kernel = getattr(shell, "kernel", None)
    interactive = bool(getattr(kernel, "_allow_stdin", False))
    warning = None
    if kernel_version is None:
        import ipykernel

        kernel_version = tuple(ipykernel.version_info)
    if interactive and kernel_version[:2] < CLICKS_WHILE_AWAITING:
        interactive = False
        version = ".".join(str(part) for part in kernel_version)
        warning = (
            f"ipykernel {version} cannot deliver approval clicks while a cell runs "
            f"(7.4 or newer can): approvals use {HEADLESS_ENV}={policy}."
        )
    if interactive:
        try:
            choice = renderer_for(kernel)
        except ValueError as exc:
            raise AgentCellError(str(exc)) from None
        widgets = _widget_renderer() if choice == "widgets" else None
        if widgets is not None:
            return widgets, warning
        if not background:
            from .stdin import ask_line

            return TextRenderer(
                interactive=True, ask_line=partial(ask_line, kernel), policy=policy
            ), warning
    return TextRenderer(policy=policy), warning


def _widget_renderer() -> Renderer | None:
    try:
        from .render_widgets import WidgetRenderer
    except ImportError:
        return None
    return WidgetRenderer()


def approval_handler_for(renderer: Renderer) -> ApprovalHandler | None:
    """``renderer.ask`` awaited in slices (so an interrupt is honoured), or
    ``None`` for a renderer that cannot ask (the headless policy decides)."""
    if not renderer.interactive:
        return None

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        return await interrupt.waiting_in_slices(renderer.ask(request))

    ask.elicit = form_handler_for(renderer)  # type: ignore[attr-defined]  # its forms too
    return ask


def form_handler_for(renderer: Renderer) -> ElicitationHandler | None:
    """The renderer's form card for an MCP server's request for input, or
    ``None`` where nobody can fill one in (the request is declined)."""
    elicit = getattr(renderer, "elicit", None)
    if not renderer.interactive or elicit is None:
        return None
    # The server's request arrives on its connection's task, started by an
    # earlier cell: the card is drawn in this cell's context, so its output and
    # widget belong to this cell (ipykernel keeps the parent message there).
    cell = contextvars.copy_context()

    async def ask(request: ElicitationRequest) -> ElicitationAnswer:
        shown = asyncio.get_running_loop().create_task(elicit(request), context=cell.copy())
        try:
            return await interrupt.waiting_in_slices(shown)
        finally:
            shown.cancel()

    return ask


async def drive_turn(
    session: AgentSession,
    prompt: str,
    renderer: Renderer,
    *,
    max_turns: int | None = None,
    foreground: bool = True,
    warning: str | None = None,
    info: str | None = None,
    started_at: float | None = None,
    starting: str | None = None,
    origin: dict[str, Any] | None = None,
) -> TurnOutcome:
    """Run one turn, feeding ``renderer``; always ends with ``renderer.finish``.

    ``started_at`` (``time.monotonic()``): when the cell began, so the footer
    shows the cell's wall time; ``starting``: the display id of the cell's
    "starting…" line, which a widget renderer takes over; ``info``: a notice
    shown first (e.g. the session a kernel restart left behind). The turn runs as its own task. In the foreground it is registered for
    Kernel › Interrupt; cancelled either way (directly, or through the cell's
    own cancellation in a stock kernel), the loop first closes the
    conversation, then the outcome says ``cancelled``. ``origin``: the cell
    that runs it (see ``cell_origin``), kept with the turn's checkpoint.
    """
    outcome = TurnOutcome(done=None, cancelled=False)

    async def consume() -> None:
        async for _ in turn_events(
            session,
            prompt,
            renderer,
            outcome,
            max_turns=max_turns,
            warning=warning,
            info=info,
            started_at=started_at,
            starting=starting,
            origin=origin,
        ):
            pass

    task = asyncio.ensure_future(consume())
    try:
        with ExitStack() as stack:
            if foreground:
                stack.enter_context(interrupt.foreground(task))
                stack.enter_context(interrupt.Waker())
            await task
    except asyncio.CancelledError:
        outcome.cancelled = True
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            current.uncancel()  # the cell's cancellation becomes this outcome
        task.cancel()
        await asyncio.wait({task})
    return outcome


async def turn_events(
    session: AgentSession,
    prompt: str,
    renderer: Renderer,
    outcome: TurnOutcome,
    *,
    max_turns: int | None = None,
    warning: str | None = None,
    info: str | None = None,
    started_at: float | None = None,
    starting: str | None = None,
    origin: dict[str, Any] | None = None,
) -> AsyncIterator[AgentEvent]:
    """The turn's events, each drawn by ``renderer`` and noted in ``outcome``;
    the renderer is started first and finished last, whatever happens
    (a cancelled turn is marked so in ``outcome``). See ``drive_turn`` for
    ``info``, ``started_at`` and ``starting``."""
    renderer.start(
        prompt=prompt,
        provider_label=session.provider_label,
        session_id=session.session_id,
        tools=session.tools.get,
        root=session.root,
        started_at=started_at,
        starting=starting,
    )
    if warning:
        renderer.on_event(Notice(level="warning", message=warning))
    if info:
        renderer.on_event(Notice(level="info", message=info))
    begun_before = session.checkpoints.begun
    try:
        async for event in session.run(prompt, max_turns=max_turns, origin=origin):
            if isinstance(event, ToolStarted) and event.call.name not in outcome.tools_used:
                outcome.tools_used.append(event.call.name)
            elif isinstance(event, TurnDone):
                outcome.done = event
            renderer.on_event(event)
            yield event
    except (asyncio.CancelledError, GeneratorExit):
        outcome.cancelled = True
        # what the cut-off turn spent, so the footer and provenance count it
        outcome.done = session.state.cancelled_turn
        raise
    finally:
        ran = session.checkpoints.begun != begun_before  # the turn began (and was numbered)
        offer = getattr(renderer, "offer_revert", None)
        revert = session.turn_revert() if ran else None
        if offer is not None and revert is not None:
            offer(revert)
        renderer.finish(
            outcome.done,
            cancelled=outcome.cancelled,
            metadata=provenance(session, outcome, turn=session.checkpoints.turn if ran else None),
        )


def cell_origin(shell: Any, number: int | None) -> dict[str, Any]:
    """The running cell: the number it shows (``In [N]``, ``number``) and,
    when the front end sends it, its id (for ``/rewind cell N``)."""
    origin: dict[str, Any] = {}
    if isinstance(number, int):
        origin["execution_count"] = number
    kernel = getattr(shell, "kernel", None)
    try:
        parent = kernel.get_parent() if kernel is not None else None
    except Exception:  # older kernels: get_parent takes a channel, or is missing
        parent = None
    cell_id = (parent or {}).get("metadata", {}).get("cellId") if isinstance(parent, dict) else None
    if isinstance(cell_id, str) and cell_id:
        origin["cell_id"] = cell_id[:100]
    return origin


def provenance(
    session: AgentSession, outcome: TurnOutcome, *, turn: int | None = None
) -> dict[str, Any]:
    """What the cell's final output carries under ``metadata["mewcode"]``: no
    secrets. ``turn``: the turn's number in its session (``/rewind
    SESSION:TURN`` reverts it), and the files it changed, when it changed any."""
    done = outcome.done
    usage = done.usage if done is not None else Usage()
    provider = session.provider
    model = (done.model if done is not None else "") or provider.model  # a role's own model
    meta: dict[str, Any] = {
        "session_id": session.session_id,
        "provider": provider.name,
        "model": model,
        "tokens": usage.to_dict(),
        "tools_used": list(outcome.tools_used),
        "stop_reason": "cancelled" if outcome.cancelled or done is None else done.reason,
        "model_turns": done.model_turns if done is not None else 0,
        "mode": session.mode,
    }
    if turn is not None:
        meta["turn"] = turn
        record = session.checkpoints.record
        if record is not None and record.changed:
            meta["files_changed"] = record.changed
    if getattr(session.settings, "protocol", None) != "replay":  # a replay costs nothing
        cost = estimate_cost(model, usage)
        if cost is not None:
            meta["cost_usd"] = round(cost, 6)
    return meta
