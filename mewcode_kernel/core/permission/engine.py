"""The permission engine: a pure function from (request, rules, mode) to a verdict.

``decide`` goes through these layers; the first that decides wins:

1. ``plan``: in plan mode anything that is not read-only is denied.
2. ``input``: arguments that cannot be checked (a path that is not a string,
   a command the analyser cannot read, a glob climbing out with ``..``): ask.
3. ``catastrophic``: a ``bash`` command on the built-in list: deny.
4. ``deny-rule``: a deny rule matching the call (any spelling of any path;
   any part of a command, including ``$(...)``, ``sudo``, ``xargs``): deny.
5. ``sandbox``: asks that no rule and no mode lifts: a write outside the
   project root and the additional directories, a suspicious name, a
   hard-linked or special write target, a shell redirection outside the
   root, a search over paths that a Read deny or ask rule covers.
6. ``ask-rule``: ask.
7. ``allow-rule``: an allow rule covering the whole call (every path; every
   part of a compound command, none of it opaque): allow.
8. ``protected``: writes to MewCode/Claude settings, hooks or ``.git``: ask.
9. ``mode``: reads inside the allowed directories are allowed, reads outside
   ask; edits inside are allowed in ``acceptEdits``, ``bypassPermissions``
   and ``dontAsk``; commands and other tools are allowed in
   ``bypassPermissions`` and ``dontAsk``; everything else asks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..agent.gate import Decision
from ..messages import ToolUseBlock
from ..tools.base import Tool
from .matcher import Matcher, Not
from .rules import Behavior, Rule, RuleSet, path_rule_prefix
from .sandbox import ResolvedPath, Sandbox

__all__ = [
    "MODES",
    "Category",
    "Layer",
    "Mode",
    "Outcome",
    "PermissionRequest",
    "Verdict",
    "categorize",
    "decide",
    "parse_mode",
]

Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
MODES: tuple[Mode, ...] = get_args(Mode)
Category = Literal["read", "edit", "exec", "other"]
Outcome = Literal["allow", "deny", "ask"]
Layer = Literal[
    "plan", "input", "catastrophic", "deny-rule", "sandbox", "ask-rule", "allow-rule",
    "protected", "mode",
]  # fmt: skip

_PATH_ARGS = {"read_file": ("path",), "write_file": ("path",), "edit_file": ("path",)}
_SEARCH_TOOLS = frozenset({"glob", "grep"})
_PROTECTED_DIRS = frozenset({".git", ".mewcode", ".claude"})
_PROTECTED_FILES = frozenset({".mewcode.yaml", ".mcp.json", ".envrc"})
_CLIMBS = re.compile(r"(?:^|[/{,])\.\.(?:$|[/},])")
_LENIENT: frozenset[Mode] = frozenset({"bypassPermissions", "dontAsk"})


def parse_mode(value: str) -> Mode:
    """``value`` as a mode; raises ``ValueError`` naming the valid ones."""
    if value not in MODES:
        raise ValueError(f"unknown permission mode {value!r}; expected one of {', '.join(MODES)}")
    return value  # type: ignore[return-value]


def categorize(tool: Tool) -> Category:
    """``read`` / ``edit`` / ``exec`` / ``other`` from the tool's flags.

    MCP tools are read-only only when the server annotates them
    ``readOnlyHint: true``; otherwise they count as command execution.
    """
    if tool.name.startswith("mcp__"):
        return "read" if tool.annotations.get("readOnlyHint") is True else "exec"
    if tool.read_only:
        return "read"
    return "other" if tool.kind == "read" else tool.kind


@dataclass(frozen=True, kw_only=True, slots=True)
class PermissionRequest:
    """What the engine needs to know about one tool call."""

    tool: str
    input: Mapping[str, Any]
    category: Category
    path_args: tuple[str, ...] = ()
    primary_arg: str | None = None

    @classmethod
    def from_call(cls, call: ToolUseBlock, tool: Tool) -> PermissionRequest:
        """The request for ``call`` of ``tool``."""
        props = tool.input_schema.get("properties") or {}
        required = tool.input_schema.get("required") or list(props)
        primary = {"Agent": "subagent_type", "load_skill": "name"}.get(tool.name)
        return cls(
            tool=tool.name,
            input=dict(call.input),
            category=categorize(tool),
            path_args=tool.path_args or _PATH_ARGS.get(tool.name, ()),
            primary_arg=primary or (required[0] if required else None),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class Verdict:
    """The engine's answer: the outcome, why, and which layer or rules decided."""

    outcome: Outcome
    reason: str
    layer: Layer
    rules: tuple[Rule, ...] = ()

    @property
    def rule(self) -> Rule | None:
        return self.rules[0] if self.rules else None

    @property
    def decided_by(self) -> str:
        """The deciding rule(s) with their sources, or the layer's name."""
        if not self.rules:
            return self.layer
        shown = ", ".join(f"{r.text} ({r.source.label})" for r in self.rules[:3])
        more = f" and {len(self.rules) - 3} more" if len(self.rules) > 3 else ""
        if self.layer.endswith("-rule"):
            return f"{self.rules[0].behavior} rule {shown}{more}"
        return f"{self.layer}: {shown}{more}"

    def to_decision(self) -> Decision:
        return Decision(
            outcome=self.outcome,
            reason=self.reason,
            decided_by=self.decided_by,
            personal=self.outcome == "ask" and self.layer == "sandbox",
        )


@dataclass(frozen=True, slots=True)
class _Target:
    resolved: ResolvedPath
    write: bool
    search: bool


def matches_for(
    matcher: Matcher, primary: str, variants: tuple[str, ...], behavior: Behavior
) -> bool:
    """Whether ``matcher`` holds. Deny and ask rules match any spelling; an
    allow rule must match the real one, and a negated allow rule must fail
    to match every spelling."""
    if behavior != "allow":
        return any(matcher.matches(v) for v in (primary, *variants))
    if isinstance(matcher, Not):
        return not any(matcher.inner.matches(v) for v in (primary, *variants))
    return matcher.matches(primary)


def _rules_for(rules: RuleSet, behavior: Behavior, req: PermissionRequest) -> list[Rule]:
    found = [r for r in rules.of(behavior) if r.applies_to(req.tool)]
    if req.tool == "edit_file" and behavior != "allow":  # editing reads the file too
        found += [r for r in rules.of(behavior) if r.applies_to("read_file") and r not in found]
    return found


def _file_rule_hits(rule: Rule, targets: list[_Target], sandbox: Sandbox) -> bool:
    if rule.specifier is None:
        return True
    if rule.family not in ("read", "edit"):
        return False
    if not targets:
        return False
    m = rule.path_matcher(sandbox.root, sandbox.home, ignore_case=sandbox.case_insensitive)
    hits = (matches_for(m, t.resolved.path, t.resolved.variants, rule.behavior) for t in targets)
    return any(hits) if rule.behavior != "allow" else all(hits)


def _text_rule_hits(rule: Rule, req: PermissionRequest) -> bool:
    if rule.specifier is None:
        return True
    value = req.input.get(req.primary_arg) if req.primary_arg else None
    if not isinstance(value, str):
        return False
    if rule.family == "skill":
        m = rule.command_matcher()
        short = rule.specifier.rpartition(":")[2]
        return m.matches(value) or (":" in rule.specifier and short == value)
    return matches_for(rule.text_matcher(), value, (), rule.behavior)


def _hits(rule: Rule, req: PermissionRequest, targets: list[_Target], sandbox: Sandbox) -> bool:
    if rule.family in ("read", "edit") and (req.path_args or req.tool in _SEARCH_TOOLS):
        return _file_rule_hits(rule, targets, sandbox)
    return _text_rule_hits(rule, req)


def _literal_prefix(pattern: str) -> str:
    names = pattern.split("/")
    cut = next((i for i, n in enumerate(names) if any(c in n for c in "*?[{")), len(names))
    return "/".join(names[:cut]) or "/"


def _targets(req: PermissionRequest, sandbox: Sandbox) -> tuple[list[_Target], str | None]:
    write = req.category != "read"
    search = req.tool in _SEARCH_TOOLS
    names = req.path_args or (("path",) if search else ())
    targets: list[_Target] = []
    for name in names:
        value = req.input.get(name)
        if value is None and search:
            value = "."
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            return [], f"the {name!r} argument is not a usable path"
        targets.append(_Target(sandbox.resolve(value), write, search))
    pattern = req.input.get("pattern" if req.tool == "glob" else "glob") if search else None
    if isinstance(pattern, str):
        if _CLIMBS.search(pattern):
            return targets, f"the pattern {pattern!r} climbs out with '..'"
        if pattern.startswith(("/", "~")):
            extra = _Target(sandbox.resolve(_literal_prefix(pattern)), write, True)
            # glob searches from an absolute pattern's own base; grep's filter narrows its path
            targets = [extra] if req.tool == "glob" else [*targets, extra]
    return targets, None


def _hard_ask(t: _Target) -> str | None:
    r = t.resolved
    if r.suspicious:
        return f"{r.raw}: {r.suspicious}"
    if not t.write:
        return None
    if not r.inside:
        return f"{r.path} is outside the project root and the additional directories"
    if r.hard_link:
        return f"{r.path} is a hard link; the same file may live elsewhere"
    if r.kind == "other":
        return f"{r.path} is not a regular file"
    return None


def is_protected(resolved: ResolvedPath, *, ignore_case: bool = False) -> bool:
    """Whether writing ``resolved`` could change MewCode's or Claude's settings, hooks or git."""
    if resolved.rel is None:
        return False
    names = resolved.rel.split("/")
    if ignore_case:
        names = [n.casefold() for n in names]
    return (
        bool(_PROTECTED_DIRS.intersection(names[:-1]))
        or names[-1] in _PROTECTED_FILES | _PROTECTED_DIRS
    )


def _search_covers_rule(t: _Target, rule: Rule, sandbox: Sandbox) -> bool:
    """Whether searching the directory ``t`` would read paths ``rule`` covers."""
    if rule.family != "read":
        return False
    prefix = path_rule_prefix(rule, sandbox.root, sandbox.home)
    d = t.resolved.path.rstrip("/") or "/"
    below = prefix.startswith(d.rstrip("/") + "/") or d.startswith(prefix.rstrip("/") + "/")
    return prefix == d or below or d == "/"


def decide(request: PermissionRequest, rules: RuleSet, mode: Mode, *, sandbox: Sandbox) -> Verdict:
    """Decide one tool call. Pure apart from reading the file system to resolve paths."""
    if mode == "plan" and request.category != "read":
        return Verdict(
            outcome="deny", reason=f"plan mode: {request.tool} is not read-only", layer="plan"
        )
    if request.tool == "bash":
        from ._bash import decide_bash

        return decide_bash(request, rules, mode, sandbox=sandbox)
    targets, problem = _targets(request, sandbox)
    if problem:
        return Verdict(outcome="ask", reason=problem, layer="input")
    for rule in _rules_for(rules, "deny", request):
        if _hits(rule, request, targets, sandbox):
            return Verdict(
                outcome="deny", reason=f"denied by {rule.text}", layer="deny-rule", rules=(rule,)
            )
    for t in targets:
        reason = _hard_ask(t)
        if reason:
            return Verdict(outcome="ask", reason=reason, layer="sandbox")
    for t in (t for t in targets if t.search and t.resolved.kind != "file"):
        for rule in rules.of("deny") + rules.of("ask"):
            if rule.applies_to("read_file") and _search_covers_rule(t, rule, sandbox):
                why = f"searching {t.resolved.path} could read paths covered by {rule.text}"
                return Verdict(outcome="ask", reason=why, layer="sandbox", rules=(rule,))
    for rule in _rules_for(rules, "ask", request):
        if _hits(rule, request, targets, sandbox):
            return Verdict(
                outcome="ask", reason=f"{rule.text} asks", layer="ask-rule", rules=(rule,)
            )
    for rule in _rules_for(rules, "allow", request):
        if _hits(rule, request, targets, sandbox):
            return Verdict(
                outcome="allow", reason=f"allowed by {rule.text}", layer="allow-rule", rules=(rule,)
            )
    return _by_mode(request, targets, mode, sandbox)


def _by_mode(
    req: PermissionRequest, targets: list[_Target], mode: Mode, sandbox: Sandbox
) -> Verdict:
    outside = next((t for t in targets if not t.resolved.inside), None)
    if req.category == "read":
        if outside is not None:
            return Verdict(
                outcome="ask",
                reason=f"{outside.resolved.path} is outside the project root",
                layer="sandbox",
            )
        return Verdict(outcome="allow", reason="read-only inside the project root", layer="mode")
    ci = sandbox.case_insensitive
    guarded = next(
        (t for t in targets if t.write and is_protected(t.resolved, ignore_case=ci)), None
    )
    if guarded is not None:
        why = (
            f"{guarded.resolved.rel} holds settings, hooks or git data; changes need your approval"
        )
        return Verdict(outcome="ask", reason=why, layer="protected")
    if req.category == "edit" and mode == "acceptEdits" and targets:
        return Verdict(
            outcome="allow", reason="acceptEdits: edit inside the project root", layer="mode"
        )
    if mode in _LENIENT:
        return Verdict(outcome="allow", reason=f"{mode} mode", layer="mode")
    what = {
        "edit": "changes files",
        "exec": "runs commands or an external tool",
        "other": "is not read-only",
    }.get(req.category, "is not read-only")
    return Verdict(outcome="ask", reason=f"{req.tool} {what} ({mode} mode)", layer="mode")
