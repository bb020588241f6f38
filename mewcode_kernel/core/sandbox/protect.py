"""What a sandboxed process may not change or read, worked out on the host
just before it starts: the protected project paths (``project_paths``) and
the user's MewCode folder (``userdirs.mewcode_home``).

A protected path is covered whether or not it exists:

* it exists: bound read-only onto itself;
* it does not: its first missing component gets a placeholder, an empty
  folder bound read-only, so it cannot be created (``leases.py`` makes it
  and removes it afterwards). A folder also for a protected file: git
  ignores empty folders, so a ``git add -A`` meanwhile commits nothing, and
  loaders read a folder where a file belongs as no file;
* the folders on the way that do exist (``.git``, ``.mewcode``, ...) are
  bound onto themselves: a mount point cannot be renamed or removed, so
  ``mv .git .old && mkdir .git`` cannot swap in a fresh one;
* a component that is a symbolic link cannot be pinned (a mount follows
  the link): its folder is made read-only instead, and its target too; a
  link right in the project folder is reported as not protected.

The user's MewCode folder (the trust store, the checkpoint key, config,
hooks, memory, instructions) is replaced by an empty read-only folder
holding only its ``skills``, ``agents`` and ``hooks`` subfolders, read-only;
inside a writable folder, the folders on the way to it are pinned, and a
missing one gets a placeholder.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ..project_paths import PROTECTED_PATHS
from .leases import Placeholder

__all__ = ["SHOWN_USER_FOLDERS", "Protection", "UserState", "project_protection", "user_state"]

#: the user's own folders that stay visible (read-only): their skills' and
#: plugins' scripts run
SHOWN_USER_FOLDERS: tuple[str, ...] = ("skills", "agents", "hooks", "plugins")


@dataclass(frozen=True, kw_only=True, slots=True)
class Protection:
    """``pinned``: existing folders bound onto themselves (writable, but never
    renamed); ``readonly``: existing paths bound read-only; ``placeholders``:
    made and bound read-only while the process runs; ``unprotected``: (path,
    why) that cannot be covered."""

    pinned: tuple[str, ...] = ()
    readonly: tuple[str, ...] = ()
    placeholders: tuple[Placeholder, ...] = ()
    unprotected: tuple[tuple[str, str], ...] = ()

    def __add__(self, other: Protection) -> Protection:
        return Protection(
            pinned=_unique(self.pinned + other.pinned),
            readonly=_unique(self.readonly + other.readonly),
            placeholders=tuple(dict.fromkeys(self.placeholders + other.placeholders)),
            unprotected=tuple(dict.fromkeys(self.unprotected + other.unprotected)),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class UserState:
    """``hidden``: the user's MewCode folders that exist (each replaced by an
    empty read-only one); ``shown``: their subfolders shown again, read-only;
    ``files``: a user-state path that is a file (hidden as one);
    ``protection``: what keeps them from being created or swapped."""

    hidden: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    protection: Protection = field(default_factory=Protection)


def inside(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or below it (both absolute, normalised)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def project_protection(
    root: str,
    *,
    entries: Sequence[str] = PROTECTED_PATHS,
    skip: Sequence[str] = (),
    standin: Callable[[str], bool] = lambda path: False,
) -> Protection:
    """How to keep ``entries`` (relative to ``root``) from being changed or
    created; paths under ``skip`` (covered otherwise) are left alone;
    ``standin`` says whether an existing path is another process's stand-in
    (planned as a stand-in again, so this process leases it too)."""
    if any(inside(root, s) for s in skip):
        return Protection()
    out = Protection()
    for rel in _outermost(entries):
        out = out + _cover(root, rel.split("/"), skip, standin)
    pinned = tuple(p for p in out.pinned if p not in out.readonly)
    return Protection(
        pinned=pinned,
        readonly=out.readonly,
        placeholders=out.placeholders,
        unprotected=out.unprotected,
    )


def user_state(
    dirs: Sequence[str],
    writable: Sequence[str],
    standin: Callable[[str], bool] = lambda path: False,
) -> UserState:
    """How to hide the user's MewCode folders ``dirs`` (absolute, as
    configured) from a process that may write ``writable``."""
    hidden: list[str] = []
    shown: list[str] = []
    files: list[str] = []
    prot = Protection()
    for raw in _unique(dirs):
        real = os.path.realpath(raw)
        if os.path.isdir(real):
            hidden.append(real)
            shown += [
                os.path.join(real, n)
                for n in SHOWN_USER_FOLDERS
                if os.path.isdir(os.path.join(real, n))
            ]
        elif os.path.lexists(real):
            files.append(real)
        for base in writable:
            if inside(raw, base) and raw != base and os.path.islink(raw):
                prot = prot + Protection(
                    unprotected=((raw, "a symbolic link inside a writable folder"),)
                )
            if inside(real, base) and real != base:
                rel = os.path.relpath(real, base).split("/")
                prot = prot + _cover(base, rel, (), standin, stop_at_existing_leaf=True)
    return UserState(hidden=tuple(hidden), shown=tuple(shown), files=tuple(files), protection=prot)


def _cover(
    base: str,
    parts: Sequence[str],
    skip: Sequence[str],
    standin: Callable[[str], bool],
    *,
    stop_at_existing_leaf: bool = False,
) -> Protection:
    """Walk ``base/parts``: pin the folders that exist, cover the leaf or the
    first missing component (see the module docstring)."""
    pinned: list[str] = []
    current = base
    for i, name in enumerate(parts):
        path = os.path.join(current, name)
        leaf = i == len(parts) - 1
        if any(inside(path, s) for s in skip):
            break
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            info = None
        except OSError:
            break  # not searchable: not for the process either
        if info is None or standin(path):
            if info is None and not os.access(current, os.W_OK):
                break  # nobody can create it here (a read-only file system)
            made = Placeholder(base, os.path.relpath(path, base), "dir")
            return Protection(pinned=tuple(pinned), placeholders=(made,))
        if stat.S_ISLNK(info.st_mode):
            return Protection(pinned=tuple(pinned)) + _linked(base, current, path)
        if leaf:
            if stop_at_existing_leaf:  # hidden by its own mount, which pins it
                return Protection(pinned=tuple(pinned))
            return Protection(pinned=tuple(pinned), readonly=(path,))
        if not stat.S_ISDIR(info.st_mode):
            return Protection(pinned=tuple(pinned), readonly=(path,))  # a .git file (worktree)
        pinned.append(path)
        current = path
    return Protection(pinned=tuple(pinned))


def _linked(base: str, folder: str, link: str) -> Protection:
    """A protected path reached through the link ``link`` in ``folder``."""
    readonly: list[str] = []
    unprotected: list[tuple[str, str]] = []
    if folder != base:
        readonly.append(folder)  # the link cannot be swapped in a read-only folder
    else:
        unprotected.append((link, "a symbolic link in the folder itself: it could be replaced"))
    target = os.path.realpath(link)
    if os.path.exists(target):
        readonly.append(target)
    else:
        unprotected.append((link, f"a symbolic link to {target}, which does not exist"))
    return Protection(readonly=tuple(readonly), unprotected=tuple(unprotected))


def _outermost(entries: Sequence[str]) -> list[str]:
    """``entries`` without those inside another entry (covered by it)."""
    ordered = list(dict.fromkeys(entries))
    return [e for e in ordered if not any(e != o and inside(e, o) for o in ordered)]


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
