"""Kernel › Interrupt for agent turns.

Each foreground turn runs as its own task, registered here while its cell
runs. The ``mewcode`` kernel's SIGINT handler calls ``cancel_foreground``
(through ``loop.call_soon_threadsafe``, which wakes the loop at once); the
controller then closes the turn cleanly and the cell ends.

In a stock ipykernel the SIGINT handler only schedules the cell's
cancellation and does not wake the event loop (measured on 7.4: an
``await asyncio.sleep(30)`` cell ends after the sleep, not at the
interrupt). There, ``waiting_in_slices`` and ``Waker`` keep the loop
turning every ``SLICE`` seconds while a turn runs, so the cancellation is
honoured within a slice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = [
    "SLICE",
    "Waker",
    "cancel_foreground",
    "foreground",
    "set_prompt_interrupts",
    "waiting_in_slices",
]

T = TypeVar("T")

SLICE = 0.25
"""Seconds between checks for an interrupt while waiting (approvals, slow streams)."""

_foreground: set[asyncio.Task[object]] = set()
_prompt_interrupts = False


def set_prompt_interrupts(enabled: bool) -> None:
    """Called by the ``mewcode`` kernel: its SIGINT handler wakes the loop itself,
    so turns need no ``Waker``."""
    global _prompt_interrupts
    _prompt_interrupts = enabled


@contextmanager
def foreground(task: asyncio.Task[object]) -> Iterator[None]:
    """Register ``task`` as the turn of the running cell."""
    _foreground.add(task)
    try:
        yield
    finally:
        _foreground.discard(task)


def cancel_foreground() -> bool:
    """Cancel the turn of the running cell; ``False`` if there is none."""
    running = [t for t in _foreground if not t.done()]
    for task in running:
        task.cancel()
    return bool(running)


async def waiting_in_slices(awaitable: Awaitable[T]) -> T:
    """Await ``awaitable``, waking every ``SLICE`` seconds so a pending
    cancellation (stock ipykernel interrupt) is delivered promptly."""
    future = asyncio.ensure_future(awaitable)
    try:
        while True:
            done, _ = await asyncio.wait({future}, timeout=SLICE)
            if done:
                return future.result()
    finally:
        if not future.done():
            future.cancel()


class Waker:
    """While active, wakes the event loop every ``SLICE`` seconds (stock kernels only)."""

    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None
        self._active = False

    def __enter__(self) -> Waker:
        if not _prompt_interrupts:
            self._active = True
            self._schedule()
        return self

    def __exit__(self, *_: object) -> None:
        self._active = False
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _schedule(self) -> None:
        if self._active:
            self._handle = asyncio.get_running_loop().call_later(SLICE, self._schedule)
