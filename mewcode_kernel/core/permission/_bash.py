"""The ``bash`` branch of ``engine.decide`` (same layers, applied to a command)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from .commands import UNKNOWN_DIR, CommandAnalysis, CommandPart, analyze, is_safe_redirect_target
from .danger import catastrophic
from .engine import (
    _LENIENT,
    Mode,
    PermissionRequest,
    Verdict,
    _file_rule_hits,
    _hard_ask,
    _Target,
    is_protected,
)
from .matcher import Matcher, Not
from .rules import Rule, RuleSet
from .sandbox import ResolvedPath, Sandbox

__all__ = ["decide_bash", "harmless_part"]

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


def _base_dirs(part: CommandPart, sandbox: Sandbox) -> list[str] | None:
    """The absolute directories ``part`` may run in (``None``: unknown)."""
    if UNKNOWN_DIR in part.cwds:
        return None
    return [sandbox.resolve(c or ".").path for c in part.cwds]


def _redirects(
    analysis: CommandAnalysis, sandbox: Sandbox
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
            bases = _base_dirs(part, sandbox)
            if bases is None and not target.startswith(("/", "~")):
                yield (
                    redirect.write,
                    None,
                    f"the redirection to {target!r} follows a cd MewCode cannot follow",
                )
                continue
            for base in bases or [sandbox.root]:
                yield redirect.write, sandbox.resolve(target, base=base), ""


def harmless_part(part: CommandPart, sandbox: Sandbox) -> bool:
    """Harmless on its own: ``true``/``false``/``:``, or ``cd`` into an allowed directory."""
    if part.noop or (part.program in _TRIVIAL and len(part.argv) == 1 and not part.redirects):
        return True
    if part.program != "cd" or len(part.argv) != 2 or part.redirects:
        return False
    target = part.argv[1]
    if _DYNAMIC.intersection(target) or target.startswith("-"):
        return False
    bases = _base_dirs(part, sandbox)
    return bases is not None and all(sandbox.resolve(target, base=b).inside for b in bases)


def _file_rules(rules: RuleSet, behavior: str, write: bool) -> list[Rule]:
    tool = "write_file" if write else "read_file"
    return [r for r in rules.rules if r.behavior == behavior and r.applies_to(tool)]


def decide_bash(
    request: PermissionRequest, rules: RuleSet, mode: Mode, *, sandbox: Sandbox
) -> Verdict:
    """Decide a ``bash`` call (see ``engine`` for the layers)."""
    command = request.input.get("command")
    if not isinstance(command, str) or not command.strip():
        return Verdict(outcome="ask", reason="the command is missing or empty", layer="input")
    analysis = analyze(command)
    if analysis.unreadable:
        return Verdict(outcome="ask", reason="; ".join(analysis.unreadable), layer="input")
    danger = catastrophic(analysis, root=sandbox.root, home=sandbox.home)
    if danger:
        return Verdict(
            outcome="deny", reason=f"catastrophic command: {danger}", layer="catastrophic"
        )
    by = {b: [r for r in rules.of(b) if r.applies_to("bash")] for b in ("deny", "ask", "allow")}
    for rule in by["deny"]:
        if _command_hits(rule, analysis):
            return Verdict(
                outcome="deny", reason=f"denied by {rule.text}", layer="deny-rule", rules=(rule,)
            )
    io = list(_redirects(analysis, sandbox))
    for write, resolved, _ in io:
        for rule in _file_rules(rules, "deny", write) if resolved else ():
            if _file_rule_hits(rule, [_Target(resolved, write, False)], sandbox):  # type: ignore[arg-type]
                return Verdict(
                    outcome="deny",
                    reason=f"denied by {rule.text}",
                    layer="deny-rule",
                    rules=(rule,),
                )
    for write, resolved, problem in io:
        reason = problem or (_hard_ask(_Target(resolved, write, False)) if resolved else None)
        if reason:
            return Verdict(outcome="ask", reason=f"redirection: {reason}", layer="sandbox")
    for rule in by["ask"]:
        if _command_hits(rule, analysis):
            return Verdict(
                outcome="ask", reason=f"{rule.text} asks", layer="ask-rule", rules=(rule,)
            )
    for write, resolved, _ in io:
        for rule in _file_rules(rules, "ask", write) if resolved else ():
            if _file_rule_hits(rule, [_Target(resolved, write, False)], sandbox):  # type: ignore[arg-type]
                return Verdict(
                    outcome="ask", reason=f"{rule.text} asks", layer="ask-rule", rules=(rule,)
                )
    return _allow_or_mode(analysis, by, io, rules, mode, sandbox)


def _redirects_ok(
    io: list[tuple[bool, ResolvedPath | None, str]], rules: RuleSet, mode: Mode, sandbox: Sandbox
) -> tuple[str | None, bool]:
    """Why the command's redirections still need approval (``None``: they do not),
    and whether that is because they write protected paths."""
    ci = sandbox.case_insensitive
    for write, resolved, _ in io:
        assert resolved is not None
        target = _Target(resolved, write, False)
        allowed = any(
            _file_rule_hits(r, [target], sandbox) for r in _file_rules(rules, "allow", write)
        )
        if allowed:
            continue
        if write and is_protected(resolved, ignore_case=ci):
            return f"it writes {resolved.rel}, which holds settings, hooks or git data", True
        if write and mode not in ("acceptEdits", *_LENIENT):
            return f"it writes {resolved.rel or resolved.path}", False
        if not write and not resolved.inside and mode not in _LENIENT:
            return f"it reads {resolved.path}, outside the project root", False
    return None, False


def _allow_or_mode(
    analysis: CommandAnalysis,
    by: dict[str, list[Rule]],
    io: list[tuple[bool, ResolvedPath | None, str]],
    rules: RuleSet,
    mode: Mode,
    sandbox: Sandbox,
) -> Verdict:
    exact = next((r for r in by["allow"] if _whole_exact(r, analysis.command)), None)
    if exact is not None:
        return Verdict(
            outcome="allow", reason=f"allowed by {exact.text}", layer="allow-rule", rules=(exact,)
        )
    io_problem, guarded = _redirects_ok(io, rules, mode, sandbox)
    strict = bool(by["deny"] or by["ask"])
    if analysis.opaque:
        why = f"the command uses {', '.join(analysis.opaque)}, which no pattern rule can allow"
        broad = next((r for r in by["allow"] if r.specifier is None), None)
        if broad is not None and not strict and io_problem is None:
            return Verdict(
                outcome="allow",
                reason=f"allowed by {broad.text}",
                layer="allow-rule",
                rules=(broad,),
            )
        if mode in _LENIENT and not strict and not guarded:
            return Verdict(outcome="allow", reason=f"{mode} mode", layer="mode")
        if mode in _LENIENT:
            why += " (deny and ask rules for Bash cannot be checked inside it)" if strict else ""
        return Verdict(outcome="ask", reason=why, layer="protected" if guarded else "mode")
    covering: list[Rule] = []
    uncovered: list[str] = []
    for part in analysis.parts:
        if harmless_part(part, sandbox):
            continue
        rule = next((r for r in by["allow"] if _part_allowed(r, part)), None)
        if rule is None:
            uncovered.append(part.text or part.full_text)
        elif rule not in covering:
            covering.append(rule)
    if analysis.parts and not uncovered and io_problem is None:
        if covering:
            names = ", ".join(r.text for r in covering)
            return Verdict(
                outcome="allow",
                reason=f"allowed by {names}",
                layer="allow-rule",
                rules=tuple(covering),
            )
        return Verdict(
            outcome="allow", reason="only shell built-ins that change nothing", layer="mode"
        )
    if guarded:
        return Verdict(outcome="ask", reason=f"the command {io_problem}", layer="protected")
    if mode in _LENIENT:
        return Verdict(outcome="allow", reason=f"{mode} mode", layer="mode")
    if uncovered:
        shown = ", ".join(f"`{u[:80]}`" for u in uncovered[:3])
        return Verdict(outcome="ask", reason=f"no rule allows {shown} ({mode} mode)", layer="mode")
    return Verdict(outcome="ask", reason=f"the command {io_problem} ({mode} mode)", layer="mode")
