"""Where telemetry does its work: ``WORKER``, one thread per process.

A turn's events are only noted on the event loop (when, and the little of
the session that must be read then); spans, metrics and events are built
here, in order, from those notes. The loop waits on the model, the disk and
the tools most of the time, and this thread works meanwhile, so a turn pays
for little more than the notes.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["WORKER", "Worker"]

_log = logging.getLogger(__name__)


class Worker:
    """Runs submitted calls one at a time, in the order submitted, on a
    daemon thread started on first use. A call that fails is logged (once
    per kind of work) and the next one runs."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[str, Callable[..., Any], tuple[Any, ...]]] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._told: set[str] = set()

    def submit(self, what: str, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` after everything submitted before (``what``: its
        kind, for the log)."""
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="mewcode-telemetry", daemon=True
                    )
                    self._thread.start()
        self._queue.put((what, fn, args))

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until everything submitted so far has run; whether it did in time."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._queue.put(("drain", done.set, ()))
        return done.wait(timeout)

    def _run(self) -> None:
        while True:
            what, fn, args = self._queue.get()
            try:
                fn(*args)
            except Exception:
                if what not in self._told:
                    self._told.add(what)
                    _log.warning("telemetry: %s failed; the session goes on", what, exc_info=True)


WORKER = Worker()
