"""What one agent cell needs around its turn: the session's overrides for
the cell (``for_cell``), why its provider cannot be used, whether it is
drawn by live widgets, the note about the session a restart left behind,
and live widgets settled into their static forms."""

from __future__ import annotations

import os
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
    front end that allowed stdin, widgets not turned off)."""
    kernel = getattr(shell, "kernel", None)
    if not getattr(kernel, "_allow_stdin", False):
        return False
    return os.environ.get("MEWCODE_RENDERER", "widgets").strip().lower() in ("", "widgets")


def previous_session_note(root: Path) -> str | None:
    """``new session (previous: <id>, /resume to continue)`` when the project
    has a stored session (e.g. the kernel was restarted), else ``None``."""
    from mewcode_kernel.core.errors import SessionError
    from mewcode_kernel.core.session import list_sessions

    try:
        latest = next(iter(list_sessions(root)), None)
    except (OSError, SessionError):  # a linked sessions folder: the first turn says so
        return None
    if latest is None:
        return None
    return f"new session (previous: {latest.id}, /resume to continue)"


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
