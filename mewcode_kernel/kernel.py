"""The ``mewcode`` kernel: IPython with the MewCode magics loaded at start, and
Kernel › Interrupt cancelling a running agent turn at once."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, ModuleType
from typing import Any

from ipykernel.ipkernel import IPythonKernel
from traitlets import Float

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

    Once it has answered its first ``kernel_info_request`` it imports the agent
    core and the provider SDK in a background thread (``magics.warmup``).

    Widget messages during an awaiting cell: stock ipykernel 7.4 handles them
    concurrently but publishes no busy/idle status for them. JupyterLab's
    widget models send one state update, then hold every later one until the
    idle status of the previous arrives, so all but the first keystroke typed
    into a widget while an agent waits for approval would never reach the
    kernel. Here each such message gets its busy and idle status, followed by
    "busy" again for the cell that still runs (so the front end does not show
    the kernel as idle while an agent cell runs). JupyterLab 4.6 sends widget
    messages on a kernel subshell once it has one: those get their statuses
    from ipykernel, and here too the running cell's "busy" follows; so it
    does after a control request (the subshell's creation among them).

    Background work is activity: while a background task is queued or running
    (``magics.activity``), the kernel reports itself busy on behalf of the
    cell that launched it (after every "idle" of other requests, too), and
    says so again every ``activity_interval`` seconds, so Jupyter Server's
    culler never takes it for idle (``cull_busy`` or not) and JupyterHub sees
    the server active. When the work ends, that cell's "idle" follows. A
    kernel shut down anyway (culled, stopped, restarted) records its
    unfinished tasks as interrupted before anything else (``close_all``).
    """

    implementation = "mewcode"
    implementation_version = __version__
    banner = BANNER

    activity_interval = Float(
        60.0,
        config=True,
        help="Seconds between the reports of activity a kernel with background work "
        "sends (each refreshes Jupyter Server's last activity for its culler); below a "
        "culler's cull_idle_timeout when it has cull_busy set.",
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._interrupt: ModuleType | None = None
        self._executing: dict[str, Any] | None = None
        # A subshell's thread reads _executing and publishes "busy" under this lock,
        # so that "busy" can never follow the finished cell's "idle".
        self._executing_lock = threading.Lock()
        self._warming: threading.Thread | None = None
        #: the cell whose background work is running (busy is reported for it)
        self._background: dict[str, Any] | None = None
        self._last_execute: dict[str, Any] | None = None
        self._heartbeat: asyncio.TimerHandle | None = None
        try:
            from magics import interrupt

            interrupt.set_prompt_interrupts(True)
            self._interrupt = interrupt
            if self.shell is not None:
                self.shell.extension_manager.load_extension("magics")
            from magics import activity

            activity.set_listener(self._background_changed)
        except Exception:  # a broken install must not keep Python itself from starting
            self.log.exception("MewCode: the magics extension could not be loaded")

    async def kernel_info_request(self, stream: Any, ident: Any, parent: dict[str, Any]) -> None:
        await super().kernel_info_request(stream, ident, parent)
        if self._warming is None and self._interrupt is not None:
            # Ready and answered: now import the core and the provider SDK in the
            # background, so the first agent cell does not wait for them.
            from magics.warmup import start_warm_up

            self._warming = start_warm_up()

    async def execute_request(self, stream: Any, ident: Any, parent: dict[str, Any]) -> None:
        self._executing = self._last_execute = parent
        try:
            await super().execute_request(stream, ident, parent)
        finally:
            with self._executing_lock:
                self._executing = None

    async def dispatch_shell(
        self, msg: Any, /, subshell_id: str | None = None, *, concurrent: bool = False
    ) -> None:
        header = self._comm_header(msg) if concurrent else None
        if header is None:
            await super().dispatch_shell(msg, subshell_id=subshell_id, concurrent=concurrent)
            if subshell_id is not None:
                # a subshell's idle must not make the running cell look finished
                with self._executing_lock:
                    if self._executing is not None:
                        self._publish_status("busy", "shell", parent=self._executing)
            return
        parent = {"header": header}
        self._publish_status("busy", "shell", parent=parent)
        try:
            await super().dispatch_shell(msg, subshell_id=subshell_id, concurrent=True)
        finally:
            self._publish_status("idle", "shell", parent=parent)
            running = self._executing
            if running is not None:
                self._publish_status("busy", "shell", parent=running)

    async def process_control(self, msg: Any) -> None:
        # A control request (JupyterLab creating the subshell its widgets talk
        # on, when the first widget shows) ends in its own "idle": without the
        # running cell's "busy" after it, the status bar says Idle while a card
        # waits in the first agent cell after a kernel start.
        await super().process_control(msg)
        with self._executing_lock:
            if self._executing is not None:
                self._publish_status("busy", "shell", parent=self._executing)

    def _comm_header(self, msg: Any) -> dict[str, Any] | None:
        """The header of a comm message (``None`` for anything else)."""
        if self.session is None:
            return None
        try:
            _, frames = self.session.feed_identities(msg, copy=False)
            header = self.session.deserialize(frames, content=False, copy=False)["header"]
        except Exception:
            return None
        if header.get("msg_type") not in {"comm_open", "comm_msg", "comm_close"}:
            return None
        return dict(header)

    # --- background work as activity -------------------------------------------------

    def _publish_status(self, status: str, channel: str, parent: Any = None) -> None:
        super()._publish_status(status, channel, parent)
        background = self._background
        if status == "idle" and background is not None:
            # the request just answered is done, the background work is not
            super()._publish_status("busy", "shell", parent=background)

    def _background_changed(self, active: bool) -> None:
        """Background work started (``active``) or the last of it ended."""
        if active and self._background is None:
            self._background = self._executing or self._last_execute
            if self._background is not None and self._executing is None:
                super()._publish_status("busy", "shell", parent=self._background)
            self._schedule_heartbeat()
        elif not active and self._background is not None:
            parent, self._background = self._background, None
            if self._heartbeat is not None:
                self._heartbeat.cancel()
                self._heartbeat = None
            if self._executing is None:
                super()._publish_status("idle", "shell", parent=parent)

    def _schedule_heartbeat(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the shell's loop: its next change reschedules
            return
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        self._heartbeat = loop.call_later(self.activity_interval, self._beat)

    def _beat(self) -> None:
        self._heartbeat = None
        if self._background is not None:
            super()._publish_status("busy", "shell", parent=self._background)
            self._schedule_heartbeat()

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
