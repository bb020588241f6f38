"""A click's answer handed to the event loop that waits for it.

JupyterLab 4.6 sends widget messages on a kernel subshell, so a click is
handled on that subshell's thread while the cell waits on the kernel's
loop: the answer is set on the loop, thread-safely, and only the first
answer counts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

__all__ = ["answer_future"]

T = TypeVar("T")


def answer_future() -> tuple[asyncio.Future[T], Callable[[T], None]]:
    """A future on the running loop, and the function any thread may call
    with the answer (later calls are ignored)."""
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[T] = loop.create_future()

    def settle(answer: T) -> None:
        if not answered.done():
            answered.set_result(answer)

    def resolve(answer: T) -> None:
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            settle(answer)
        else:
            loop.call_soon_threadsafe(settle, answer)

    return answered, resolve
