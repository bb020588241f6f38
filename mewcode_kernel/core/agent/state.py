"""State that lives across the turns of one conversation, reset when a new
one begins (``/clear``, resuming another session)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from ..context.state import ContextState
from ..events import TurnDone
from ..usage import Usage

__all__ = ["ConversationState"]


@dataclass(kw_only=True)
class ConversationState:
    """Per-conversation state. ``reset`` clears every field (the reference's
    ResetForNewSession): a field added here must be reset there too, since
    ``/clear`` and resuming another session start from zero.

    * ``usage`` / ``model_turns`` / ``user_turns`` / ``last_usage``: counters;
      ``usage_by_model``: the same tokens by the model they were spent on
      (``""``: the session's own), so a role's model is priced as itself;
    * ``context``: offload ledger, usage anchor, file tracker, compaction
      breaker (``ContextState``);
    * ``pending_reminders``: texts for the next user-side message's ``<system-reminder>``
      blocks; ``idle_gap``: a resumed session's inactivity, noted once;
    * ``active_skills``: skill bodies activated by name (the skills issue);
    * ``found_tools``: tools ``search_tools`` found, oldest first: they are
      offered after the others from then on (tool search);
    * ``cancelled_turn``: what the last user turn spent when it was cancelled
      (it could not yield its ``TurnDone``); cleared when a turn starts.
    """

    usage: Usage = field(default_factory=Usage)
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    model_turns: int = 0
    user_turns: int = 0
    last_usage: Usage | None = None
    context: ContextState = field(default_factory=ContextState)
    pending_reminders: list[str] = field(default_factory=list)
    idle_gap: timedelta | None = None
    active_skills: dict[str, str] = field(default_factory=dict)
    found_tools: list[str] = field(default_factory=list)
    cancelled_turn: TurnDone | None = None

    def add_usage(self, usage: Usage, *, model: str = "") -> None:
        """Count tokens spent on ``model`` (``""``: the session's model, e.g. a
        summary or a background task's)."""
        self.usage = self.usage + usage
        self.usage_by_model[model] = self.usage_by_model.get(model, Usage()) + usage

    def add_reminder(self, text: str) -> None:
        """Queue ``text`` for the next user turn."""
        if text.strip():
            self.pending_reminders.append(text.strip())

    def take_reminders(self) -> list[str]:
        """The queued reminders, emptying the queue."""
        taken, self.pending_reminders = self.pending_reminders, []
        return taken

    def reset(self) -> None:
        self.usage = Usage()
        self.usage_by_model = {}
        self.model_turns = 0
        self.user_turns = 0
        self.last_usage = None
        self.context.reset()
        self.pending_reminders = []
        self.idle_gap = None
        self.active_skills.clear()
        self.found_tools.clear()
        self.cancelled_turn = None
