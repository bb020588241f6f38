"""The ``mewcode`` kernel: IPython with the MewCode magics loaded at start, and
Kernel › Interrupt cancelling a running agent turn at once."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

from ipykernel.ipkernel import IPythonKernel

from . import __version__

__all__ = ["MewcodeKernel"]

BANNER = "MewCode (Python 3): a coding agent in your notebook. Start a cell with %%agent, or /help."


class MewcodeKernel(IPythonKernel):
    implementation = "mewcode"
    implementation_version = __version__
    banner = BANNER

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.shell is not None:
            self.shell.extension_manager.load_extension("magics")

    @contextmanager
    def _cancel_on_sigint(self, future):  # type: ignore[no-untyped-def,override]
        # Stock ipykernel turns SIGINT into a cancel of the cell's future through the
        # io_loop; we also cancel running agent turns directly, so a turn waiting on a
        # click or a slow stream ends at once.
        from magics.interrupt import cancel_running_turns

        with super()._cancel_on_sigint(future):
            import signal

            inner = signal.getsignal(signal.SIGINT)

            def handle_sigint(signum, frame):  # type: ignore[no-untyped-def]
                cancel_running_turns()
                if callable(inner):
                    inner(signum, frame)

            signal.signal(signal.SIGINT, handle_sigint)
            yield
