"""The seam for fork skills: a skill with ``mode: fork`` runs as a subagent,
and only its final answer comes back (as ``load_skill``'s result, or as the
answer of a ``/name`` command).

The skills package does not run agents: a ``SkillForkRunner`` does (the
subagents package provides one). ``load_skill`` and ``/name`` both go
through ``SkillsToolset.run_fork``, which says clearly when no runner is
available rather than running the skill inline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .skill import ForkContext, Skill

if TYPE_CHECKING:
    from ..tools.context import RunContext

__all__ = ["FORK_UNAVAILABLE", "ForkRequest", "SkillForkRunner"]

FORK_UNAVAILABLE = (
    "skill {name!r} runs in fork mode (as a subagent), which needs the subagent runner; "
    "this session has none, so the skill was not run"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class ForkRequest:
    """One fork run.

    ``prompt`` is the rendered skill (the subagent's first user message);
    ``allowed_tools`` the skill's list as written (a runner offers only the
    tools these name, plus system tools such as ``load_skill``; empty means
    no limit); ``fork_context`` how much of the parent conversation the
    subagent sees; ``model`` the model to route to (``None``: the parent's).
    """

    skill: Skill
    prompt: str
    args: str
    allowed_tools: tuple[str, ...]
    fork_context: ForkContext
    model: str | None


class SkillForkRunner(Protocol):
    """Runs a fork skill as a subagent and returns its final answer.

    ``ctx`` is the run context of the ``load_skill`` call that asked for it
    (the parent's services, its event sink for nested progress, its cancel
    scope), or ``None`` when a person ran the skill with ``/name``.
    Raises ``SkillError`` (or ``ToolError``) for a run that cannot start.
    """

    async def run_fork(self, request: ForkRequest, ctx: RunContext | None) -> str: ...
