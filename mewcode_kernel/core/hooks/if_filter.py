"""Claude Code's ``if`` on a hook handler: a permission rule in the syntax
of ``permissions.allow`` (``Bash(rm *)``, ``Edit(src/**)``), which the
call of a tool event must match for the handler to run.

The call is matched by the permission engine itself, as a deny rule of
its own would be: a compound command (``ls && rm -rf x``), a path given
with ``../``, ``~`` or through a link, a tool called by its MewCode name
or its Claude Code one all match the way they would for a deny rule, so a
guard hook filtered with ``if`` is as hard to slip past as the rule. What
the engine cannot read (a command it cannot analyse, a path it cannot
resolve) runs the hook: a filter that cannot tell fails towards the hook.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..fs import Workspace
from ..messages import ToolUseBlock
from ..permission.engine import decide
from ..permission.request import PermissionRequest
from ..permission.rules import Rule, RuleError, RuleSet, RuleSource, parse_rule
from ..tools.base import Tool
from .rules import RuleError as HookRuleError

__all__ = ["TOOL_EVENTS", "call_matches", "compile_if"]

#: the events about one tool call, where ``if`` means something
TOOL_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"}
)


def compile_if(text: Any, event: str, source: Path) -> Rule:
    """The rule of an ``if``; raises the hook ``RuleError`` saying why not."""
    if event not in TOOL_EVENTS:
        raise HookRuleError(
            f"'if' only applies to tool events ({', '.join(sorted(TOOL_EVENTS))}), "
            f"not {event}; the hook would never run"
        )
    try:
        return parse_rule(text, "deny", RuleSource(label="hook if", path=source))
    except RuleError as exc:
        raise HookRuleError(f"bad 'if' rule {text!r}: {exc}") from None


def call_matches(
    rule: Rule,
    tool: Tool | None,
    tool_name: str,
    tool_input: Mapping[str, Any],
    workspace: Workspace,
    families: Mapping[str, Any] | None = None,
) -> bool:
    """Whether the call of ``tool`` (``None``: no such tool now) with
    ``tool_input`` is one ``rule`` covers."""
    if tool is None:
        return True  # nothing to read it with: run the hook rather than skip it
    call = ToolUseBlock(id="hook-if", name=tool_name, input=dict(tool_input))
    request = PermissionRequest.from_call(call, tool, families)
    try:
        decision = decide(request, RuleSet([rule]), "bypassPermissions", workspace=workspace)
    except Exception:  # the engine could not read the call: run the hook
        return True
    # a deny is the rule matching; an ask is the engine unable to tell
    return decision.outcome != "allow"
