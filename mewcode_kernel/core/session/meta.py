"""``meta.json``: what a session listing shows without reading the conversation."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ..fs.durable import atomic_write
from ._files import META_FILE, read_regular
from .ids import session_id_time

__all__ = ["META_VERSION", "PROMPT_KEEP_CHARS", "SessionMeta", "read_meta", "write_meta"]

META_VERSION = 1
#: How much of the first prompt meta keeps (listings truncate further).
PROMPT_KEEP_CHARS = 500


class SessionMeta(BaseModel):
    """Session metadata. Unknown fields written by newer versions are kept.
    Never holds secrets: only names of the provider and model."""

    model_config = ConfigDict(frozen=True, extra="allow")

    version: int = META_VERSION
    id: str
    provider: str | None = None
    model: str | None = None
    created: datetime | None = None
    updated: datetime | None = None
    title: str | None = None
    first_prompt: str | None = None
    #: the notebook whose kernel wrote it (``JPY_SESSION_NAME``; relative to the
    #: project when inside it)
    notebook: str | None = None

    @classmethod
    def new(
        cls,
        session_id: str,
        *,
        provider: str | None,
        model: str | None,
        notebook: str | None = None,
    ) -> SessionMeta:
        now = session_id_time(session_id) or datetime.now(UTC)
        return cls(
            id=session_id,
            provider=provider,
            model=model,
            created=now,
            updated=now,
            notebook=notebook,
        )

    @classmethod
    def guessed(cls, session_id: str) -> SessionMeta:
        """What can be known of a session whose meta is missing or corrupt."""
        return cls(id=session_id, created=session_id_time(session_id))

    def touched(self, **changes: object) -> SessionMeta:
        """A copy with ``changes`` applied and ``updated`` set to now."""
        return self.model_copy(update={**changes, "updated": datetime.now(UTC)})


def read_meta(session_dir: Path) -> SessionMeta | None:
    """The meta of ``session_dir``, or ``None`` if missing or unreadable;
    ``SessionError`` when ``meta.json`` is a symbolic link or not a regular file."""
    try:
        return SessionMeta.model_validate_json(read_regular(session_dir / META_FILE))
    except (OSError, ValidationError):
        return None


def write_meta(session_dir: Path, meta: SessionMeta) -> None:
    """Write ``meta.json`` atomically (temp file + ``os.replace``)."""
    atomic_write(session_dir / META_FILE, meta.model_dump_json(indent=2).encode() + b"\n")
