"""Session ids: ``YYYYMMDD-HHMMSS-ffffff-xxxxxx`` (UTC time, microseconds, 6
random hex digits), so lexical order is creation order. A session directory is
claimed with ``os.mkdir``, which fails if it exists, so concurrent creators
(threads or processes) never share an id."""

from __future__ import annotations

import os
import re
import secrets
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..errors import SessionError

__all__ = ["claim_session_dir", "is_session_id", "new_session_id", "session_id_time"]

_ID = re.compile(r"^(\d{8}-\d{6}-\d{6})-[0-9a-f]{6}$")
_TIME_FORMAT = "%Y%m%d-%H%M%S-%f"
_ATTEMPTS = 64

_lock = threading.Lock()
_last = datetime.min.replace(tzinfo=UTC)


def new_session_id(now: datetime | None = None) -> str:
    """A fresh id. Without ``now``, ids made by this process strictly increase
    even when the clock stands still or steps back."""
    global _last
    if now is None:
        with _lock:
            now = max(datetime.now(UTC), _last + timedelta(microseconds=1))
            _last = now
    return f"{now.astimezone(UTC).strftime(_TIME_FORMAT)}-{secrets.token_hex(3)}"


def is_session_id(text: str) -> bool:
    """Whether ``text`` has the shape of an id made by ``new_session_id``."""
    return _ID.match(text) is not None


def session_id_time(session_id: str) -> datetime | None:
    """The UTC creation time encoded in an id, or ``None`` for a foreign name."""
    match = _ID.match(session_id)
    if match is None:
        return None
    return datetime.strptime(match.group(1), _TIME_FORMAT).replace(tzinfo=UTC)


def claim_session_dir(parent: Path) -> tuple[str, Path]:
    """Create a new, empty session directory (``0700``: the user's alone)
    under ``parent``, which exists, and return its id and path."""
    try:
        for _ in range(_ATTEMPTS):
            session_id = new_session_id()
            path = parent / session_id
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                continue
            os.chmod(path, 0o700)  # whatever the umask: a session is its owner's alone
            return session_id, path
    except OSError as exc:
        raise SessionError(f"cannot create a session under {parent}: {exc.strerror}") from None
    raise SessionError(f"cannot find a free session id under {parent}")
