"""The workspace: the allowed directories (the project root first) and the
one path resolver that the tools and the permission engine share.

``Workspace.resolve`` expands ``~``, joins relative paths to the root and
resolves ``..`` and symlinks anywhere in the path (``os.path.realpath``: the
existing part physically, the rest lexically; a dangling symlink at the end
resolves to its target; ``/proc/self/root/...`` resolves to ``/...``). A path
is inside an allowed directory when its resolved form is below the resolved
directory, or, on case-insensitive or otherwise aliased file systems, when
one of its existing ancestors *is* that directory (same device and inode).
Names that are not in Unicode normal form, mix scripts, or hold invisible
characters are flagged as suspicious.
"""

from __future__ import annotations

import os
import posixpath
import stat
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = ["PathKind", "ResolvedPath", "Workspace", "realpath", "suspicious_name"]

_LEADS_OUT = "refusing to write {raw}: it leads outside the project through a symlink"

PathKind = Literal["file", "dir", "missing", "other"]
_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC")


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


def realpath(path: str, *, attempts: int = 5) -> str:
    """``os.path.realpath``, retried when a component changes under it (a link
    swapped for a directory between its ``lstat`` and ``readlink`` raises
    ``OSError`` even in non-strict mode); raises ``OSError`` if it never settles."""
    for attempt in range(attempts):
        try:
            return os.path.realpath(path)
        except OSError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


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


class Workspace:
    """The allowed directories (the project root first) and path resolution against them."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        additional_dirs: Iterable[str | os.PathLike[str]] = (),
        *,
        home: str | None = None,
        case_insensitive: bool | None = None,
    ) -> None:
        given = [os.path.expanduser(os.fspath(d)) for d in (root, *additional_dirs)]
        self.home = os.path.realpath(home or os.path.expanduser("~"))
        self.root = os.path.realpath(given[0])
        self.roots: tuple[str, ...] = tuple(dict.fromkeys(os.path.realpath(d) for d in given))
        # as given (perhaps through a symlink): a path spelled below one of them
        # names a place inside the project even before it is resolved
        self._spelled = tuple(dict.fromkeys(os.path.abspath(d) for d in given))
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
        try:
            path = realpath(text)
        except OSError as exc:
            return ResolvedPath(
                raw=raw, path=os.path.abspath(text), root=None, rel=None, kind="missing",
                suspicious=f"the path kept changing while it was resolved ({exc.strerror})",
            )  # fmt: skip
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

    def write_destination(self, raw: str) -> tuple[str, tuple[str, ...]]:
        """Where a write of ``raw`` lands, and the directories it is reached from.

        Resolved at the write, not trusted from the permission check: a path
        that names a place inside the project but leads outside it through a
        symlink (one swapped in after the check, say) is refused with
        ``UnsafeWriteError``. A write outside the project (one the person
        approved) is reached from its nearest existing ancestor.
        """
        from .safe_write import UnsafeWriteError

        lexical = os.path.normpath(os.path.join(self._spelled[0], os.path.expanduser(raw)))
        try:
            target = realpath(lexical)
        except OSError:
            raise UnsafeWriteError(f"refusing to write {raw}: the path kept changing") from None
        named_inside = any(_within(lexical, r) for r in (*self._spelled, *self.roots))
        containing = tuple(r for r in self.roots if _within(target, r))
        if named_inside and not containing:
            raise UnsafeWriteError(_LEADS_OUT.format(raw=raw))
        return target, containing or (_nearest_existing(posixpath.dirname(target)),)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _nearest_existing(directory: str) -> str:
    while not os.path.exists(directory) and directory != posixpath.dirname(directory):
        directory = posixpath.dirname(directory)
    return os.path.realpath(directory)
