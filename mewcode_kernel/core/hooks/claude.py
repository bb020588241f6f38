"""Hooks in Claude Code's format (``hooks`` in ``.claude/settings.json`` and
``.claude/settings.local.json``), as rules, so existing hooks run unchanged.

``{Event: [{matcher, hooks: [{type: command, command, timeout}]}]}``: the
matcher is a regex matched in full against the tool's name for the tool
events (``Bash``, ``Edit|Write``; empty or ``*``: every tool), against
``source`` for SessionStart, ``trigger`` for the compaction events,
``kind`` for Notification and ``reason`` for SessionEnd. Timeouts are in
seconds. Events or hook types MewCode does not have are reported and
skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..lifecycle import BLOCKING_EVENTS, HOOK_EVENTS, HookEvent
from .rules import Action, HookRule, RuleError, RuleProblem, Scope, parse_duration

__all__ = ["MATCHED_FIELD", "claude_rules"]

#: What a Claude Code matcher is matched against, per event.
MATCHED_FIELD: dict[str, str] = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "SessionStart": "source",
    "SessionResume": "source",
    "PreCompact": "trigger",
    "PostCompact": "trigger",
    "Notification": "kind",
    "SessionEnd": "reason",
}


def _pattern(matcher: Any) -> re.Pattern[str] | None:
    if matcher is None:
        return None
    if not isinstance(matcher, str):
        raise RuleError(f"matcher {matcher!r} must be a string")
    if matcher.strip() in ("", "*"):
        return None
    try:
        return re.compile(matcher)
    except re.error as exc:
        raise RuleError(f"bad matcher regex {matcher!r}: {exc}") from None


def claude_rules(
    hooks: Any, *, file: str, source: Path, scope: Scope
) -> tuple[list[HookRule], list[RuleProblem]]:
    """The rules of one settings file's ``hooks`` section, and what was skipped."""
    rules: list[HookRule] = []
    problems: list[RuleProblem] = []
    if not isinstance(hooks, Mapping):
        problems.append(RuleProblem(file=file, rule="hooks", reason="'hooks' must be a mapping"))
        return rules, problems
    for event, groups in hooks.items():
        if event not in HOOK_EVENTS:
            problems.append(
                RuleProblem(file=file, rule=str(event), reason=f"MewCode has no {event} event")
            )
            continue
        if not isinstance(groups, list):
            problems.append(RuleProblem(file=file, rule=event, reason="must be a list"))
            continue
        for g, group in enumerate(groups, 1):
            label = f"{event}[{g}]"
            try:
                if not isinstance(group, Mapping):
                    raise RuleError("must be a mapping {matcher, hooks}")
                pattern = _pattern(group.get("matcher"))
                commands = group.get("hooks")
                if not isinstance(commands, list):
                    raise RuleError("needs a 'hooks' list")
            except RuleError as exc:
                problems.append(RuleProblem(file=file, rule=label, reason=str(exc)))
                continue
            for h, entry in enumerate(commands, 1):
                where = f"{event}[{g}.{h}]"
                try:
                    rules.append(
                        _rule(entry, event, f"{file}:{where}", pattern, group, source, scope)
                    )
                except RuleError as exc:
                    problems.append(RuleProblem(file=file, rule=where, reason=str(exc)))
    return rules, problems


def _rule(
    entry: Any,
    event: HookEvent,
    name: str,
    pattern: re.Pattern[str] | None,
    group: Mapping[str, Any],
    source: Path,
    scope: Scope,
) -> HookRule:
    if not isinstance(entry, Mapping):
        raise RuleError("must be a mapping {type, command}")
    kind = entry.get("type", "command")
    if kind != "command":
        raise RuleError(f"hook type {kind!r} is not supported (only 'command')")
    if entry.get("if") is not None:
        # a narrower condition MewCode cannot evaluate: running it more widely would be wrong
        raise RuleError(f"the 'if' condition {entry['if']!r} is not supported")
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise RuleError("needs a non-empty 'command'")
    timeout = parse_duration(entry["timeout"]) if entry.get("timeout") is not None else None
    field = MATCHED_FIELD.get(event, "")
    return HookRule(
        name=name,
        event=event,
        action=Action(type="shell", command=command),
        scope=scope,
        source=source,
        pattern=pattern if field else None,
        pattern_field=field,
        matcher_shown=str(group.get("matcher") or "*") if field else "*",
        timeout=timeout if timeout is not None else 60.0,
        run_async=bool(entry.get("async")) and event not in BLOCKING_EVENTS,
        claude=True,
    )
