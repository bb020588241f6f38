"""The agent loop (``loop``), one round of tool calls (``tool_calls``) and the
state a conversation keeps across turns (``state``)."""

from __future__ import annotations

from .loop import DEFAULT_MAX_TURNS, Agent, headless_policy
from .state import ConversationState

__all__ = ["DEFAULT_MAX_TURNS", "Agent", "ConversationState", "headless_policy"]
