"""Hook rules: what one rule is, and compiling MewCode's ``hooks.yaml`` entries.

A rule names an event, an optional condition on the event's payload, one
action, and how it runs (``only_once``, ``async``, ``timeout``). A rule that
cannot be compiled is rejected on its own (``RuleProblem``: file, rule,
reason); the other rules of its file still load.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..lifecycle import BLOCKING_EVENTS, HOOK_EVENTS, HookEvent
from ..permission.matcher import Matcher, MatcherError, compile_match_spec
from ..permission.rules import Rule
from .template import BodyTemplate, TemplateError, as_text

__all__ = [
    "DEFAULT_TIMEOUT",
    "Action",
    "Atom",
    "Condition",
    "HookRule",
    "RuleProblem",
    "Scope",
    "compile_rule",
    "get_by_path",
    "parse_duration",
]

DEFAULT_TIMEOUT = 30.0
#: The ``rule`` of a problem with a whole file.
FILE = "(file)"
Scope = Literal["project", "user"]
ActionType = Literal["shell", "exec", "prompt", "http", "subagent", "mcp_tool"]
_DURATION = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class RuleError(ValueError):
    """Why one rule is rejected."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleProblem:
    """A rejected rule: ``file``, the rule's name (or position) and why."""

    file: str
    rule: str
    reason: str

    def __str__(self) -> str:
        if self.rule == FILE:
            return f"{self.file} {self.reason}; its hooks were skipped"
        return f"{self.file}: hook {self.rule}: {self.reason}; skipped"


@dataclass(frozen=True, kw_only=True, slots=True)
class Atom:
    """``field`` (a dot path into the payload) matched by ``matcher``."""

    field: str
    matcher: Matcher
    shown: str

    def holds(self, payload: Mapping[str, Any]) -> bool:
        return self.matcher.matches(get_by_path(payload, self.field))


@dataclass(frozen=True, kw_only=True, slots=True)
class Condition:
    """``all_of`` (every atom) or ``any_of`` (at least one)."""

    mode: Literal["all_of", "any_of"]
    atoms: tuple[Atom, ...]

    def holds(self, payload: Mapping[str, Any]) -> bool:
        if not self.atoms:
            return True
        test = all if self.mode == "all_of" else any
        return test(a.holds(payload) for a in self.atoms)

    @property
    def shown(self) -> str:
        joiner = " and " if self.mode == "all_of" else " or "
        return joiner.join(a.shown for a in self.atoms)


@dataclass(frozen=True, kw_only=True, slots=True)
class Action:
    """What a rule does. ``command`` (shell), ``argv`` (exec: a program and
    its arguments, no shell), ``text`` (prompt), ``url`` / ``method`` /
    ``headers`` / ``body`` (http), ``agent_name`` / ``prompt`` (subagent;
    ``verdict``: the answer is Claude Code's ``{ok, reason}``), ``server`` /
    ``tool`` / ``arguments`` (mcp_tool: ``${path}`` holes filled from the
    payload)."""

    type: ActionType
    command: str = ""
    argv: tuple[str, ...] = ()
    text: str = ""
    url: str = ""
    method: str = "POST"
    headers: tuple[tuple[str, str], ...] = ()
    body: BodyTemplate | None = None
    agent_name: str = ""
    prompt: str = ""
    verdict: bool = False
    server: str = ""
    tool: str = ""
    arguments: Mapping[str, Any] | None = None

    @property
    def shown(self) -> str:
        what = {
            "shell": self.command,
            "exec": " ".join(self.argv),
            "prompt": self.text,
            "http": f"{self.method} {self.url}",
            "subagent": self.agent_name,
            "mcp_tool": f"mcp__{self.server}__{self.tool}",
        }[self.type]
        return f"{self.type}: {' '.join(what.split())}"


@dataclass(frozen=True, kw_only=True, slots=True)
class HookRule:
    """One compiled rule. ``pattern`` (Claude Code's ``matcher``): a regex the
    payload's ``pattern_field`` must match in full (for ``tool_name``, the
    tool's name or one of its Claude Code names); ``claude``: the payload is
    given in Claude Code's terms (tool names, ``file_path``)."""

    name: str
    event: HookEvent
    action: Action
    scope: Scope
    source: Path
    condition: Condition | None = None
    pattern: re.Pattern[str] | None = None
    pattern_field: str = ""
    matcher_shown: str = ""
    only_once: bool = False
    run_async: bool = False
    timeout: float = DEFAULT_TIMEOUT
    claude: bool = False
    #: Claude Code's ``if``: a permission rule (``Bash(rm *)``) the call must
    #: match, read by the permission engine itself (``if_filter``)
    when: Rule | None = None
    #: a project hook's scripts as trusted (path in the root, SHA-256): checked
    #: before each run, so a script edited after the approval never runs
    scripts: tuple[tuple[str, str], ...] = ()
    #: where ``scripts`` lie (``None``: the project root); a plugin's folder
    scripts_root: Path | None = None
    #: variables its command gets on top of the hook environment (a plugin's
    #: ``CLAUDE_PLUGIN_ROOT``: the shell expands it, so a folder name stays a name)
    env: tuple[tuple[str, str], ...] = ()

    @property
    def matcher(self) -> str:
        """The rule's condition in words, for ``/hooks``."""
        shown = self.matcher_shown or (self.condition.shown if self.condition is not None else "*")
        return f"{shown} if {self.when.text}" if self.when is not None else shown


def parse_duration(value: Any) -> float:
    """A Go-style duration (``"30s"``, ``"1m30s"``, ``"500ms"``) or a number of
    seconds; ``0`` means the default."""
    if isinstance(value, bool):
        raise RuleError(f"timeout {value!r} is not a duration")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d+(\.\d+)?", text):
            seconds = float(text)
        elif text and re.fullmatch(f"(?:{_DURATION.pattern})+", text):
            seconds = sum(float(n) * _UNIT[u] for n, u in _DURATION.findall(text))
        else:
            raise RuleError(f"timeout {value!r} is not a duration (e.g. 30s, 1m, 500ms)")
    else:
        raise RuleError(f"timeout {value!r} is not a duration")
    if seconds < 0:
        raise RuleError(f"timeout {value!r} is negative")
    return seconds or DEFAULT_TIMEOUT


def get_by_path(payload: Any, path: str) -> str:
    """The value at a dot path, as text (``as_text``); missing → ``""``."""
    value = payload
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return ""
        value = value[part]
    return as_text(value)


def _text(entry: Mapping[str, Any], key: str, what: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RuleError(f"{what} needs a non-empty '{key}'")
    return value


def _match(spec: Any, where: str) -> Matcher:
    if not isinstance(spec, Mapping):
        raise RuleError(f"{where}: 'match' must be a mapping {{type, value}}")
    kind = spec.get("type", "glob")
    if kind == "not":
        inner = spec.get("inner")
        if inner is None or inner == "" or inner == {}:
            raise RuleError(f"{where}: a 'not' match needs 'inner'")
        if isinstance(inner, Mapping):
            _match(inner, where)  # the inner match is checked like any other
    elif kind in ("exact", "regex", "glob"):
        value = spec.get("value")
        if not isinstance(value, str) or not value:
            raise RuleError(f"{where}: a {kind!r} match needs a non-empty 'value'")
        if kind == "regex":
            try:
                re.compile(value)
            except re.error as exc:
                raise RuleError(f"{where}: bad regex {value!r}: {exc}") from None
    else:
        raise RuleError(f"{where}: unknown match type {kind!r} (exact, regex, glob or not)")
    try:
        return compile_match_spec(spec)
    except MatcherError as exc:
        raise RuleError(f"{where}: {exc}") from None


def _shown_match(spec: Mapping[str, Any]) -> str:
    kind = spec.get("type", "glob")
    if kind == "not":
        inner = spec.get("inner")
        return "not " + (_shown_match(inner) if isinstance(inner, Mapping) else repr(inner))
    return f"{kind} `{spec.get('value')}`"


def _condition(spec: Any) -> Condition | None:
    if spec is None:
        return None
    if not isinstance(spec, Mapping):
        raise RuleError("'if' must be a mapping with all_of or any_of")
    modes = [m for m in ("all_of", "any_of") if m in spec]
    if len(modes) != 1:
        raise RuleError("'if' needs exactly one of all_of and any_of")
    mode = modes[0]
    entries = spec[mode]
    if not isinstance(entries, list):
        raise RuleError(f"'{mode}' must be a list of {{field, match}}")
    atoms = []
    for i, entry in enumerate(entries, 1):
        where = f"condition {i}"
        if not isinstance(entry, Mapping):
            raise RuleError(f"{where} must be a mapping {{field, match}}")
        path = entry.get("field")
        if not isinstance(path, str) or not path.strip():
            raise RuleError(f"{where} has an empty 'field'")
        spec_i = entry.get("match")
        matcher = _match(spec_i, where)
        atoms.append(Atom(field=path, matcher=matcher, shown=f"{path} {_shown_match(spec_i)}"))
    return Condition(mode=mode, atoms=tuple(atoms))  # type: ignore[arg-type]


def _action(spec: Any) -> Action:
    if not isinstance(spec, Mapping):
        raise RuleError("'action' must be a mapping with a 'type'")
    kind = spec.get("type")
    if kind == "shell":
        return Action(type="shell", command=_text(spec, "command", "a shell action"))
    if kind == "prompt":
        return Action(type="prompt", text=_text(spec, "text", "a prompt action"))
    if kind == "http":
        url = _text(spec, "url", "an http action")
        if not re.match(r"https?://", url):
            raise RuleError(f"an http action's url must start with http:// or https://: {url!r}")
        method = str(spec.get("method") or "POST").upper()
        headers = spec.get("headers") or {}
        if not isinstance(headers, Mapping):
            raise RuleError("an http action's 'headers' must be a mapping")
        body = spec.get("body")
        template = None
        if body:
            if not isinstance(body, str):
                raise RuleError("an http action's 'body' must be a string template")
            try:
                template = BodyTemplate.parse(body)
            except TemplateError as exc:
                raise RuleError(f"an http action's body: {exc}") from None
        return Action(
            type="http",
            url=url,
            method=method,
            headers=tuple((str(k), str(v)) for k, v in headers.items()),
            body=template,
        )
    if kind == "subagent":
        return Action(
            type="subagent",
            agent_name=_text(spec, "agent_name", "a subagent action"),
            prompt=_text(spec, "prompt", "a subagent action"),
        )
    raise RuleError(f"unknown action type {kind!r} (shell, prompt, http or subagent)")


def compile_rule(entry: Any, *, index: int, scope: Scope, source: Path) -> HookRule:
    """One ``hooks.yaml`` entry as a rule; raises ``RuleError`` (message: why)."""
    if not isinstance(entry, Mapping):
        raise RuleError("a hook must be a mapping")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RuleError("a hook needs a non-empty 'name'")
    event = entry.get("event")
    if event not in HOOK_EVENTS:
        raise RuleError(f"unknown event {event!r} (one of {', '.join(HOOK_EVENTS)})")
    if "action" not in entry:
        raise RuleError("a hook needs an 'action'")
    action = _action(entry["action"])
    condition = _condition(entry.get("if"))
    run_async = bool(entry.get("async", False))
    if run_async and event in BLOCKING_EVENTS:
        raise RuleError(f"'async' cannot be used on {event}, which can block")
    timeout = (
        parse_duration(entry["timeout"]) if entry.get("timeout") is not None else DEFAULT_TIMEOUT
    )
    return HookRule(
        name=name.strip(),
        event=event,
        action=action,
        scope=scope,
        source=source,
        condition=condition,
        only_once=bool(entry.get("only_once", False)),
        run_async=run_async,
        timeout=timeout,
    )


def rule_label(entry: Any, index: int) -> str:
    """How a (maybe broken) entry is named in a problem."""
    name = entry.get("name") if isinstance(entry, Mapping) else None
    return repr(name) if isinstance(name, str) and name.strip() else f"#{index}"
