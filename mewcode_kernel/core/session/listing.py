"""Listing the sessions of a project, newest activity first, cheaply: meta,
file times and a line count; conversations are not parsed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import SessionError
from ._files import (
    COMPACT_MARKER,
    CONVERSATION_FILE,
    META_FILE,
    modified_at,
    open_regular,
    safe_sessions_dir,
)
from .load import first_prompt_in, own_session_dirs
from .meta import SessionMeta, read_meta

__all__ = ["SessionInfo", "list_sessions"]

_MESSAGE_LINE = b'{"role"'
_COMPACT_TYPE = f'"type":"{COMPACT_MARKER}"'.encode()


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionInfo:
    """One row of a session listing. ``meta_ok`` is false when ``meta.json``
    was missing or corrupt and the row was rebuilt from what the files show.
    ``problem`` is set (and the session cannot be resumed) when one of its
    files is a symbolic link or not a regular file: the row says so in
    ``first_prompt`` instead of reading through it."""

    id: str
    path: Path
    created: datetime | None
    updated: datetime
    first_prompt: str
    message_count: int
    provider: str | None = None
    model: str | None = None
    title: str | None = None
    meta_ok: bool = True
    problem: str | None = None
    #: the notebook whose kernel wrote it, when known
    notebook: str | None = None


def list_sessions(root: Path, *, prompt_chars: int = 80) -> list[SessionInfo]:
    """The user's own sessions of project ``root`` (another user's, in a
    shared project, are not listed), most recently active first.
    ``first_prompt`` is collapsed to one line of at most ``prompt_chars``.
    ``SessionError`` when the sessions folder is reached through a symlink."""
    directory = safe_sessions_dir(root)
    try:
        entries = own_session_dirs(directory)
    except OSError:
        return []
    out = [info for e in entries if (info := _info(Path(e.path), prompt_chars)) is not None]
    out.sort(key=lambda s: (s.updated, s.id), reverse=True)
    return out


def _info(path: Path, prompt_chars: int) -> SessionInfo | None:
    try:
        return _read_info(path, prompt_chars)
    except SessionError as exc:  # a linked or special file: flag this one, list the others
        updated = modified_at(path) or datetime.fromtimestamp(0, UTC)
        return SessionInfo(
            id=path.name,
            path=path,
            created=None,
            updated=updated,
            first_prompt=_one_line(
                f"[cannot be resumed: {str(exc).replace(f'{path}{os.sep}', '')}]", prompt_chars
            ),
            message_count=0,
            meta_ok=False,
            problem=str(exc),
        )


def _read_info(path: Path, prompt_chars: int) -> SessionInfo | None:
    conversation = path / CONVERSATION_FILE
    times = [modified_at(conversation), modified_at(path / META_FILE)]
    if times == [None, None]:
        return None  # not a session directory
    meta = read_meta(path)
    meta_ok = meta is not None and meta.id == path.name
    if meta is None or not meta_ok:
        meta = SessionMeta.guessed(path.name)
    prompt = meta.first_prompt or first_prompt_in(conversation) or ""
    known = [t for t in (*times, meta.updated, meta.created) if t is not None]
    return SessionInfo(
        id=path.name,
        path=path,
        created=meta.created,
        updated=max(known),
        first_prompt=_one_line(prompt, prompt_chars),
        message_count=count_messages(conversation),
        provider=meta.provider,
        model=meta.model,
        title=meta.title,
        meta_ok=meta_ok,
        notebook=meta.notebook,
    )


def count_messages(path: Path) -> int:
    """Messages a resume would load, counted without parsing messages: lines
    our writer starts with ``{"role"``, counted from the last compaction marker
    on (the messages before it were replaced by the summary that follows it).
    ``SessionError`` when the file is a symbolic link or not a regular file."""
    count = 0
    try:
        with open(open_regular(path, os.O_RDONLY), "rb") as f:
            for line in f:
                if line.startswith(_MESSAGE_LINE):
                    count += 1
                elif _COMPACT_TYPE in line:
                    count = 0
    except OSError:
        return 0
    return count


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"
