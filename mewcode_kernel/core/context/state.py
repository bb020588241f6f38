"""Per-session context state: the offload ledger, the usage anchor, the file
tracker and the compaction circuit breaker.

It lives in ``ConversationState`` and ``reset`` clears it in place when a new
session starts (``/clear``, resume): every decision recorded here refers to
call ids and message positions of one conversation only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = ["BREAKER_LIMIT", "CompactionRecord", "ContextState", "Offloaded"]

#: Consecutive failed automatic compactions after which they stop being tried.
BREAKER_LIMIT = 3


@dataclass(frozen=True, kw_only=True, slots=True)
class Offloaded:
    """A tool result that was too large to keep whole. ``path`` is where the
    full text went (``None`` when it already lives on disk, e.g. a file the
    model read, and only a preview was kept)."""

    call_id: str
    path: Path | None
    chars: int
    kept_chars: int


@dataclass(frozen=True, kw_only=True, slots=True)
class CompactionRecord:
    """What one compaction did."""

    trigger: str
    tokens_before: int
    tokens_after: int
    summarized_messages: int
    kept_messages: int


@dataclass(kw_only=True)
class ContextState:
    """Mutable state of context management for one session.

    ``decisions`` is the offload ledger (the reference's
    ContentReplacementState): every tool result's form is decided once, when
    it is created, and recorded by call id, so a result that was sent is never
    sent differently. ``anchor_tokens`` / ``anchor_messages`` are the last
    provider-reported request size and how many messages it covered.
    """

    decisions: dict[str, Offloaded | None] = field(default_factory=dict)
    anchor_tokens: int = 0
    anchor_messages: int = -1
    files: dict[str, Literal["read", "edited"]] = field(default_factory=dict)
    compactions: list[CompactionRecord] = field(default_factory=list)
    compact_failures: int = 0
    breaker_reported: bool = False

    @property
    def offloaded(self) -> list[Offloaded]:
        """The results kept as previews, oldest first."""
        return [d for d in self.decisions.values() if d is not None]

    @property
    def breaker_open(self) -> bool:
        """True once automatic compaction failed ``BREAKER_LIMIT`` times in a row."""
        return self.compact_failures >= BREAKER_LIMIT

    def set_anchor(self, tokens: int, messages: int) -> None:
        self.anchor_tokens = tokens
        self.anchor_messages = messages

    def clear_anchor(self) -> None:
        self.anchor_tokens = 0
        self.anchor_messages = -1

    def touch_file(self, path: str, action: Literal["read", "edited"]) -> None:
        """Track a file the tools used; "edited" sticks once seen."""
        if self.files.get(path) != "edited":
            self.files[path] = action

    def reset(self) -> None:
        """Forget everything (a new session starts)."""
        self.decisions.clear()
        self.clear_anchor()
        self.files.clear()
        self.compactions.clear()
        self.compact_failures = 0
        self.breaker_reported = False
