"""Whose a session is: the user who owns its folder, and nobody else.

Several people may work in one project folder (a team's share, a JupyterHub
server's shared disk): each one's sessions are created in the same
``.mewcode/sessions`` and stay theirs. A session folder is ``0700`` and its
files ``0600``; a folder or file another user owns is never read, locked,
resumed or forked, and is left out of the listing (``SessionNotYours``
names its owner when asked for it by id). The two folders that hold them
are shared the way the project is (``ownership.container_mode``).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import SessionError, SessionNotYours
from ..ownership import ensure_container, is_mine, owner_name
from ._files import SESSIONS_DIR, safe_sessions_dir

__all__ = ["check_mine", "not_yours", "prepare_sessions_dir"]


def not_yours(session_id: str, uid: int) -> SessionNotYours:
    owner = owner_name(uid)
    return SessionNotYours(
        f"session {session_id} belongs to another user ({owner}): MewCode never reads, locks, "
        "resumes or forks another user's session, even in a shared project folder. Start "
        "your own (`%%agent --new`), or ask them to share what you need",
        session_id=session_id,
        owner=owner,
    )


def check_mine(directory: Path, session_id: str) -> None:
    """``SessionNotYours`` when another user owns the session folder
    ``directory`` (nothing when it is missing: callers report that)."""
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SessionError(f"cannot read session {session_id}: {exc.strerror}") from None
    if not is_mine(st):
        raise not_yours(session_id, st.st_uid)


def prepare_sessions_dir(root: Path) -> Path:
    """``<root>/.mewcode/sessions``, created (each of the two folders shared
    as the project is) when missing; ``SessionError`` when either is a
    symbolic link or cannot be made."""
    directory = safe_sessions_dir(root)
    try:
        for folder in (root / SESSIONS_DIR.parent, directory):
            ensure_container(folder, root)
    except OSError as exc:
        raise SessionError(
            f"cannot create a session under {directory}: {exc.strerror}"
            + (
                " (another user made this folder without letting others write in it: they "
                "can share it with `chmod g+w,+t`, or you can set MEWCODE_ROOT elsewhere)"
                if isinstance(exc, PermissionError)
                else ""
            )
        ) from None
    return directory
