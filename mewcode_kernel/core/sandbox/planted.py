"""Paths nothing may stand in for (``project_paths.WATCHED_PATHS``), kept
from taking effect: git stops at any file or folder at ``.git/commondir``,
so no read-only stand-in can be put there, yet one a sandboxed process
writes sends the person's next ``git status`` to a planted config.

The launcher's janitor watches their folders while the sandbox runs
(inotify) and removes such a path as soon as it appears, and looks once
more after the sandbox is gone, before the spawner sees the command end.

It imports only what a bare interpreter starts fast with (``ctypes`` when
the watch starts, after the sandbox is running).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Watch", "remove_planted"]

_IN_CREATE = 0x100
_IN_MOVED_TO = 0x80
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000


def remove_planted(paths: Sequence[str]) -> list[str]:
    """Remove whatever is at ``paths`` (links are removed, never followed);
    the paths removed."""
    removed: list[str] = []
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        try:
            if stat.S_ISDIR(info.st_mode):
                _remove_tree(path)
            else:
                os.unlink(path)
        except OSError:
            continue
        removed.append(path)
    return removed


def _remove_tree(top: str) -> None:
    for folder, dirs, files in os.walk(top, topdown=False, followlinks=False):
        for name in files:
            os.unlink(os.path.join(folder, name))
        for name in dirs:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                os.unlink(path)
            else:
                os.rmdir(path)
    os.rmdir(top)


class Watch:
    """An inotify watch on the folders holding ``paths``: ``fd`` becomes
    readable when something is made or moved in; ``drain`` reads the events.
    ``fd`` is ``None`` where inotify cannot be used (then only the look
    after the sandbox ends is left)."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.fd: int | None = None
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except (OSError, AttributeError):
            return
        if fd < 0:
            return
        watched = 0
        for folder in dict.fromkeys(os.path.dirname(p) for p in paths):
            if libc.inotify_add_watch(fd, os.fsencode(folder), _IN_CREATE | _IN_MOVED_TO) >= 0:
                watched += 1
        if not watched:
            os.close(fd)
            return
        self.fd = fd

    def drain(self) -> None:
        if self.fd is None:
            return
        try:
            while os.read(self.fd, 65536):
                pass
        except BlockingIOError:
            pass

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
