"""Where telemetry does its work: ``WORKER``, one thread per process.

A turn's events are only noted on the event loop (when, and the little of
the session that must be read then); spans, metrics and events are built
here, in order, from those notes. The loop waits on the model, the disk and
the tools most of the time, and this thread works meanwhile, so a turn pays
for little more than the notes.

Work is handed over in bursts: the first call submitted wakes the thread,
which lets the rest of the burst gather for a moment before it runs them
all. Waking a thread per event would cost the loop a thread switch (and a
turn for the GIL) per event; the notes carry their own times, so running
them a little later changes nothing that is exported.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["LINGER", "WORKER", "Worker"]

_log = logging.getLogger(__name__)

#: how long a burst gathers before the thread runs it (seconds)
LINGER = 0.05

_Job = tuple[str, Callable[..., Any], tuple[Any, ...]]


class Worker:
    """Runs submitted calls one at a time, in the order submitted, on a
    daemon thread started on first use. A call that fails is logged (once
    per kind of work) and the next one runs."""

    def __init__(self, linger: float = LINGER) -> None:
        self._linger = linger
        self._lock = threading.Lock()
        self._pending: list[_Job] = []
        self._wake = threading.Event()  # something is pending
        self._hurry = threading.Event()  # someone waits for it: do not linger
        self._thread: threading.Thread | None = None
        self._told: set[str] = set()

    def submit(self, what: str, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` after everything submitted before (``what``: its
        kind, for the log)."""
        with self._lock:
            self._pending.append((what, fn, args))
            first = len(self._pending) == 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="mewcode-telemetry", daemon=True
                )
                self._thread.start()
        if first:  # the thread sleeps only when nothing is pending
            self._wake.set()

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until everything submitted so far has run; whether it did in time."""
        if self._thread is None:
            return True
        done = threading.Event()
        self.submit("drain", done.set)
        self._hurry.set()
        return done.wait(timeout)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._hurry.wait(self._linger)
            with self._lock:
                # taken and cleared together: a call submitted after this wakes it again
                batch, self._pending = self._pending, []
                self._wake.clear()
                self._hurry.clear()
            for what, fn, args in batch:
                try:
                    fn(*args)
                except Exception:
                    if what not in self._told:
                        self._told.add(what)
                        _log.warning(
                            "telemetry: %s failed; the session goes on", what, exc_info=True
                        )


WORKER = Worker()
