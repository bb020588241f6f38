"""A named pipe a test reads what a process it started writes: the test waits
on the pipe itself (bounded), never sleeps or polls a file.

The read end is opened (without blocking) before the writer runs, so a
writer's ``open`` never waits for a reader. End of file comes when every
process holding the write end has closed it, exited or been killed: a
command that keeps the pipe open (``exec 3> pipe``) makes its end the event.
"""

from __future__ import annotations

import os
import select
import time
from pathlib import Path
from types import TracebackType


class Fifo:
    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)

    def __enter__(self) -> Fifo:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the read end and remove the pipe (a later writer gets a plain file)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            self.path.unlink(missing_ok=True)

    def written(self) -> bool:
        """Whether a writer has written or come and gone (without waiting)."""
        return bool(self._poll.poll(0))

    def read_some(self, timeout: float) -> bytes:
        """What has been written once something has (``b""``: the writers
        closed without writing); ``TimeoutError`` after ``timeout`` s."""
        if not self._poll.poll(timeout * 1000):
            raise TimeoutError(f"nothing written to {self.path} within {timeout} s")
        return os.read(self._fd, 1 << 16)

    def read_to_end(self, timeout: float) -> bytes:
        """Everything written until the last writer closes, within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        chunks: list[bytes] = []
        while chunk := self.read_some(max(0.0, deadline - time.monotonic())):
            chunks.append(chunk)
        return b"".join(chunks)
