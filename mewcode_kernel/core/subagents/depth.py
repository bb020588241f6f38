"""How deep subagents may nest (``subagents.max_depth``).

The session's agent runs at depth 0, its subagents at 1, theirs at 2, and
so on. With nesting on (a limit above 1) a foreground child keeps the
``Agent`` tool at every level, and a request to go deeper than the limit
(an ``Agent`` call, a fork skill loaded down there) is refused with a tool
result that says why: the model learns the limit instead of meeting an
unknown tool, and the chain never grows past it. With nesting off,
children are not offered ``Agent`` at all.
"""

from __future__ import annotations

from ..config import SubagentSettings
from ..errors import ToolError

__all__ = ["child_depth", "nesting_on"]


def child_depth(parent_depth: int, settings: SubagentSettings) -> int:
    """The depth a child of an agent at ``parent_depth`` runs at; raises a
    ``ToolError`` when that is deeper than the settings allow."""
    depth = parent_depth + 1
    limit = settings.depth_limit
    if depth > limit:
        raise ToolError(
            f"subagent refused: it would run at depth {depth}, and subagents may nest only "
            f"{limit} level{'s' if limit != 1 else ''} deep (subagents.max_depth = "
            f"{settings.max_depth}); do this part of the task yourself"
        )
    return depth


def nesting_on(settings: SubagentSettings) -> bool:
    """Whether subagents are offered the ``Agent`` tool at all."""
    return settings.depth_limit > 1
