"""``SessionLog``: a session's log on disk, as its ``AgentSession`` holds it.

Created lazily (at the first turn, so opening and closing without asking
anything leaves nothing behind), let go of at ``/clear``, and replaced by a
stored session on resume (or a copy of one, forked). Every line is
redacted on the way in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .conversation import Conversation
from .events import Notice
from .locations import notebook_path
from .messages import Message
from .session import LoadedSession, SessionStore, SessionWriter, resolve_session_id

__all__ = ["MAX_TURN", "TURN_MARKER", "SessionLog"]

#: the marker each turn writes first (``{"type": "turn", "turn": N}``), so a
#: resumed session numbers its next turn on from the last one, with or
#: without checkpoints
TURN_MARKER = "turn"
#: the highest turn number there can be (checkpoint files have nine digits)
MAX_TURN = 999_999_999


class SessionLog:
    """The log of one session at ``root`` (``None`` until the first turn)."""

    def __init__(self, root: Path, *, redact: Callable[[str], str]) -> None:
        self.root = root
        self._redact = redact
        self.writer: SessionWriter | None = None
        #: the number of the session's latest turn (0: none yet)
        self.last_turn = 0

    @property
    def notebook(self) -> str | None:
        """The notebook this kernel serves (``JPY_SESSION_NAME``), relative to
        the project when inside it: recorded in each new session's meta."""
        path = notebook_path(self.root)
        if path is None:
            return None
        return (
            path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)
        )

    @property
    def id(self) -> str | None:
        return self.writer.id if self.writer else None

    @property
    def path(self) -> Path | None:
        return self.writer.path if self.writer else None

    def ensure(
        self,
        conversation: Conversation,
        *,
        provider: str,
        model: str,
        on_replace: Callable[[list[Message]], None],
    ) -> bool:
        """Create the log if there is none yet, with ``conversation`` so far, and
        keep it written as it grows; whether it was created now."""
        if self.writer is not None:
            return False
        self.writer = SessionStore.create(
            self.root, provider=provider, model=model, redact=self._redact, notebook=self.notebook
        )
        self.last_turn = 0
        for message in conversation.messages:
            self.writer.append(message)
        conversation.on_append = self.writer.append
        conversation.on_replace = on_replace
        return True

    def marker(self, kind: str, data: dict[str, Any]) -> None:
        """A typed line (a permission decision, an approval), if the log exists."""
        if self.writer is not None:
            self.writer.append_marker(kind, data)

    def mark_turn(self, number: int) -> None:
        """Turn ``number`` of this session begins (recorded in the log)."""
        self.last_turn = number
        self.marker(TURN_MARKER, {"turn": number})

    @staticmethod
    def turns_in(loaded: LoadedSession) -> int:
        """The number of the last turn a stored session recorded (0: none).
        A marker that is not a plain number in range is not one (a log in a
        cloned repository is anybody's)."""
        found = [m.data.get("turn") for m in loaded.markers if m.type == TURN_MARKER]
        numbers = [n for n in found if type(n) is int and 0 < n < MAX_TURN]
        return max(numbers, default=0)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        self.last_turn = 0

    def open_stored(
        self, session_id: str, *, fork: bool, provider: str, model: str
    ) -> tuple[LoadedSession, SessionWriter]:
        """Load a stored session to continue (``fork``: a copy of it in a new
        session). Only one writer per session: resuming this very session lets
        go of it first; one in use elsewhere raises ``SessionInUse``."""
        if self.writer is not None and not fork:
            if resolve_session_id(self.root, session_id) == self.writer.id:
                self.close()
        if fork:
            return SessionStore.fork(
                self.root, session_id, provider=provider, model=model, redact=self._redact
            )
        return SessionStore.resume(self.root, session_id, redact=self._redact)

    def adopt(self, writer: SessionWriter, *, last_turn: int = 0) -> None:
        """Continue in ``writer`` (after ``open_stored``), closing the current
        log; ``last_turn``: the number of the stored session's last turn."""
        self.close()
        self.writer = writer
        self.last_turn = last_turn

    @staticmethod
    def resume_notices(loaded: LoadedSession, writer: SessionWriter, *, fork: bool) -> list[Notice]:
        """What the person should know about a session just loaded."""
        notices: list[Notice] = []
        if loaded.skipped_lines:
            notices.append(
                Notice(
                    level="warning",
                    message=f"Skipped {loaded.skipped_lines} damaged line(s) in the session file.",
                )
            )
        if loaded.repaired:
            notices.append(
                Notice(
                    level="warning",
                    message=f"Repaired the session log: {loaded.repaired} unanswered tool call(s), "
                    "stray result(s) or invalid character(s) before its end.",
                )
            )
        if fork:
            notices.append(
                Notice(level="info", message=f"Forked session {loaded.id} into {writer.id}.")
            )
        if loaded.closed_dangling:
            notices.append(
                Notice(
                    level="info",
                    message=f"Closed {loaded.closed_dangling} tool call(s) left unanswered when "
                    "the session stopped.",
                )
            )
        return notices
