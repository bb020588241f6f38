"""Where a stdio server's log goes, and opening it: the user's own file in
the project's ``.mewcode/logs``, even when several people share the project.

The folder is shared as the project is (``ownership.ensure_container``);
each file is its writer's alone (``0600``, opened without following a link,
refused when another user owns it). A name another user's log already has
gets the user's name in it (``mcp-<server>.<user>.log``).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import IO

from ..ownership import ensure_container, is_mine, owner_name

__all__ = ["LOGS_DIR", "log_path", "open_log"]

LOGS_DIR = Path(".mewcode") / "logs"
_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
_ROTATE_BYTES = 5 * 2**20
_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def _safe(text: str) -> str:
    return _UNSAFE_FILE_CHARS.sub("_", text)


def log_path(root: Path, server: str) -> Path:
    """Where ``server``'s stderr goes: ``.mewcode/logs/mcp-<server>.log``, or
    ``mcp-<server>.<user>.log`` when another user's log has that name."""
    path = root / LOGS_DIR / f"mcp-{_safe(server)}.log"
    try:
        st = os.lstat(path)
    except OSError:
        return path
    if is_mine(st):
        return path
    return path.with_name(f"mcp-{_safe(server)}.{_safe(owner_name(os.geteuid()))}.log")


def _rotate(path: Path) -> None:
    """Keep the log under its size: a large one of ours moves to ``.1``."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(st.st_mode) and is_mine(st) and st.st_size > _ROTATE_BYTES:
        os.replace(path, path.with_name(path.name + ".1"))


def open_log(path: Path, root: Path) -> IO[str]:
    """``path`` opened for appending (created ``0600``), its folders made as
    the project's are shared; ``OSError`` when a folder on the way is a link,
    or the file is a link, not a regular file, or another user's."""
    for folder in (root / LOGS_DIR.parent, path.parent):
        if os.path.islink(folder):
            raise OSError(f"{folder} is a symbolic link: MewCode does not write logs through one")
        ensure_container(folder, root)
    _rotate(path)
    fd = os.open(path, _FLAGS, 0o600)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not is_mine(st):
            raise OSError(f"{path} is not a regular file of yours: MewCode does not write to it")
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise
