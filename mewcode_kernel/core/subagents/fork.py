"""Forks: a subagent that starts from the parent's live conversation."""

from __future__ import annotations

from collections.abc import Sequence

from ..conversation import close_dangling
from ..messages import Message, TextBlock
from .definition import AgentDefinition

__all__ = ["FORK_BOILERPLATE", "FORK_NAME", "fork_definition", "fork_history", "fork_prompt"]

FORK_NAME = "fork"
FORK_SKIPPED = "[forked, skipped]"
FORK_BOILERPLATE = """<fork_boilerplate>
You are a fork of the agent whose conversation is above: you share its history, and you now
work on your own on the task below, in the background.
- Do not fork again or delegate.
- Do not ask questions: nobody can answer them. Make reasonable assumptions and say so.
- Do the task; stay within its scope.
- Your final message is your report. It must begin with "Scope:" (one line saying what you
  covered) and be at most 500 words.
</fork_boilerplate>"""


def fork_definition(max_turns: int = 25) -> AgentDefinition:
    """The definition a fork runs with: the parent's tools, model and prompt."""
    return AgentDefinition(
        name=FORK_NAME,
        description="a fork of the parent agent, sharing its conversation",
        system_prompt="",
        max_turns=max_turns,
        background=True,
    )


def fork_history(messages: Sequence[Message]) -> list[Message]:
    """A copy of the parent's live history, its unanswered calls (the fork's own
    ``Agent`` call among them) closed as skipped."""
    return close_dangling([m.model_copy(deep=True) for m in messages], FORK_SKIPPED)


def fork_prompt(task: str) -> Message:
    """The fork's user message: the rules, then the task."""
    return Message(role="user", content=[TextBlock(text=FORK_BOILERPLATE), TextBlock(text=task)])
