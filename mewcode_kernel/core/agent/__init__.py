"""The agent: what it may do (``spec``), what it runs with (``runtime``),
the one approval flow (``approval``), the loop (``loop``), one round of tool
calls (``tool_calls``) and the state a conversation keeps across turns
(``state``)."""

from __future__ import annotations

from .approval import ApprovalFlow, headless_policy
from .loop import Agent
from .runtime import AgentRuntime
from .spec import DEFAULT_MAX_TURNS, AgentSpec
from .state import ConversationState

__all__ = [
    "DEFAULT_MAX_TURNS",
    "Agent",
    "AgentRuntime",
    "AgentSpec",
    "ApprovalFlow",
    "ConversationState",
    "headless_policy",
]
