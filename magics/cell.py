"""What one agent cell needs around its turn: the session's overrides for
the cell (``for_cell``), why its provider cannot be used, whether it is
drawn by live widgets, the note about the session a restart left behind,
and live widgets settled into their static forms."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import AgentCellError

if TYPE_CHECKING:
    from mewcode_kernel.core import AgentSession

    from .options import AgentOptions

__all__ = [
    "draws_live_widgets",
    "for_cell",
    "previous_session_note",
    "settle_live",
    "settle_reverted_cards",
    "unavailable_reason",
]


def settle_live(kind: str | None = None) -> None:
    """Replace the live widgets of ``kind`` (all with ``None``) by their static
    forms (``_live.settle``): the "Revert" cards when the next turn starts,
    every widget when the kernel goes away."""
    settle = sys.modules.get("magics._live.settle")  # loaded only if a widget was shown
    if settle is not None:
        settle.settle(kind)


def settle_reverted_cards() -> None:
    """Settle the "Revert" cards whose turn a command (``/rewind``) reverted."""
    cards = sys.modules.get("magics._live.revert_card")
    if cards is not None:
        cards.settle_reverted()


def unavailable_reason(session: AgentSession) -> str | None:
    """Why the session's provider cannot be used (e.g. its key is not set), or None."""
    from mewcode_kernel.core.providers.unavailable import UnavailableProvider

    provider = session.provider
    return provider.problem if isinstance(provider, UnavailableProvider) else None


def draws_live_widgets(shell: Any) -> bool:
    """Whether this cell will be drawn by the live widget renderer (a person at a
    front end that allowed stdin and can draw widgets, ``frontends.renderer_for``)."""
    from .frontends import renderer_for

    kernel = getattr(shell, "kernel", None)
    if not getattr(kernel, "_allow_stdin", False):
        return False
    try:
        return renderer_for(kernel) == "widgets"
    except ValueError:  # the turn's renderer says what is wrong with the setting
        return False


def previous_session_note(root: Path) -> str | None:
    """``new session (previous: <id>, /resume to continue)`` when the project
    has a stored session of the user's (e.g. the kernel was restarted, shut
    down or culled; saying how many of its background tasks that cut off),
    else ``None``."""
    from mewcode_kernel.core.errors import SessionError
    from mewcode_kernel.core.locations import notebook_path
    from mewcode_kernel.core.session import list_sessions
    from mewcode_kernel.core.session.records import task_table

    try:
        infos = list_sessions(root)
        if not infos:
            return None
        # this notebook's latest, when kernels said which notebook they served
        here = notebook_path(root)
        mine = [i for i in infos if i.notebook and here and (root / i.notebook) == here]
        latest = (mine or infos)[0]
        records = {r.get("id"): r for r in task_table(latest.path).read()}
    except (OSError, SessionError):  # a linked sessions folder: the first turn says so
        return None
    # the last record of each task; one still running was cut off with its kernel
    cut = sum(1 for r in records.values() if r.get("state") in ("interrupted", "running", "queued"))
    tasks = f", {cut} background task(s) interrupted: /tasks after /resume" if cut else ""
    return f"new session (previous: {latest.id}{tasks}, /resume to continue)"


@asynccontextmanager
async def for_cell(
    session: AgentSession, options: AgentOptions, answers: dict[str, Any]
) -> AsyncIterator[None]:
    """The session's overrides for this cell: ``--provider`` / ``--model`` /
    ``--mode`` / ``--agent`` and who answers its approvals, put back after."""
    from mewcode_kernel.core.errors import ConfigError

    async with AsyncExitStack() as stack:
        cell = session.for_cell(
            provider=options.provider,
            model=options.model,
            mode=options.mode,
            agent=options.agent,
            **answers,
        )
        try:
            await stack.enter_async_context(cell)
        except ConfigError as exc:
            if options.agent and exc.message.startswith("no subagent definition"):
                raise AgentCellError(f"--agent {options.agent}: {exc.message}") from None
            raise AgentCellError(str(exc)) from None
        except ValueError as exc:
            raise AgentCellError(f"--mode {options.mode}: {exc}") from None
        yield
