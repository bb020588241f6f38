"""Exceptions raised by the MewCode core.

Two families, kept apart on purpose:

Real errors, under one root::

    MewcodeError
     ├── ConfigError        a config file is unreadable or fails its schema
     ├── ProviderError      the model provider failed after retries
     │    └── ReplayMismatch a replayed request differs from the cassette
     ├── ToolError          a tool refused its input or failed (becomes an error result)
     ├── SessionError       a session cannot be found or read
     │    ├── SessionInUse  another process is writing the session
     │    └── SessionNotYours  another user's session (never read, locked or resumed)
     └── SkillError         a skill cannot be parsed, found, run or installed

Cancelling a turn is not an error: the task running it is cancelled
(``asyncio.CancelledError``) and the loop leaves the conversation valid.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "MewcodeError",
    "ProviderError",
    "ReplayMismatch",
    "SessionError",
    "SessionInUse",
    "SessionNotYours",
    "SkillError",
    "ToolError",
]


class MewcodeError(Exception):
    """Root of every error the core raises on purpose."""


class ConfigError(MewcodeError):
    """A config file could not be used. ``path``/``line``/``field`` say where."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        where = ""
        if path:
            where = path + (f":{line}" if line else "")
        if field:
            where = f"{where} ({field})" if where else field
        super().__init__(f"{where}: {message}" if where else message)
        self.message = message


class ProviderError(MewcodeError):
    """The provider failed for good. ``retryable`` says whether retrying could help."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.attempts = attempts


class ReplayMismatch(ProviderError):
    """A request did not match the recording, or recorded requests were left unused."""


class ToolError(MewcodeError):
    """A tool could not do what it was asked; the message is shown to the model."""


class SessionError(MewcodeError):
    """A session could not be found or read."""


class SkillError(MewcodeError):
    """A skill could not be parsed, found, run or installed. ``path`` and
    ``line`` say where, for a SKILL.md that is invalid."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = message
        where = (path + (f":{line}" if line else "")) if path else ""
        super().__init__(f"{where}: {message}" if where else message)


class SessionInUse(SessionError):
    """Another process (a second kernel, say) holds the session's lock: only
    one writes a session. ``session_id`` and the holder's ``pid`` say which."""

    def __init__(self, message: str, *, session_id: str, pid: int | None = None) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.pid = pid


class SessionNotYours(SessionError):
    """The session belongs to another user (another uid owns its folder):
    MewCode never reads, locks, resumes or forks it. ``owner`` names them."""

    def __init__(self, message: str, *, session_id: str, owner: str) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.owner = owner
