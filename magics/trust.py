"""Asking a person, once per kernel and per set of settings, whether to trust
the project's security-relevant settings (``core.trust``): a card in a live
notebook with widgets. Everywhere else the session's notice says what was
ignored and how to trust it (``/trust yes``, ``MEWCODE_TRUST_PROJECT=1``).

The answered card gives way to one line at once. Trusting applies the
settings and starts the project's MCP servers before the cell's turn
(``AgentSession`` starts the servers a trust now allows before each turn).
While the card waits, the cell's "starting…" line is paused: the time spent
deciding is not the agent starting.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from . import interrupt

if TYPE_CHECKING:
    from mewcode_kernel.core import AgentSession

    from .starting import StartingLine

__all__ = ["offer_trust"]


async def offer_trust(
    shell: Any, session: AgentSession, asked: set[str], starting: StartingLine | None = None
) -> bool:
    """Show the trust card if the project's settings wait for trust and a person
    can click; ``asked`` holds the digests already offered (never twice).
    Returns whether the project is trusted afterwards."""
    trust = session.trust
    if trust.trusted or trust.digest in asked:
        return trust.trusted
    kernel = getattr(shell, "kernel", None)
    if not getattr(kernel, "_allow_stdin", False):
        return False  # headless: the notice says what was ignored
    from .cell import draws_live_widgets

    if not draws_live_widgets(shell):
        return False
    try:
        from ._live.handoff import answer_future
        from ._live.parts import WidgetPart
        from ._live.surface import CellSurface
        from ._live.trust_card import TrustCard
    except ImportError:
        return False
    asked.add(trust.digest)
    answered, resolve = answer_future()
    card = TrustCard(trust, resolve)
    part = WidgetPart(
        CellSurface(),
        card.widget,
        card.static_bundle,
        kind="trust",
        closing=lambda: card.abandon("the kernel stopped"),
    )
    if starting is not None:
        starting.pause()
    part.paint()
    try:
        yes = await interrupt.waiting_in_slices(answered)
    except asyncio.CancelledError:
        card.abandon("the cell was interrupted")
        raise
    finally:
        part.finalize()
        if starting is not None:
            starting.resume()
    if yes:
        session.trust_project(trust)  # exactly what the card showed
    return yes
