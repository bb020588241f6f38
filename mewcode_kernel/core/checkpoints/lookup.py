"""Finding the turn a ``/rewind`` argument names.

Forms: empty (the latest turn of this session with changes not reverted
yet, else the latest such turn of any session of the project: a kernel
restart starts a new session), ``N`` (turn N of this session),
``SESSION:N`` (turn N of another session; an id prefix is enough) and
``cell N`` (the turn the cell ``In [N]`` ran, in this session).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SessionError
from ..session import resolve_session_id, sessions_dir
from .records import TurnRecord
from .store import CheckpointStore, stored_turns

__all__ = ["find_turn", "store_of"]


def store_of(root: Path, record: TurnRecord, key: bytes) -> CheckpointStore:
    return CheckpointStore(sessions_dir(root) / record.session_id, key, root=root)


def _pending(record: TurnRecord) -> bool:
    return record.reverted is None and bool(record.files or record.notebooks)


def find_turn(root: Path, session_id: str | None, spec: str, key: bytes) -> TurnRecord:
    """The record ``spec`` names among those signed with ``key``; ``ValueError``
    (a readable sentence) if none."""
    words = spec.split()
    if not words:
        mine = [r for r in stored_turns(root, key) if r.session_id == session_id and _pending(r)]
        if mine:
            return mine[-1]
        anywhere = [r for r in stored_turns(root, key) if _pending(r)]
        if anywhere:
            return anywhere[-1]
        raise ValueError("No turn with file changes left to revert in this project.")
    if words[0] == "cell":
        if len(words) != 2 or not words[1].isdigit():
            raise ValueError("Usage: `/rewind cell N` (N: the cell's execution count, In [N]).")
        count = int(words[1])
        ran = [
            r
            for r in stored_turns(root, key)
            if r.session_id == session_id and r.origin.get("execution_count") == count
        ]
        if not ran:
            raise ValueError(f"No turn of this session with file changes ran in cell In [{count}].")
        return ran[-1]
    if len(words) != 1:
        raise ValueError("Usage: `/rewind`, `/rewind N`, `/rewind SESSION:N` or `/rewind cell N`.")
    sid, _, number = words[0].rpartition(":")
    if not number.isdigit() or int(number) < 1:
        raise ValueError(f"{words[0]!r} names no turn: give N, SESSION:N or `cell N`.")
    if sid:
        try:
            sid = resolve_session_id(root, sid)
        except SessionError as exc:
            raise ValueError(str(exc)) from None
    elif session_id is None:
        raise ValueError("This session has no turns yet: name one as SESSION:N.")
    else:
        sid = session_id
    store = CheckpointStore(sessions_dir(root) / sid, key, root=root)
    try:
        return store.load(int(number))
    except ValueError as exc:
        raise ValueError(f"Session {sid}: {exc}.") from None
