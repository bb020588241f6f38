"""Placeholders: the empty folders and files the sandbox mounts read-only where
a protected path does not exist yet, and who still relies on each.

bubblewrap mounts onto a path that exists, and the project root is the
host's own folder, so covering ``.mcp.json`` before it exists means an empty
``.mcp.json`` on the host while the sandboxed process runs. Each one must go
when the last process relying on it ends, and never earlier: removing a
mount point on the host detaches the mount in every namespace, and the
process could then create the file after all.

One lease file per placeholder path (in a private folder, one per user and
machine, so every session and kernel agrees) records the placeholder made
there (device and inode) and is held with a shared ``flock`` by every live
process relying on it. A process that ends gives its lock back and tries an
exclusive one: only when nobody else holds the lease is the placeholder
removed, and only if it is still the empty one made (a file the person
wrote in the meantime stays). One mutex serialises these steps, so a
placeholder is never removed between another process finding it and
locking it. A lease nobody holds (a janitor that was killed) is cleaned up
by ``sweep``.

It imports only what a bare interpreter starts fast with: the launcher
(``launcher.py``) runs it for every command.
"""

from __future__ import annotations

import fcntl
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

__all__ = ["Held", "LeaseError", "Leases", "Placeholder", "default_lease_dir"]


class LeaseError(Exception):
    """The lease folder cannot be trusted or a placeholder cannot be made."""


class Placeholder:
    """``base/rel``: what to put there if missing (``kind``: ``dir`` or
    ``file``); ``base`` exists, ``rel``'s folders below it are walked without
    following links."""

    __slots__ = ("base", "kind", "rel")

    def __init__(self, base: str, rel: str, kind: str) -> None:
        if kind not in ("dir", "file"):
            raise ValueError(f"a placeholder is a dir or a file, not {kind!r}")
        self.base = base
        self.rel = rel
        self.kind = kind

    @property
    def path(self) -> str:
        return os.path.join(self.base, self.rel)

    def _key(self) -> tuple[str, str, str]:
        return (self.base, self.rel, self.kind)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Placeholder) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Placeholder({self.base!r}, {self.rel!r}, {self.kind!r})"


class Held:
    """A lease this process holds (its shared lock lives as long as ``fd``)."""

    __slots__ = ("fd", "path")

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self.fd = fd


def default_lease_dir() -> str:
    """Per user and machine, outside every project: ``/var/tmp`` survives a
    restart, so a placeholder left by a killed process is still known."""
    base = "/var/tmp" if os.path.isdir("/var/tmp") else "/tmp"
    return os.path.join(base, f"mewcode-sandbox-{os.geteuid()}")


class Leases:
    """The lease folder ``directory`` (see the module docstring)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def ensure(self) -> None:
        """Make the folder (mode 0700) and check it is this user's own."""
        try:
            os.mkdir(self.directory, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            raise LeaseError(f"cannot make {self.directory}: {exc.strerror}") from None
        info = os.lstat(self.directory)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            raise LeaseError(f"{self.directory} is not a folder of this user's own")
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.chmod(self.directory, 0o700)

    def _lock(self) -> int:
        """Take the mutex; close the returned fd to give it back."""
        fd = os.open(
            os.path.join(self.directory, "lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600
        )
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _lease_path(self, path: str) -> str:
        raw = os.fsencode(path).hex()
        if len(raw) > 200:  # file names are limited; a digest for long paths
            import hashlib

            raw = "h" + hashlib.sha256(os.fsencode(path)).hexdigest()
        return os.path.join(self.directory, raw + ".lease")

    def acquire(self, wanted: Sequence[Placeholder]) -> list[Held]:
        """Lock a lease on each of ``wanted`` and make the placeholders that
        are missing; all or none (on error every lock taken is given back)."""
        self.ensure()
        held: list[Held] = []
        mutex = self._lock()
        try:
            for item in wanted:
                held.append(self._acquire_one(item))
        except BaseException:
            for h in held:
                os.close(h.fd)
            raise
        finally:
            os.close(mutex)
        return held

    def _acquire_one(self, item: Placeholder) -> Held:
        fd = os.open(self._lease_path(item.path), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            made = _make(item)
            if made is not None:
                record = f"{made[0]} {made[1]} {item.kind}\n".encode() + os.fsencode(item.path)
                os.ftruncate(fd, 0)
                os.pwrite(fd, record, 0)
        except BaseException:
            os.close(fd)
            raise
        return Held(item.path, fd)

    def release(self, held: Iterable[Held]) -> None:
        """Give the leases back; remove each placeholder nobody relies on now."""
        mutex = self._lock()
        try:
            for h in held:
                os.close(h.fd)
                self._remove_if_unused(self._lease_path(h.path))
        finally:
            os.close(mutex)

    def sweep(self) -> list[str]:
        """Remove the placeholders of leases nobody holds; the paths removed."""
        try:
            names = [n for n in os.listdir(self.directory) if n.endswith(".lease")]
        except OSError:
            return []
        removed: list[str] = []
        mutex = self._lock()
        try:
            for name in names:
                gone = self._remove_if_unused(os.path.join(self.directory, name))
                if gone:
                    removed.append(gone)
        finally:
            os.close(mutex)
        return removed

    def in_use(self, path: str) -> bool:
        """Whether a live process holds the lease on the placeholder at ``path``."""
        mutex = self._lock()
        try:
            try:
                fd = os.open(self._lease_path(path), os.O_RDONLY | os.O_NOFOLLOW)
            except FileNotFoundError:
                return False
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            finally:
                os.close(fd)
            return False
        finally:
            os.close(mutex)

    def is_placeholder(self, path: str) -> bool:
        """Whether ``path`` is a stand-in a launcher made (and still empty):
        a process starting now must plan it as one, and lease it, not treat
        it as the person's own folder (which nobody would remove under it)."""
        try:
            fd = os.open(self._lease_path(path), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return False
        try:
            record = _record(fd)
        finally:
            os.close(fd)
        if record is None or record[3] != path:
            return False
        try:
            info = os.lstat(path)
            if (info.st_dev, info.st_ino) != (record[0], record[1]):
                return False
            return not stat.S_ISDIR(info.st_mode) or not os.listdir(path)
        except OSError:
            return False

    def wait_released(self, path: str) -> None:
        """Block until no live process relies on the placeholder at ``path``
        and its removal (if due) is done. A process killed outright leaves
        this to its janitor, which finishes a moment after the kill."""
        lease = self._lease_path(path)
        try:
            fd = os.open(lease, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # every holder gave its lock back
        finally:
            os.close(fd)  # at once: one that starts now locks it under the mutex
        # the last holder may have seen this lock and left the removal: do it here
        mutex = self._lock()
        try:
            self._remove_if_unused(lease)
        finally:
            os.close(mutex)

    def _remove_if_unused(self, lease: str) -> str | None:
        """With the mutex held: when nobody holds ``lease``, remove its
        placeholder (if still the one made, and empty) and the lease."""
        try:
            fd = os.open(lease, os.O_RDWR | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None  # another live process relies on it
            record = _record(fd)
            removed = _remove(record) if record is not None else None
            os.unlink(lease)
            return removed
        finally:
            os.close(fd)


def _record(fd: int) -> tuple[int, int, str, str] | None:
    """(device, inode, kind, path) of the placeholder a lease made, if any."""
    data = os.pread(fd, 65536, 0)
    head, sep, path = data.partition(b"\n")
    fields = head.split()
    if not sep or len(fields) != 3 or not path:
        return None
    try:
        return int(fields[0]), int(fields[1]), fields[2].decode(), os.fsdecode(path)
    except ValueError:
        return None


def _remove(record: tuple[int, int, str, str]) -> str | None:
    """Remove the placeholder ``record`` describes if it is still that empty
    folder or file; its path if removed."""
    dev, ino, kind, path = record
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if (info.st_dev, info.st_ino) != (dev, ino):
        return None  # replaced since: not ours any more
    try:
        if kind == "dir" and stat.S_ISDIR(info.st_mode):
            os.rmdir(path)  # fails when something was put inside: then it stays
        elif kind == "file" and stat.S_ISREG(info.st_mode) and info.st_size == 0:
            os.unlink(path)
        else:
            return None
    except OSError:
        return None
    return path


def _make(item: Placeholder) -> tuple[int, int] | None:
    """Create the placeholder if ``item``'s path is missing: (device, inode)
    of what was made, ``None`` when something is there already."""
    names = [n for n in item.rel.split("/") if n]
    if not names or any(n in (".", "..") for n in names):
        raise LeaseError(f"bad placeholder path {item.rel!r}")
    fd = os.open(item.base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names[:-1]:  # folders that existed when the command line was built
            try:
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                raise LeaseError(
                    f"{item.path}: {name!r} changed while the command started ({exc.strerror})"
                ) from None
            os.close(fd)
            fd = inner
        last = names[-1]
        try:
            if item.kind == "dir":
                os.mkdir(last, 0o755, dir_fd=fd)
            else:
                os.close(
                    os.open(
                        last, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=fd
                    )
                )
        except FileExistsError:
            return None
        except OSError as exc:
            raise LeaseError(f"cannot make the placeholder {item.path}: {exc.strerror}") from None
        info = os.stat(last, dir_fd=fd, follow_symlinks=False)
        return info.st_dev, info.st_ino
    finally:
        os.close(fd)
