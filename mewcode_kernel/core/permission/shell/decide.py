"""The shell-command branch of ``engine.decide`` (same layers, applied to a
command line): tools whose rule family is ``command``."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from ...fs import ResolvedPath, Workspace
from ..decision import Decision
from ..matcher import Matcher, Not
from ..modes import LENIENT, Mode
from ..request import PermissionRequest
from ..rules import Rule, RuleSet
from ..targets import Target, file_rule_hits, hard_ask, is_protected
from .analysis import (
    UNKNOWN_DIR,
    CommandAnalysis,
    CommandPart,
    analyze,
    is_safe_redirect_target,
)
from .danger import catastrophic

__all__ = ["decide_command", "harmless_part"]

_TRIVIAL = frozenset({"true", "false", ":"})
_DYNAMIC = frozenset("$`*?[")


def _deny_candidates(part: CommandPart) -> list[str]:
    found = [part.text, part.canonical, part.full_text, part.full_canonical]
    if part.argv and "/" in part.argv[0]:
        found.append(" ".join([posixpath.basename(part.argv[0]), *part.canonical.split(" ")[1:]]))
    return [c for c in found if c]


def _allow_candidates(part: CommandPart) -> list[str]:
    found = [part.full_text, part.full_canonical]
    if not part.risky_env:
        found += [part.text, part.canonical]
    return [c for c in found if c]


def _normalised(command: str) -> str:
    text = command.strip()
    return text if ('"' in text or "'" in text) else " ".join(text.split())


def _whole_exact(rule: Rule, command: str) -> bool:
    """An exact rule (no wildcard) naming the whole command, operators and all."""
    spec = rule.specifier
    if spec is None:
        return False
    if spec.startswith("="):
        return spec[1:] == command.strip()
    if spec.startswith(("~", "!")) or "*" in spec:
        return False
    return spec == _normalised(command)


def _command_hits(rule: Rule, analysis: CommandAnalysis) -> bool:
    """Deny/ask semantics: the rule matches any part, in any spelling."""
    if rule.specifier is None or _whole_exact(rule, analysis.command):
        return True
    m = rule.command_matcher()
    return any(m.matches(c) for part in analysis.all_parts for c in _deny_candidates(part))


def _part_allowed(rule: Rule, part: CommandPart) -> bool:
    if rule.specifier is None:
        return True
    m: Matcher = rule.command_matcher()
    if isinstance(m, Not):
        return not any(m.inner.matches(c) for c in _deny_candidates(part))
    return any(m.matches(c) for c in _allow_candidates(part))


def _base_dirs(part: CommandPart, workspace: Workspace) -> list[str] | None:
    """The absolute directories ``part`` may run in (``None``: unknown)."""
    if UNKNOWN_DIR in part.cwds:
        return None
    return [workspace.resolve(c or ".").path for c in part.cwds]


def _redirects(
    analysis: CommandAnalysis, workspace: Workspace
) -> Iterator[tuple[bool, ResolvedPath | None, str]]:
    """``(write, resolved target or None, problem)`` for every file redirection."""
    for part in analysis.all_parts:
        for redirect in part.redirects:
            target = redirect.target
            if is_safe_redirect_target(target):
                continue
            if _DYNAMIC.intersection(target):
                yield (
                    redirect.write,
                    None,
                    f"the redirection target {target!r} is only known when it runs",
                )
                continue
            bases = _base_dirs(part, workspace)
            if bases is None and not target.startswith(("/", "~")):
                yield (
                    redirect.write,
                    None,
                    f"the redirection to {target!r} follows a cd MewCode cannot follow",
                )
                continue
            for base in bases or [workspace.root]:
                yield redirect.write, workspace.resolve(target, base=base), ""


def harmless_part(part: CommandPart, workspace: Workspace) -> bool:
    """Harmless on its own: ``true``/``false``/``:``, or ``cd`` into an allowed directory."""
    if part.noop or (part.program in _TRIVIAL and len(part.argv) == 1 and not part.redirects):
        return True
    if part.program != "cd" or len(part.argv) != 2 or part.redirects:
        return False
    target = part.argv[1]
    if _DYNAMIC.intersection(target) or target.startswith("-"):
        return False
    bases = _base_dirs(part, workspace)
    return bases is not None and all(workspace.resolve(target, base=b).inside for b in bases)


def _file_rules(rules: RuleSet, behavior: str, write: bool, req: PermissionRequest) -> list[Rule]:
    """The path rules that guard a redirection: Edit rules for writes, Read rules for reads."""
    family = "edit" if write else "read"
    return [
        r for r in rules.rules if r.behavior == behavior and r.family_in(req.families) == family
    ]


def decide_command(
    request: PermissionRequest, rules: RuleSet, mode: Mode, *, workspace: Workspace
) -> Decision:
    """Decide a shell-command call (see ``engine`` for the layers)."""
    command = request.subject
    if command is None or not command.strip():
        return Decision(outcome="ask", reason="the command is missing or empty", layer="input")
    analysis = analyze(command)
    if analysis.unreadable:
        return Decision(outcome="ask", reason="; ".join(analysis.unreadable), layer="input")
    danger = catastrophic(analysis, root=workspace.root, home=workspace.home)
    if danger:
        return Decision(
            outcome="deny", reason=f"catastrophic command: {danger}", layer="catastrophic"
        )
    by = {
        b: [r for r in rules.of(b) if r.covers(request.tool, request.names)]
        for b in ("deny", "ask", "allow")
    }
    for rule in by["deny"]:
        if _command_hits(rule, analysis):
            return Decision(
                outcome="deny", reason=f"denied by {rule.text}", layer="deny-rule", rules=(rule,)
            )
    io = list(_redirects(analysis, workspace))
    for write, resolved, _ in io:
        for rule in _file_rules(rules, "deny", write, request) if resolved else ():
            if file_rule_hits(rule, [Target(resolved, write, False)], workspace, request.families):  # type: ignore[arg-type]
                return Decision(
                    outcome="deny",
                    reason=f"denied by {rule.text}",
                    layer="deny-rule",
                    rules=(rule,),
                )
    for write, resolved, problem in io:
        reason = problem or (hard_ask(Target(resolved, write, False)) if resolved else None)
        if reason:
            return Decision(outcome="ask", reason=f"redirection: {reason}", layer="sandbox")
    for rule in by["ask"]:
        if _command_hits(rule, analysis):
            return Decision(
                outcome="ask", reason=f"{rule.text} asks", layer="ask-rule", rules=(rule,)
            )
    for write, resolved, _ in io:
        for rule in _file_rules(rules, "ask", write, request) if resolved else ():
            if file_rule_hits(rule, [Target(resolved, write, False)], workspace, request.families):  # type: ignore[arg-type]
                return Decision(
                    outcome="ask", reason=f"{rule.text} asks", layer="ask-rule", rules=(rule,)
                )
    return _allow_or_mode(analysis, by, io, rules, mode, workspace, request)


def _redirects_ok(
    io: list[tuple[bool, ResolvedPath | None, str]],
    rules: RuleSet,
    mode: Mode,
    workspace: Workspace,
    req: PermissionRequest,
) -> tuple[str | None, bool]:
    """Why the command's redirections still need approval (``None``: they do not),
    and whether that is because they write protected paths."""
    ci = workspace.case_insensitive
    for write, resolved, _ in io:
        assert resolved is not None
        target = Target(resolved, write, False)
        allowed = any(
            file_rule_hits(r, [target], workspace, req.families)
            for r in _file_rules(rules, "allow", write, req)
        )
        if allowed:
            continue
        if write and is_protected(resolved, ignore_case=ci):
            return f"it writes {resolved.rel}, which holds settings, hooks or git data", True
        if write and mode not in ("acceptEdits", *LENIENT):
            return f"it writes {resolved.rel or resolved.path}", False
        if not write and not resolved.inside and mode not in LENIENT:
            return f"it reads {resolved.path}, outside the project root", False
    return None, False


def _allow_or_mode(
    analysis: CommandAnalysis,
    by: dict[str, list[Rule]],
    io: list[tuple[bool, ResolvedPath | None, str]],
    rules: RuleSet,
    mode: Mode,
    workspace: Workspace,
    req: PermissionRequest,
) -> Decision:
    exact = next((r for r in by["allow"] if _whole_exact(r, analysis.command)), None)
    if exact is not None:
        return Decision(
            outcome="allow", reason=f"allowed by {exact.text}", layer="allow-rule", rules=(exact,)
        )
    io_problem, guarded = _redirects_ok(io, rules, mode, workspace, req)
    strict = bool(by["deny"] or by["ask"])
    if analysis.opaque:
        why = f"the command uses {', '.join(analysis.opaque)}, which no pattern rule can allow"
        broad = next((r for r in by["allow"] if r.specifier is None), None)
        if broad is not None and not strict and io_problem is None:
            return Decision(
                outcome="allow",
                reason=f"allowed by {broad.text}",
                layer="allow-rule",
                rules=(broad,),
            )
        if mode in LENIENT and not strict and not guarded:
            return Decision(outcome="allow", reason=f"{mode} mode", layer="mode")
        if mode in LENIENT:
            why += " (deny and ask rules for Bash cannot be checked inside it)" if strict else ""
        return Decision(outcome="ask", reason=why, layer="protected" if guarded else "mode")
    covering: list[Rule] = []
    uncovered: list[str] = []
    for part in analysis.parts:
        if harmless_part(part, workspace):
            continue
        rule = next((r for r in by["allow"] if _part_allowed(r, part)), None)
        if rule is None:
            uncovered.append(part.text or part.full_text)
        elif rule not in covering:
            covering.append(rule)
    if analysis.parts and not uncovered and io_problem is None:
        if covering:
            names = ", ".join(r.text for r in covering)
            return Decision(
                outcome="allow",
                reason=f"allowed by {names}",
                layer="allow-rule",
                rules=tuple(covering),
            )
        return Decision(
            outcome="allow", reason="only shell built-ins that change nothing", layer="mode"
        )
    if guarded:
        return Decision(outcome="ask", reason=f"the command {io_problem}", layer="protected")
    if mode in LENIENT:
        return Decision(outcome="allow", reason=f"{mode} mode", layer="mode")
    if uncovered:
        shown = ", ".join(f"`{u[:80]}`" for u in uncovered[:3])
        return Decision(outcome="ask", reason=f"no rule allows {shown} ({mode} mode)", layer="mode")
    return Decision(outcome="ask", reason=f"the command {io_problem} ({mode} mode)", layer="mode")
