"""``Syncer``: the ``fsync`` of a session's appends, off the turn's path.

An append is written (one ``write`` of whole lines) before it returns, so the
process can die at any moment without losing it: the data is the kernel's.
Only the machine's crash needs the ``fsync``, and waiting for it after every
message put a disk flush (milliseconds, more on a busy or network disk)
between each model response and the next request. The syncer's thread does
it instead, right after the write, one ``fsync`` covering every write made
before it started; ``flush`` waits for those asked so far, and the writer
flushes before it closes, replaces or lets go of its descriptor, so an
``fsync`` never reaches a descriptor number that was closed and reused.
"""

from __future__ import annotations

import threading
from os import fsync

__all__ = ["Syncer"]


class Syncer:
    """Background ``fsync`` of one descriptor at a time (see the module)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._ready = threading.Condition()
        self._asked = 0  # requests made
        self._done = 0  # requests covered by a finished fsync
        self._fd: int | None = None
        self._error: OSError | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False

    def request(self, fd: int) -> None:
        """``fsync(fd)`` soon, covering every write to it made before this call.
        Raises the error of an earlier ``fsync`` that failed."""
        with self._ready:
            self._raise()
            self._fd = fd
            self._asked += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"mewcode-sync-{self._name}", daemon=True
                )
                self._thread.start()
            self._ready.notify_all()

    def flush(self) -> None:
        """Wait until every requested ``fsync`` is done; raises its error."""
        with self._ready:
            self._ready.wait_for(lambda: self._done >= self._asked or self._error is not None)
            self._raise()

    def stop(self) -> None:
        """Flush, then end the thread (a later ``request`` starts a new one)."""
        try:
            self.flush()
        finally:
            with self._ready:
                thread, self._thread = self._thread, None
                self._stopping = thread is not None
                self._ready.notify_all()
            if thread is not None:
                thread.join()
            with self._ready:
                self._stopping = False

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error  # reported once; later writes sync afresh

    def _run(self) -> None:
        while True:
            with self._ready:
                self._ready.wait_for(lambda: self._asked > self._done or self._stopping)
                if self._asked <= self._done:  # stopping, and nothing left to sync
                    return
                target, fd = self._asked, self._fd
            try:
                if fd is not None:
                    fsync(fd)
                error = None
            except OSError as exc:
                error = exc
            with self._ready:
                self._error = error or self._error
                self._done = max(self._done, target)
                self._ready.notify_all()
