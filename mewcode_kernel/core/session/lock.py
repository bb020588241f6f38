"""One writer per session: an advisory lock on the session directory.

A ``SessionWriter`` holds ``<session>/.lock`` with ``flock`` for as long as it
is open, and writes its process id into it. A second writer (another kernel
resuming the same session, or a second handle in this one) is refused with
``SessionInUse``; the lock goes away with its holder, even after a crash.
Across users it holds too: another user's session is refused before its
lock is touched (``SessionNotYours``), and its lock file, ``0600`` in a
``0700`` folder, cannot be opened by them anyway.
"""

from __future__ import annotations

import contextlib
import errno
import os
import weakref
from pathlib import Path

from ..errors import SessionError, SessionInUse
from ._files import open_regular
from .owner import check_mine

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: no locking
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_FILE", "SessionLock", "holder_of"]

LOCK_FILE = ".lock"


class SessionLock:
    """The held lock of one session directory; ``release`` (or closing) frees it."""

    def __init__(self, directory: Path, session_id: str) -> None:
        self.path = directory / LOCK_FILE
        self._fd: int | None = None
        check_mine(directory, session_id)  # another user's session is never locked
        try:
            # never through a link: locking truncates the file and writes our pid
            fd = open_regular(self.path, os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            raise SessionError(f"cannot lock session {session_id}: {exc.strerror}") from None
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                pid = _read_pid(fd)
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    who = f" (process {pid})" if pid else ""
                    raise SessionInUse(
                        f"session {session_id} is in use by another kernel or session{who}; "
                        f"`/resume {session_id} --fork` (or `%%agent --resume {session_id} "
                        "--fork`) continues a copy of it in a new session",
                        session_id=session_id,
                        pid=pid,
                    ) from None
                raise SessionError(f"cannot lock session {session_id}: {exc.strerror}") from None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        # a writer dropped without being closed must not keep the session locked
        self._finalizer = weakref.finalize(self, _close_quietly, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            self._fd = None
            self._finalizer()  # closing the descriptor drops the flock


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def holder_of(directory: Path) -> int | None:
    """The process holding ``directory``'s lock now, or ``None`` if it is free."""
    if fcntl is None:
        return None
    try:
        fd = open_regular(directory / LOCK_FILE, os.O_RDWR)
    except (OSError, SessionError):
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return _read_pid(fd) or -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
