"""Reading a file that was checked by its resolved path, without trusting the
check: ``read_regular_file``.

A caller resolves a path (``os.path.realpath``), decides the place is fine,
then reads it; between the two a component can be swapped for a symlink, and
the file can be a FIFO or a device that blocks or never ends. The read opens
the checked path with ``O_NOFOLLOW`` and ``O_NONBLOCK`` (a FIFO's open
returns at once), insists on a regular file, and asks the kernel which file
it actually opened (``/proc/self/fd``), refusing the read when that is not
the path that was checked.
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["NotRegularFileError", "read_regular_file"]

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class NotRegularFileError(OSError):
    """The path is not (or no longer) the regular file that was checked."""


def read_regular_file(real: str, limit: int, *, single_link: bool = False) -> bytes:
    """Up to ``limit`` + 1 bytes of the regular file at ``real`` (a resolved
    path: no symlink anywhere in it). Raises ``NotRegularFileError`` for a
    FIFO, device, socket or directory, when the file opened is not the one
    at ``real`` (a component was swapped meanwhile), or, with
    ``single_link``, when the file has other hard links (its other name may
    be anywhere on the file system); ``OSError`` otherwise."""
    try:
        fd = os.open(real, _FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise NotRegularFileError(exc.errno, "it became a symlink while being read") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):
            raise NotRegularFileError(exc.errno, "it is not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(errno.EINVAL, "it is not a regular file")
        if single_link and info.st_nlink > 1:
            raise NotRegularFileError(
                errno.EMLINK, "it has other hard links, so it may be a file from elsewhere"
            )
        opened = _opened_path(fd)
        moved = opened != real if opened is not None else not _same_file(info, real)
        if moved:
            raise NotRegularFileError(errno.EXDEV, "it changed while being read")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _opened_path(fd: int) -> str | None:
    """The path the kernel has for ``fd`` (Linux), else ``None``."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _same_file(info: os.stat_result, real: str) -> bool:
    """Where ``/proc`` is missing: ``real`` still names the opened file."""
    try:
        return os.path.samestat(info, os.stat(real, follow_symlinks=False))
    except OSError:
        return False
