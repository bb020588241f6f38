"""Who owns a file, and the modes of what MewCode creates, for machines and
project folders that several people share (a JupyterHub server, a team's
project on a shared disk).

What is one user's is private: folders ``0700``, files ``0600``, and never
read or used when another user owns them (the owner of a file is the one
thing another user cannot forge). The folders that hold many users' private
folders (a project's ``.mewcode`` and ``.mewcode/sessions``) are shared the
way the project folder is: whoever may write the project may create their
own session there, and the sticky bit keeps each from removing another's.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = [
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "container_mode",
    "ensure_container",
    "ensure_private_dir",
    "is_mine",
    "owner_name",
    "unsafe_sharing",
]

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
#: who may write a folder besides its owner
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def is_mine(st: os.stat_result) -> bool:
    """Whether this process's user owns the file ``st`` describes."""
    return st.st_uid == os.geteuid()


def owner_name(uid: int) -> str:
    """A user's name (``uid N`` when the system knows none)."""
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def ensure_private_dir(path: Path) -> Path:
    """Make ``path`` (and any missing parents, which exist only for it) a
    folder of ours that nobody else can enter: created ``0700``, and an
    existing one of ours that others could read or write is narrowed to it.
    ``OSError`` when it cannot be made, or ``PermissionError`` when another
    user owns it."""
    missing: list[Path] = []
    probe = path
    while not os.path.lexists(probe):
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, PRIVATE_DIR)
    st = os.stat(path)  # a link to a folder of ours is fine: the folder is what counts
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{path} is not a folder")
    if not is_mine(st):
        raise PermissionError(f"{path} belongs to {owner_name(st.st_uid)}, not to you")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077 & 0o7777)
    return path


def container_mode(project_mode: int) -> int:
    """The mode of a folder holding several users' private folders inside a
    project of mode ``project_mode``: the owner's ``rwx``; for the group and
    for others, ``rwx`` when they may write the project and nothing
    otherwise; the sticky bit when anyone else may write it, and the
    project's set-group-id bit (so the group carries on)."""
    mode = stat.S_IRWXU
    if project_mode & stat.S_IWGRP:
        mode |= stat.S_IRWXG
    if project_mode & stat.S_IWOTH:
        mode |= stat.S_IRWXO
    if mode & _OTHERS_WRITE:
        mode |= stat.S_ISVTX
    return mode | (project_mode & stat.S_ISGID)


def ensure_container(path: Path, project: Path) -> None:
    """Create ``path`` (a child of ``project`` or of a container in it) with
    ``container_mode``; one of ours that lacks the sharing the project now
    has (it became a team's folder later) gets it. Symbolic links are never
    created or followed here (callers refuse them first)."""
    want = container_mode(os.stat(project).st_mode)
    try:
        os.mkdir(path, PRIVATE_DIR)
    except FileExistsError:
        pass
    else:
        os.chmod(path, want)  # explicit: the umask would take the sharing away
        return
    st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode) and is_mine(st):
        have = stat.S_IMODE(st.st_mode)
        if have | want != have:
            os.chmod(path, have | want)


def unsafe_sharing(path: Path) -> str | None:
    """Why a container folder lets others remove what is in it: writable by
    others without the sticky bit (``None`` when it does not, or is missing)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    mode = stat.S_IMODE(st.st_mode)
    if mode & _OTHERS_WRITE and not mode & stat.S_ISVTX:
        who = "everyone" if mode & stat.S_IWOTH else "its group"
        return (
            f"{path} is writable by {who} without the sticky bit, so they can remove or "
            f"replace your sessions in it (fix: chmod +t {path})"
        )
    return None
