"""Paths of the on-disk layout, the line format, and durable file writes.

Layout: ``<root>/.mewcode/sessions/<id>/conversation.jsonl`` and ``meta.json``.

Line format of ``conversation.jsonl``: one JSON object per line, ``\\n``
terminated. A line with a ``role`` key is a ``Message``
(``Message.model_dump_json()``); a line with a string ``type`` key is a
marker (e.g. ``{"type": "compact", "messages": 12, ...}``, followed by the
12 messages the conversation was compacted to) whose kinds later code
defines; readers ignore kinds they do not know. Anything else is corrupt.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import SessionError
from ..messages import Message
from ..ownership import owner_name

__all__ = [
    "COMPACT_MARKER",
    "CONVERSATION_FILE",
    "META_FILE",
    "SESSIONS_DIR",
    "SessionMarker",
    "decode_line",
    "encode_marker",
    "encode_message",
    "modified_at",
    "open_regular",
    "read_regular",
    "refuse_symlinks",
    "safe_sessions_dir",
    "sessions_dir",
]

SESSIONS_DIR = Path(".mewcode") / "sessions"
#: Marker kind written by a compaction; loading starts at the last complete one.
COMPACT_MARKER = "compact"
CONVERSATION_FILE = "conversation.jsonl"
META_FILE = "meta.json"

_MESSAGE_PREFIX = b'{"role"'
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionMarker:
    """A non-message line. ``position`` is how many messages preceded it."""

    type: str
    data: Mapping[str, Any] = field(default_factory=dict)
    position: int = 0


def sessions_dir(root: Path) -> Path:
    """Where the sessions of project ``root`` live."""
    return root / SESSIONS_DIR


def modified_at(path: Path) -> datetime | None:
    """When ``path`` itself (a link, not its target) last changed; ``None``
    if it is missing or unreadable."""
    try:
        return datetime.fromtimestamp(os.lstat(path).st_mtime, UTC)
    except OSError:
        return None


def refuse_symlinks(*paths: Path) -> None:
    """``SessionError`` naming the first of ``paths`` that is a symbolic link."""
    for path in paths:
        if os.path.islink(path):
            raise _link_error(path)


def _link_error(path: Path) -> SessionError:
    try:
        target = f" (to {os.readlink(path)})"
    except OSError:
        target = ""
    return SessionError(
        f"{path} is a symbolic link{target}: MewCode does not read or write sessions "
        "and checkpoints through a link, which a cloned repository could ship to send "
        "them to another folder. Replace the link with a real folder (or remove it) "
        "and run again."
    )


def _refuse_foreign(path: Path, st: os.stat_result) -> None:
    if st.st_uid != os.geteuid():
        raise SessionError(
            f"{path} belongs to another user ({owner_name(st.st_uid)}): MewCode never reads or "
            "writes another user's session files"
        )


def _refuse_irregular(path: Path, mode: int) -> None:
    if stat.S_ISLNK(mode):
        raise _link_error(path)
    if not stat.S_ISREG(mode):
        raise SessionError(
            f"{path} is not a regular file: MewCode reads and writes sessions only in "
            "regular files (a cloned repository could ship a pipe or a device there). "
            "Remove it and run again."
        )


def open_regular(path: Path, flags: int, mode: int = 0o600) -> int:
    """``os.open(path, flags)`` for a file inside a session folder, never
    through a symbolic link (``O_NOFOLLOW``) and never blocking on a FIFO
    (``O_NONBLOCK``; a no-op for regular files). ``SessionError`` naming
    ``path`` when it is a link or not a regular file (a cloned repository can
    ship ``.lock`` as a link to ``~/.bashrc``, which locking would truncate),
    or when another user owns it (in a shared project, a file planted in a
    session folder swapped under us); a file it creates is ``mode`` (``0600``:
    the user's alone). Other failures raise ``OSError`` (``FileNotFoundError``
    without ``O_CREAT``)."""
    try:
        _refuse_irregular(path, os.lstat(path).st_mode)  # no open of a device at all
    except FileNotFoundError:
        pass
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise _link_error(path) from None
        raise
    try:
        st = os.fstat(fd)
        _refuse_irregular(path, st.st_mode)
        _refuse_foreign(path, st)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path) -> bytes:
    """The bytes of ``path``, read as ``open_regular`` opens it."""
    with open(open_regular(path, os.O_RDONLY), "rb") as f:
        return f.read()


def safe_sessions_dir(root: Path) -> Path:
    """``sessions_dir(root)``, or ``SessionError`` when ``.mewcode`` or
    ``.mewcode/sessions`` is a symlink: followed, a cloned repository could
    have the conversation written into, and another project's checkpoints
    read from, a folder of its choosing."""
    refuse_symlinks(root / SESSIONS_DIR.parent, root / SESSIONS_DIR)
    return sessions_dir(root)


def encode_message(message: Message) -> bytes:
    """One line (with its newline) for ``message``."""
    return message.model_dump_json().encode() + b"\n"


def encode_marker(kind: str, data: Mapping[str, Any] | None = None) -> bytes:
    """One marker line; ``kind`` becomes the ``type`` key."""
    if not kind or kind == "message":
        raise ValueError(f"invalid marker type {kind!r}")
    record = {**(data or {}), "type": kind}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode_line(line: bytes) -> Message | tuple[str, dict[str, Any]] | None:
    """A message, a ``(type, record)`` marker, or ``None`` for a corrupt line."""
    if line.startswith(_MESSAGE_PREFIX):
        # What our writer produces: validate straight from the bytes.
        try:
            return Message.model_validate_json(line)
        except ValidationError:
            pass  # e.g. a lone surrogate, which only the slow path reads (and load repairs)
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # deep nesting ([[[...]]]) is as corrupt as bad JSON
        return None
    if not isinstance(record, dict):
        return None
    if "role" in record:
        try:
            return Message.model_validate(record)
        except ValidationError:
            return None
    kind = record.get("type")
    return (kind, record) if isinstance(kind, str) else None
