"""The path sandbox: resolve every path before any check, and write without
following a symlink planted between the check and the write.

``Sandbox.resolve`` expands ``~``, joins relative paths to the root and
resolves ``..`` and symlinks anywhere in the path (``os.path.realpath``: the
existing part physically, the rest lexically; a dangling symlink at the end
resolves to its target; ``/proc/self/root/...`` resolves to ``/...``). A path
is inside an allowed directory when its resolved form is below the resolved
directory, or, on case-insensitive or otherwise aliased file systems, when
one of its existing ancestors *is* that directory (same device and inode).
Names that are not in Unicode normal form, mix scripts, or hold invisible
characters are flagged as suspicious.

``safe_open_for_write`` and ``atomic_write_within`` walk from the allowed
root one directory at a time with ``O_NOFOLLOW`` and ``dir_fd``, so a symlink
swapped in after the check (at the last component or above it) is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import secrets
import stat
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..errors import ToolError

__all__ = [
    "ResolvedPath",
    "Sandbox",
    "SandboxError",
    "atomic_write_within",
    "safe_open_for_write",
    "suspicious_name",
]

PathKind = Literal["file", "dir", "missing", "other"]
_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC")


class SandboxError(ToolError):
    """A write was refused because its target is not (or no longer) where it was checked."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ResolvedPath:
    """A path argument after resolution.

    ``path`` is absolute and free of symlinks and ``..``; ``root`` is the
    allowed directory holding it (``None`` when outside all of them) and
    ``rel`` the POSIX path below it. ``variants`` are other spellings the
    file system may treat as the same name (Unicode forms, case), used so a
    deny rule cannot be dodged by spelling.
    """

    raw: str
    path: str
    root: str | None
    rel: str | None
    kind: PathKind
    hard_link: bool = False
    suspicious: str | None = None
    variants: tuple[str, ...] = ()

    @property
    def inside(self) -> bool:
        return self.root is not None


def suspicious_name(name: str) -> str | None:
    """Why a single path component looks like a spelling trick, or ``None``."""
    if unicodedata.normalize("NFC", name) != name:
        return f"the name {name!r} is not in Unicode normal form (NFC)"
    folded = unicodedata.normalize("NFKC", name)
    if folded != name:
        return f"the name {name!r} uses look-alike characters (reads as {folded!r})"
    scripts: set[str] = set()
    for ch in name:
        cat = unicodedata.category(ch)
        if cat[0] == "C" or cat in ("Zl", "Zp") or (cat == "Zs" and ch != " "):
            return f"the name {name!r} contains the invisible character U+{ord(ch):04X}"
        if cat[0] == "L":
            script = unicodedata.name(ch, "").split(" ")[0]
            if script in _SCRIPTS:
                scripts.add(script)
    if len(scripts) > 1:
        return f"the name {name!r} mixes {' and '.join(sorted(scripts))} letters"
    return None


@lru_cache(maxsize=64)
def _case_insensitive(directory: str) -> bool:
    """Whether the file system holding ``directory`` ignores case in names."""
    names = directory.split("/")
    for i in range(len(names) - 1, 0, -1):
        if names[i].swapcase() != names[i]:
            other = "/".join([*names[:i], names[i].swapcase(), *names[i + 1 :]])
            try:
                return os.path.samefile(directory, other)
            except OSError:
                return False
    return False


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class Sandbox:
    """The allowed directories (the project root first) and path resolution against them."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        additional_dirs: Iterable[str | os.PathLike[str]] = (),
        *,
        home: str | None = None,
        case_insensitive: bool | None = None,
    ) -> None:
        self.home = os.path.realpath(home or os.path.expanduser("~"))
        self.root = os.path.realpath(os.path.expanduser(os.fspath(root)))
        extra = [os.path.realpath(os.path.expanduser(os.fspath(d))) for d in additional_dirs]
        self.roots: tuple[str, ...] = tuple(dict.fromkeys([self.root, *extra]))
        self.case_insensitive = (
            _case_insensitive(self.root) if case_insensitive is None else case_insensitive
        )
        self._ids = {_identity(r): r for r in self.roots if _identity(r) is not None}

    def contains(self, path: str) -> tuple[str, str] | None:
        """``(root, rel)`` for the allowed directory holding the resolved ``path``."""
        for root in self.roots:
            if path == root:
                return root, "."
            if path.startswith(root.rstrip("/") + "/"):
                return root, path[len(root.rstrip("/")) + 1 :]
        # Aliases the string test cannot see (case-insensitive names, bind mounts).
        current, rest = path, ""
        while True:
            ident = _identity(current)
            if ident is not None and ident in self._ids:
                return self._ids[ident], rest or "."
            parent, name = posixpath.split(current)
            if parent == current or not name:
                return None
            rest = posixpath.join(name, rest) if rest else name
            current = parent

    def resolve(self, raw: str, *, base: str | None = None) -> ResolvedPath:
        """Resolve the path argument ``raw`` (relative to ``base``, default the root)."""
        text = raw
        if text == "~" or text.startswith("~/"):
            text = self.home + text[1:]
        text = os.path.expanduser(text)
        if "\0" in text:
            return ResolvedPath(
                raw=raw, path=text, root=None, rel=None, kind="missing",
                suspicious="the path contains a NUL character",
            )  # fmt: skip
        if not text.startswith("/"):
            text = posixpath.join(base if base is not None else self.root, text)
        path = os.path.realpath(text)
        where = self.contains(path)
        root, rel = where if where else (None, None)
        kind: PathKind = "missing"
        hard_link = False
        try:
            st = os.lstat(path)
        except OSError:
            pass
        else:
            if stat.S_ISREG(st.st_mode):
                kind, hard_link = "file", st.st_nlink > 1
            else:
                kind = "dir" if stat.S_ISDIR(st.st_mode) else "other"
        names = rel.split("/") if rel else path.split("/")
        suspicious = next((s for s in map(suspicious_name, names) if s), None)
        variants = {unicodedata.normalize(form, path) for form in ("NFC", "NFD", "NFKC")}
        if self.case_insensitive:
            variants |= {v.casefold() for v in variants}
        variants.discard(path)
        return ResolvedPath(
            raw=raw, path=path, root=root, rel=rel, kind=kind, hard_link=hard_link,
            suspicious=suspicious, variants=tuple(sorted(variants)),
        )  # fmt: skip


# ---- writing -----------------------------------------------------------------

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
        raise SandboxError(f"refusing to write {path!r}: not a resolved absolute path")
    for root in allowed_roots:
        r = os.path.realpath(os.fspath(root))
        if path.startswith(r.rstrip("/") + "/"):
            names = path[len(r.rstrip("/")) + 1 :].split("/")
            if any(n in ("", ".", "..") for n in names):
                raise SandboxError(f"refusing to write {path!r}: not a resolved path")
            return r, names
    raise SandboxError(f"refusing to write {path}: it is outside the allowed directories")


def _open_parent(
    path: str, allowed_roots: list[str | os.PathLike[str]], create: bool
) -> tuple[int, str]:
    """A descriptor of ``path``'s directory, reached from an allowed root with no symlink."""
    root, names = _split_within(path, allowed_roots)
    if not (os.open in os.supports_dir_fd and _NOFOLLOW):
        raise SandboxError("safe writes need O_NOFOLLOW and dir_fd support on this platform")
    fd = os.open(root, _DIR_FLAGS)
    try:
        for name in names[:-1]:
            try:
                nfd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise SandboxError(f"directory {name!r} of {path} does not exist") from None
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                nfd = _reopen_dir(name, fd, path)
            except OSError:
                raise SandboxError(
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
            raise SandboxError(f"refusing to write {path}: its directory moved during the write")
        _split_within(os.path.realpath(parent) + "/x", allowed_roots)
    except BaseException:
        os.close(fd)
        raise
    return fd, names[-1]


def _reopen_dir(name: str, dir_fd: int, path: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=dir_fd)
    except OSError:
        raise SandboxError(f"refusing to write {path}: {name!r} is not a plain directory") from None


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

    Refuses (``SandboxError``) when the path is outside ``allowed_roots``,
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
            raise SandboxError(f"refusing to write {os.fspath(path)}: {why}") from None
    finally:
        os.close(dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SandboxError(f"refusing to write {os.fspath(path)}: not a regular file")
        if st.st_nlink > 1 and not allow_hard_link:
            raise SandboxError(f"refusing to write {os.fspath(path)}: it has other hard links")
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
) -> None:
    """Write ``data`` to the resolved ``path`` atomically (temp file + rename).

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
                raise SandboxError(
                    f"refusing to write {text}: it is a symlink or not a regular file"
                )
            keep_mode = stat.S_IMODE(st.st_mode)
        tmp = f".{name[:80]}.{secrets.token_hex(6)}.mewcode-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(tmp, flags, 0o666, dir_fd=dir_fd)
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
