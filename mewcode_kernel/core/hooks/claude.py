"""Hooks in Claude Code's format (``hooks`` in ``.claude/settings.json``,
``.claude/settings.local.json`` and the user's ``~/.claude/settings.json``),
as rules, so existing hooks run unchanged.

``{Event: [{matcher, hooks: [handler, ...]}]}``: the matcher is a regex
matched in full against the tool's name for the tool events (``Bash``,
``Edit|Write``; empty or ``*``: every tool), and against the field
``MATCHED_FIELD`` names for the others. Handlers: ``command`` (a shell
command, or ``args: [program, ...]`` run without a shell), ``mcp_tool``
(``server``, ``tool``, ``input``), ``agent`` and ``prompt`` (``prompt``: a
read-only subagent answering ``{ok, reason}``) and ``http`` (``url``,
``headers``);
``timeout`` in seconds, ``once``, ``async``, and ``if``, a permission rule
the call must match (``if_filter``). Events of Claude Code's that cannot
happen here (``NEVER_FIRING``) load and are listed as never firing; other
unknown events and handler types are reported and skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..lifecycle import BLOCKING_EVENTS, HOOK_EVENTS, NEVER_FIRING, HookEvent
from .if_filter import compile_if
from .rules import Action, HookRule, RuleError, RuleProblem, Scope, parse_duration

__all__ = ["MATCHED_FIELD", "claude_rules", "never_firing"]

#: the read-only subagent an ``agent`` handler runs (Claude Code's has Read, Grep, Glob)
AGENT_HANDLER_ROLE = "Explore"
_NAME = re.compile(r"[A-Za-z0-9_.-]+")

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
    "PermissionRequest": "tool_name",
    "PermissionDenied": "tool_name",
    "PostToolUseFailure": "tool_name",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "StopFailure": "error",
    "InstructionsLoaded": "load_reason",
    "ConfigChange": "source",
    "FileChanged": "file_name",
}


def never_firing(hooks: Any, file: str) -> list[str]:
    """One line per event of ``hooks`` that loads but can never fire here."""
    if not isinstance(hooks, Mapping):
        return []
    return [
        f"{file}: {event} hooks load, but MewCode never fires {event}"
        for event in hooks
        if event in NEVER_FIRING
    ]


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
        if event in NEVER_FIRING:
            continue  # accepted; ``never_firing`` lists it
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
    action = _action(entry, event)
    timeout = parse_duration(entry["timeout"]) if entry.get("timeout") is not None else None
    field = MATCHED_FIELD.get(event, "")
    when = compile_if(entry["if"], event, source) if entry.get("if") is not None else None
    return HookRule(
        name=name,
        event=event,
        action=action,
        scope=scope,
        source=source,
        pattern=pattern if field else None,
        pattern_field=field,
        matcher_shown=str(group.get("matcher") or "*") if field else "*",
        only_once=entry.get("once") is True,
        timeout=timeout if timeout is not None else 60.0,
        run_async=bool(entry.get("async")) and event not in BLOCKING_EVENTS,
        claude=True,
        when=when,
    )


def _action(entry: Mapping[str, Any], event: HookEvent) -> Action:
    kind = entry.get("type", "command")
    if kind == "command":
        args = entry.get("args")
        if args is not None:
            if (
                not isinstance(args, list)
                or not args
                or not all(isinstance(a, str) for a in args)
                or not args[0].strip()
            ):
                raise RuleError("'args' must be a non-empty list of strings (program first)")
            if entry.get("command") is not None:
                raise RuleError("give 'command' or 'args', not both")
            return Action(type="exec", argv=tuple(args))
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise RuleError("needs a non-empty 'command' (or 'args')")
        return Action(type="shell", command=command)
    if kind == "mcp_tool":
        server, tool = entry.get("server"), entry.get("tool")
        for key, value in (("server", server), ("tool", tool)):
            if not isinstance(value, str) or not _NAME.fullmatch(value):
                raise RuleError(f"an mcp_tool hook needs a '{key}' name, not {value!r}")
        arguments = entry.get("input", {})
        if not isinstance(arguments, Mapping):
            raise RuleError("an mcp_tool hook's 'input' must be a mapping")
        return Action(
            type="mcp_tool", server=str(server), tool=str(tool), arguments=dict(arguments)
        )
    if kind in ("agent", "prompt"):
        # a prompt hook (one model answer) runs as the agent hook does: the
        # read-only role answers, with tools it may or may not use
        prompt = entry.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise RuleError(f"{'an' if kind == 'agent' else 'a'} {kind} hook needs a 'prompt'")
        return Action(type="subagent", agent_name=AGENT_HANDLER_ROLE, prompt=prompt, verdict=True)
    if kind == "http":
        url = entry.get("url")
        if not isinstance(url, str) or not re.match(r"https?://", url):
            raise RuleError(f"an http hook needs a 'url' starting with http(s)://, not {url!r}")
        headers = entry.get("headers") or {}
        if not isinstance(headers, Mapping):
            raise RuleError("an http hook's 'headers' must be a mapping")
        return Action(
            type="http", url=url, headers=tuple((str(k), str(v)) for k, v in headers.items())
        )
    raise RuleError(f"hook type {kind!r} is not supported (command, mcp_tool, agent or http)")
