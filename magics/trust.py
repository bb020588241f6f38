"""Asking a person, once per kernel and per set of settings, whether to trust
the project's security-relevant settings (``core.trust``): a card in a live
notebook with widgets. Everywhere else the session's notice says what was
ignored and how to trust it (``/trust yes``, ``MEWCODE_TRUST_PROJECT=1``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from . import interrupt

if TYPE_CHECKING:
    from mewcode_kernel.core import AgentSession

__all__ = ["offer_trust"]


async def offer_trust(shell: Any, session: AgentSession, asked: set[str]) -> bool:
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
        from IPython.display import display

        from ._live.trust_card import TrustCard
    except ImportError:
        return False
    asked.add(trust.digest)
    answered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def on_answer(yes: bool) -> None:
        if not answered.done():
            answered.set_result(yes)

    card = TrustCard(trust, on_answer)
    display(card.widget)
    try:
        yes = await interrupt.waiting_in_slices(answered)
    except asyncio.CancelledError:
        card.abandon("not answered: the cell was interrupted")
        raise
    if yes:
        session.trust_project(trust)  # exactly what the card showed
    return yes
