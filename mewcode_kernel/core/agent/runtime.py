"""State that lives across the turns of one session (not across sessions)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..usage import Usage

__all__ = ["SessionRuntime"]


@dataclass(kw_only=True)
class SessionRuntime:
    """Per-session counters. ``reset`` clears every one of them: a field added
    here must be reset there too (resuming another session starts from zero)."""

    usage: Usage = field(default_factory=Usage)
    model_turns: int = 0
    user_turns: int = 0
    last_usage: Usage | None = None

    def reset(self) -> None:
        self.usage = Usage()
        self.model_turns = 0
        self.user_turns = 0
        self.last_usage = None
