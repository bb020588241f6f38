"""The ``mewcode`` kernel: IPython with the MewCode magics loaded at start, and
Kernel › Interrupt cancelling a running agent turn at once."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, ModuleType
from typing import Any

from ipykernel.ipkernel import IPythonKernel

from . import __version__

__all__ = ["MewcodeKernel"]

SHUTDOWN_BUDGET = 8.0
"""Seconds the sessions get to close at kernel shutdown (MCP servers stop within 5)."""

BANNER = "MewCode (Python 3): a coding agent in your notebook. Start a cell with %%agent, or /help."


class MewcodeKernel(IPythonKernel):
    """An ``IPythonKernel`` with the ``magics`` extension loaded.

    Interrupts: while an async cell runs, stock ipykernel 7.4 turns SIGINT into
    a callback scheduled without waking the event loop, so a cell waiting on a
    future (an approval click, a slow stream) only notices at its next wake-up.
    Here the handler wakes the loop at once and, when an agent turn is running
    in the foreground, cancels just that turn so the cell can end cleanly.
    """

    implementation = "mewcode"
    implementation_version = __version__
    banner = BANNER

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._interrupt: ModuleType | None = None
        try:
            from magics import interrupt

            interrupt.set_prompt_interrupts(True)
            self._interrupt = interrupt
            if self.shell is not None:
                self.shell.extension_manager.load_extension("magics")
        except Exception:  # a broken install must not keep Python itself from starting
            self.log.exception("MewCode: the magics extension could not be loaded")

    async def do_shutdown(self, restart: bool) -> dict[str, Any]:
        """Close the agent sessions first, so their MCP servers stop cleanly."""
        await self._close_agents()
        return super().do_shutdown(restart)

    async def _close_agents(self) -> None:
        # Shutdown requests are handled on the control thread; the sessions
        # live on the shell's event loop, so they are closed there.
        if self._interrupt is None:
            return
        from magics.controller import close_all

        loop = self.io_loop.asyncio_loop
        try:
            if loop is asyncio.get_running_loop():
                await asyncio.wait_for(close_all(), SHUTDOWN_BUDGET)
            else:
                future = asyncio.run_coroutine_threadsafe(close_all(), loop)
                await asyncio.wait_for(asyncio.wrap_future(future), SHUTDOWN_BUDGET)
        except Exception:  # shutting down regardless: a stuck close must not keep the kernel
            self.log.exception("MewCode: closing the agent sessions at shutdown failed")

    @contextmanager
    def _cancel_on_sigint(self, future: asyncio.Future[Any]) -> Iterator[None]:
        with super()._cancel_on_sigint(future):
            stock = signal.getsignal(signal.SIGINT)
            loop = asyncio.get_running_loop()

            def on_loop(signum: int, frame: FrameType | None) -> None:
                turns = self._interrupt
                if (turns is None or not turns.cancel_foreground()) and callable(stock):
                    stock(signum, frame)

            def handle_sigint(signum: int, frame: FrameType | None) -> None:
                # call_soon_threadsafe also writes to the loop's wake-up pipe.
                loop.call_soon_threadsafe(on_loop, signum, frame)

            signal.signal(signal.SIGINT, handle_sigint)
            try:
                yield
            finally:
                signal.signal(signal.SIGINT, stock)
