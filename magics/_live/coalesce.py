"""The paint scheduler: coalesces repaints of a transcript's parts.

Parts mark themselves dirty as events arrive; the ``Painter`` repaints the
dirty ones on a timer of the running event loop (``call_later``, no threads):
at most one tick per ``interval`` (so each part is repainted at most about
20 times a second), and at most ``budget`` messages per tick (so a burst of
new parts cannot flood IOPub: the rest waits for the next tick). Dirty parts
are painted in the order they were first marked, which keeps new outputs in
the order they were created. ``flush()`` paints everything now, whatever the
budget: before waiting for a click and at the end of a turn.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Paintable", "Painter"]

log = logging.getLogger(__name__)


class Paintable(Protocol):
    def paint(self) -> int:
        """Send the part's current state (the first call shows it); return how
        many messages that took (0 when nothing changed)."""
        ...


class Painter:
    """Repaints dirty parts at a bounded rate on ``loop``.

    ``context`` is the context callbacks run in: the cell's, so that what is
    displayed from a timer (or after a button click) still belongs to the
    cell that runs the turn. With no loop, every mark paints at once.
    """

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop | None,
        context: contextvars.Context | None = None,
        interval: float = 0.05,
        budget: int = 10,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._loop = loop
        self._context = context
        self._interval = interval
        self._budget = budget
        self._clock = clock
        self._dirty: dict[Paintable, None] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._last = float("-inf")
        self._closed = False
        #: Messages sent so far (as reported by the parts).
        self.sent = 0
        #: Ticks run so far (timer ticks and flushes).
        self.ticks = 0

    @property
    def pending(self) -> int:
        return len(self._dirty)

    def mark(self, part: Paintable) -> None:
        """Repaint ``part`` at the next tick."""
        if self._closed:
            return
        self._dirty[part] = None
        if self._loop is None:
            self.flush()
        elif self._timer is None:
            self._schedule()

    def flush(self) -> None:
        """Paint every dirty part now, ignoring the budget."""
        self._cancel()
        self._run(limit=None)

    def close(self) -> None:
        """Flush, then stop: later marks are ignored."""
        self.flush()
        self._closed = True

    def _schedule(self) -> None:
        assert self._loop is not None
        delay = max(0.0, self._last + self._interval - self._clock())
        self._timer = self._loop.call_later(delay, self._tick, context=self._context)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        self._timer = None
        self._run(limit=self._budget)
        if self._dirty and not self._closed:
            self._schedule()

    def _run(self, *, limit: int | None) -> None:
        self._last = self._clock()
        self.ticks += 1
        sent = 0
        while self._dirty and (limit is None or sent < limit):
            part = next(iter(self._dirty))
            del self._dirty[part]
            try:
                sent += part.paint()
            except Exception:  # a drawing bug must not end the turn
                log.exception("mewcode: could not draw %r", part)
        self.sent += sent
