"""The shell-command branch of ``engine.decide`` (same layers, applied to a
command line): tools whose rule family is ``command``.

Besides the command text, the paths a command names (its arguments, the
values of ``--opt=value``) are checked: one a ``Read`` deny rule covers is
denied; one outside the project, or one that only a later ``cd`` makes
known, keeps pattern rules from allowing the command. Without the OS
sandbox (``request.sandboxed``), an argument that may reach a denied path
(a wildcard, a directory holding one, an expansion) asks, and
``bypassPermissions`` asks for what MewCode cannot read from the text
(``analysis.opaque``, paths outside, expanding arguments), since nothing
else would keep it inside the project.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from ...fs import ResolvedPath, Workspace
from ..decision import Decision
from ..matcher import Matcher, Not
from ..modes import LENIENT, Mode
from ..request import PermissionRequest
from ..rules import Rule, RuleSet, path_rule_prefix
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


def _named_paths(
    analysis: CommandAnalysis, workspace: Workspace
) -> Iterator[tuple[CommandPart, str, ResolvedPath | None]]:
    """``(part, operand, resolved or None when its directory is unknown)``."""
    for part in analysis.all_parts:
        bases = _base_dirs(part, workspace)
        for operand in part.operands:
            if operand.startswith(("/", "~")):
                yield part, operand, workspace.resolve(operand)
            elif bases is None:
                yield part, operand, None
            else:
                for base in bases:
                    yield part, operand, workspace.resolve(operand, base=base)


def _looks_like_path(operand: str) -> bool:
    if "://" in operand:
        return False
    return operand.startswith(("/", ".", "~")) or "/" in operand


def _outside(
    analysis: CommandAnalysis,
    named: list[tuple[CommandPart, str, ResolvedPath | None]],
    io: list[tuple[bool, ResolvedPath | None, str]],
) -> list[str]:
    """Why the command may reach outside the allowed directories."""
    found: list[str] = []
    for _, operand, resolved in named:
        if not _looks_like_path(operand) or (resolved is not None and resolved.inside):
            continue
        if resolved is not None and is_safe_redirect_target(resolved.path):
            continue
        where = (
            f"{operand!r} after a cd MewCode cannot follow" if resolved is None else resolved.path
        )
        found.append(f"the path {where} outside the project")
    for write, resolved, _ in io:
        if not write and resolved is not None and not resolved.inside:
            found.append(f"reading {resolved.path} outside the project")
    return list(dict.fromkeys(found))[:3]


def _prefix_covers(prefix: str, path: str) -> bool:
    """Whether the directory ``path`` holds (or is) ``prefix``."""
    d = path.rstrip("/") or "/"
    return prefix == d or prefix.startswith(d + "/") or d == "/"


def _glob_may_reach(glob: str, prefix: str) -> bool:
    """Whether the absolute wildcard ``glob`` may name ``prefix`` or a path
    inside or above it."""
    import fnmatch

    parts = [p for p in glob.split("/") if p]
    target = [p for p in prefix.split("/") if p]
    for i, comp in enumerate(parts):
        if i >= len(target) or comp == "**" or "**" in comp:
            return True
        if not fnmatch.fnmatchcase(target[i], comp):
            return False
    return True


def _unseen_denied(
    analysis: CommandAnalysis,
    named: list[tuple[CommandPart, str, ResolvedPath | None]],
    read_denies: list[Rule],
    workspace: Workspace,
) -> tuple[str, Rule] | None:
    """A way the command may read what a Read deny rule covers that the text
    does not show (only the OS sandbox can hold those)."""
    if not read_denies:
        return None
    rule = read_denies[0]
    dynamic = next((p for p in analysis.all_parts if p.dynamic_args), None)
    if dynamic is not None:
        return f"an argument of `{dynamic.text[:60]}` is only known when it runs", rule
    unknown = next((op for _, op, resolved in named if resolved is None), None)
    if unknown is not None:
        return f"{unknown!r} lies where a cd MewCode cannot follow leads", rule
    globs = [
        posixpath.normpath(g if g.startswith("/") else posixpath.join(base, g))
        for part in analysis.all_parts
        for base in (_base_dirs(part, workspace) or [workspace.root])
        for g in part.globbed
    ]
    dirs = [(op, r.path) for _, op, r in named if r is not None and r.kind == "dir"]
    if not globs and not dirs:
        return None
    for rule in read_denies:
        prefix = path_rule_prefix(rule, workspace.root, workspace.home)
        for glob in globs:
            if _glob_may_reach(glob, prefix):
                return f"the wildcard {glob!r} may match it", rule
        for operand, path in dirs:
            if _prefix_covers(prefix, path):
                return f"the directory {operand!r} holds paths it covers", rule
    return None


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
    named = list(_named_paths(analysis, workspace))
    read_denies = _file_rules(rules, "deny", False, request)
    for _, operand, resolved in named:
        for rule in read_denies if resolved is not None else ():
            if file_rule_hits(rule, [Target(resolved, False, False)], workspace, request.families):  # type: ignore[arg-type]
                return Decision(
                    outcome="deny",
                    reason=f"denied by {rule.text}: the command names {operand}",
                    layer="deny-rule",
                    rules=(rule,),
                )
    for write, resolved, problem in io:
        reason = problem or (hard_ask(Target(resolved, write, False)) if resolved else None)
        if reason:
            return Decision(outcome="ask", reason=f"redirection: {reason}", layer="sandbox")
    unseen = None if request.sandboxed else _unseen_denied(analysis, named, read_denies, workspace)
    if unseen is not None:
        why, rule = unseen
        return Decision(
            outcome="ask",
            reason=f"the command may read what {rule.text} denies: {why} (no OS sandbox hides it)",
            layer="sandbox",
            rules=(rule,),
        )
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
    outside = _outside(analysis, named, io)
    return _allow_or_mode(analysis, by, io, rules, mode, workspace, request, outside)


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
    outside: list[str],
) -> Decision:
    exact = next((r for r in by["allow"] if _whole_exact(r, analysis.command)), None)
    if exact is not None:
        return Decision(
            outcome="allow", reason=f"allowed by {exact.text}", layer="allow-rule", rules=(exact,)
        )
    io_problem, guarded = _redirects_ok(io, rules, mode, workspace, req)
    strict = bool(by["deny"] or by["ask"])
    unreadable = [*analysis.opaque, *outside]
    if unreadable:
        why = f"the command uses {', '.join(unreadable)}, which no pattern rule can allow"
        broad = next((r for r in by["allow"] if r.specifier is None), None)
        if broad is not None and not strict and io_problem is None:
            return Decision(
                outcome="allow",
                reason=f"allowed by {broad.text}",
                layer="allow-rule",
                rules=(broad,),
            )
        if mode in LENIENT and not strict and not guarded:
            if req.sandboxed:
                return Decision(
                    outcome="allow", reason=f"{mode} mode, inside the OS sandbox", layer="mode"
                )
            return Decision(
                outcome="ask",
                reason=f"{why}; without the OS sandbox nothing keeps it inside the project",
                layer="mode",
            )
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
        dynamic = next((p for p in analysis.all_parts if p.dynamic_args), None)
        if dynamic is not None and not req.sandboxed:
            return Decision(
                outcome="ask",
                reason=f"an argument of `{dynamic.text[:80]}` is only known when it runs; "
                "without the OS sandbox nothing keeps it inside the project",
                layer="mode",
            )
        suffix = ", inside the OS sandbox" if req.sandboxed else ""
        return Decision(outcome="allow", reason=f"{mode} mode{suffix}", layer="mode")
    if uncovered:
        shown = ", ".join(f"`{u[:80]}`" for u in uncovered[:3])
        return Decision(outcome="ask", reason=f"no rule allows {shown} ({mode} mode)", layer="mode")
    return Decision(outcome="ask", reason=f"the command {io_problem} ({mode} mode)", layer="mode")
