"""Writing without following a symlink planted between the check and the write.

``safe_open_for_write`` and ``atomic_write_within`` walk from an allowed root
one directory at a time with ``O_NOFOLLOW`` and ``dir_fd``, so a symlink
swapped in after the check (at the last component or above it) is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import secrets
import stat
from collections.abc import Callable, Iterable

from ..errors import ToolError

__all__ = ["UnsafeWriteError", "atomic_write_within", "safe_open_for_write", "safe_unlink_within"]


class UnsafeWriteError(ToolError):
    """A write was refused because its target is not (or no longer) where it was checked."""


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_ERRORS = {
    errno.ELOOP: "it is a symlink",
    errno.EMLINK: "it is a symlink",
    errno.ENXIO: "not a regular file",
    errno.EISDIR: "it is a directory",
}


def _split_within(path: str, allowed_roots: list[str | os.PathLike[str]]) -> tuple[str, list[str]]:
    if not path.startswith("/") or posixpath.normpath(path) != path.rstrip("/") or "\0" in path:
        raise UnsafeWriteError(f"refusing to write {path!r}: not a resolved absolute path")
    for root in allowed_roots:
        r = os.path.realpath(os.fspath(root))
        if path.startswith(r.rstrip("/") + "/"):
            names = path[len(r.rstrip("/")) + 1 :].split("/")
            if any(n in ("", ".", "..") for n in names):
                raise UnsafeWriteError(f"refusing to write {path!r}: not a resolved path")
            return r, names
    raise UnsafeWriteError(f"refusing to write {path}: it is outside the allowed directories")


def _open_parent(
    path: str, allowed_roots: list[str | os.PathLike[str]], create: bool
) -> tuple[int, str]:
    """A descriptor of ``path``'s directory, reached from an allowed root with no symlink."""
    root, names = _split_within(path, allowed_roots)
    if not (os.open in os.supports_dir_fd and _NOFOLLOW):
        raise UnsafeWriteError("safe writes need O_NOFOLLOW and dir_fd support on this platform")
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in names[:-1]:
            try:
                nfd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise UnsafeWriteError(f"directory {name!r} of {path} does not exist") from None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                nfd = _reopen_dir(name, fd, path)
            except OSError:
                raise UnsafeWriteError(
                    f"refusing to write {path}: {name!r} is a symlink or not a directory"
                ) from None
            os.close(fd)
            fd = nfd
        parent = posixpath.dirname(path)
        st = os.fstat(fd)
        try:
            expected = os.stat(parent)
        except OSError:
            expected = None
        if expected is None or (st.st_dev, st.st_ino) != (expected.st_dev, expected.st_ino):
            raise UnsafeWriteError(
                f"refusing to write {path}: its directory moved during the write"
            )
        _split_within(os.path.realpath(parent) + "/x", allowed_roots)
    except BaseException:
        os.close(fd)
        raise
    return fd, names[-1]


def _reopen_dir(name: str, dir_fd: int, path: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        raise UnsafeWriteError(
            f"refusing to write {path}: {name!r} is not a plain directory"
        ) from None


def safe_open_for_write(
    path: str | os.PathLike[str],
    allowed_roots: Iterable[str | os.PathLike[str]],
    *,
    create_parents: bool = True,
    truncate: bool = True,
    allow_hard_link: bool = False,
    mode: int = 0o666,
) -> int:
    """Open the resolved ``path`` for writing and return the descriptor.

    Refuses (``UnsafeWriteError``) when the path is outside ``allowed_roots``,
    when any component is now a symlink, when the target is not a regular
    file, or (unless ``allow_hard_link``) when it has other hard links.
    """
    roots = list(allowed_roots)
    dir_fd, name = _open_parent(os.fspath(path), roots, create_parents)
    try:
        flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(name, flags, mode, dir_fd=dir_fd)
        except OSError as exc:
            why = _OPEN_ERRORS.get(exc.errno or 0, exc.strerror)
            raise UnsafeWriteError(f"refusing to write {os.fspath(path)}: {why}") from None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeWriteError(f"refusing to write {os.fspath(path)}: not a regular file")
        if st.st_nlink > 1 and not allow_hard_link:
            raise UnsafeWriteError(f"refusing to write {os.fspath(path)}: it has other hard links")
        os.set_blocking(fd, True)
        if truncate:
            os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def atomic_write_within(
    path: str | os.PathLike[str],
    data: bytes | str,
    allowed_roots: Iterable[str | os.PathLike[str]],
    *,
    encoding: str = "utf-8",
    create_parents: bool = True,
    mode: int = 0o666,
) -> None:
    """Write ``data`` to the resolved ``path`` atomically (temp file + rename).
    A new file gets ``mode`` (less the umask); a replaced one keeps its own.

    The temporary file is created next to the target through a directory
    descriptor reached without following symlinks; the rename replaces the
    name, so a hard-linked target is detached rather than changed elsewhere.
    Refuses when the target became a symlink or is not a regular file.
    """
    text = os.fspath(path)
    payload = data.encode(encoding) if isinstance(data, str) else data
    dir_fd, name = _open_parent(text, list(allowed_roots), create_parents)
    try:
        keep_mode: int | None = None
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if not stat.S_ISREG(st.st_mode):
                raise UnsafeWriteError(
                    f"refusing to write {text}: it is a symlink or not a regular file"
                )
            keep_mode = stat.S_IMODE(st.st_mode)
        tmp = f".{name[:80]}.{secrets.token_hex(6)}.mewcode-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(tmp, flags, mode, dir_fd=dir_fd)
        try:
            try:
                if keep_mode is not None:
                    os.fchmod(fd, keep_mode)
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


def safe_unlink_within(
    path: str | os.PathLike[str],
    allowed_roots: Iterable[str | os.PathLike[str]],
    *,
    expect: Callable[[bytes], bool] | None = None,
    limit: int = 64_000_000,
) -> bool:
    """Remove the regular file at the resolved ``path``; ``False`` if it is gone.

    Its directory is reached from ``allowed_roots`` without following a
    symlink, and the name is removed from that directory's descriptor, so a
    link planted on the way removes nothing elsewhere. ``expect`` (given the
    file's content, read through the same descriptor) must return True, or
    ``UnsafeWriteError`` is raised and nothing is removed.
    """
    text = os.fspath(path)
    try:
        dir_fd, name = _open_parent(text, list(allowed_roots), False)
    except UnsafeWriteError:
        if not os.path.lexists(posixpath.dirname(text)):
            return False
        raise
    try:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeWriteError(
                f"refusing to remove {text}: it is a symlink or not a regular file"
            )
        if expect is not None:
            fd = os.open(
                name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
            )
            try:
                data = os.read(fd, limit + 1)
                rest = b""
                while len(data) <= limit and (rest := os.read(fd, 1 << 20)):
                    data += rest
            finally:
                os.close(fd)
            if len(data) > limit or not expect(data):
                raise UnsafeWriteError(f"refusing to remove {text}: it changed")
        os.unlink(name, dir_fd=dir_fd)
        return True
    finally:
        os.close(dir_fd)
