"""The "◌ starting… 2 s" line a live agent cell shows at once.

Shown before anything heavy is imported (only IPython's display is used), and
redrawn every half second on the kernel's loop while the session opens, until
the renderer takes the output over (``hand_over``) and keeps it ticking until
the first token. The cell's start time travels with it, so the footer can
report the cell's wall time. While a card waits for the person (the trust
card) the line is blank and its clock stopped (``pause`` / ``resume``): the
time spent deciding is not counted as starting.
"""

from __future__ import annotations

import asyncio
import time
import uuid

__all__ = ["StartingLine"]

_STYLE = "color:color-mix(in srgb,var(--jp-ui-font-color0,#000) 60%,var(--jp-layout-color0,#fff))"


class StartingLine:
    def __init__(self, started_at: float | None = None) -> None:
        self.started_at = time.monotonic() if started_at is None else started_at
        self.display_id = uuid.uuid4().hex
        self._timer: asyncio.TimerHandle | None = None
        self._shown = False
        self._paused_at: float | None = None

    def show(self) -> StartingLine:
        from IPython.display import display

        display(self._bundle(), raw=True, display_id=self.display_id)
        self._shown = True
        self._schedule()
        return self

    def pause(self) -> None:
        """Blank the line and stop its clock (a card waits for the person)."""
        if self._paused_at is None:
            self._paused_at = time.monotonic()
            self._cancel()
            if self._shown:
                from IPython.display import update_display

                update_display({"text/plain": ""}, raw=True, display_id=self.display_id)

    def resume(self) -> None:
        """Count on from where ``pause`` stopped."""
        if self._paused_at is not None:
            self.started_at += time.monotonic() - self._paused_at
            self._paused_at = None
            if self._shown:
                self._tick()

    def hand_over(self) -> str:
        """Stop ticking; the renderer redraws the output from now on."""
        self._cancel()
        return self.display_id

    def clear(self) -> None:
        """Blank the line (the cell failed before a renderer took it over)."""
        self._cancel()
        if self._shown:
            from IPython.display import update_display

            update_display({"text/plain": ""}, raw=True, display_id=self.display_id)

    def _bundle(self) -> dict[str, str]:
        seconds = int(time.monotonic() - self.started_at)
        text = f"◌ starting… {seconds} s"
        return {"text/html": f'<div style="{_STYLE}">{text}</div>', "text/plain": text}

    def _schedule(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._timer = loop.call_later(0.5, self._tick)

    def _tick(self) -> None:
        from IPython.display import update_display

        self._timer = None
        update_display(self._bundle(), raw=True, display_id=self.display_id)
        self._schedule()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
