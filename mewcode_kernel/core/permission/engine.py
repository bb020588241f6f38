"""The permission engine: a pure function from (request, rules, mode) to a decision.

``decide`` goes through these layers; the first that decides wins:

1. ``plan``: in plan mode anything that is not read-only is denied.
2. ``input``: arguments that cannot be checked (a path that is not a string,
   a command the analyser cannot read, a glob climbing out with ``..``): ask.
3. ``catastrophic``: a shell command on the built-in list: deny.
   (Python code, family ``python``, goes through ``python_code`` instead:
   deny, ask and allow rules over its statements, then the mode.)
4. ``deny-rule``: a deny rule matching the call (any spelling of any path;
   any part of a command, including ``$(...)``, ``sudo``, ``xargs``): deny.
5. ``sandbox``: asks that no rule and no mode lifts: a write outside the
   project root and the additional directories, a suspicious name, a
   hard-linked file (read or written) or special write target, a shell
   redirection outside the root, a search over paths that a Read deny or
   ask rule covers, a deny rule that could not be read (it fails closed:
   whatever it may cover asks).
6. ``ask-rule``: ask.
7. ``allow-rule``: an allow rule covering the whole call (every path; every
   part of a compound command, none of it opaque): allow.
8. ``protected``: writes to MewCode/Claude settings, hooks or ``.git``: ask.
9. ``mode``: a tool whose metadata says ``default_allow`` is allowed; reads inside the allowed directories are allowed, reads outside
   ask; edits inside are allowed in ``acceptEdits`` and
   ``bypassPermissions``; commands and other tools are allowed in
   ``bypassPermissions``; everything else asks.

``dontAsk`` decides as ``default`` and then denies whatever would ask, so
nothing (not even a headless "allow" policy) can turn its asks into allows.
Which rules cover a call, and how their specifiers read, comes from the
tool's metadata (``PermissionRequest``): the engine names no tool.
"""

from __future__ import annotations

from ..fs import Workspace
from .decision import Decision
from .modes import LENIENT, Mode
from .python_code import decide_python
from .request import PermissionRequest
from .rules import Behavior, Rule, RuleSet
from .shell.analysis import analyze
from .shell.decide import decide_command
from .shell.readonly import writes_possibly
from .targets import (
    Target,
    file_rule_hits,
    hard_ask,
    is_protected,
    matches_for,
    search_covers_rule,
    targets_of,
)

__all__ = ["decide"]


def decide(
    request: PermissionRequest,
    rules: RuleSet,
    mode: Mode,
    *,
    workspace: Workspace,
    read_only: bool = False,
) -> Decision:
    """Decide one tool call. Pure apart from reading the file system to resolve paths."""
    if read_only:
        why = _may_write(request)
        if why is not None:
            return Decision(outcome="deny", reason=f"read-only role: {why}", layer="read-only")
    if mode == "dontAsk":
        decision = _fail_closed(request, rules, _decide(request, rules, "default", workspace))
        if decision.outcome != "ask":
            return decision
        return Decision(
            outcome="deny",
            reason=f"dontAsk mode never asks: {decision.reason}",
            layer=decision.layer,
            rules=decision.rules,
        )
    return _fail_closed(request, rules, _decide(request, rules, mode, workspace))


def _fail_closed(request: PermissionRequest, rules: RuleSet, decision: Decision) -> Decision:
    """A deny rule that could not be read turns what it may cover into a
    person's ask (a deny stays a deny)."""
    if decision.outcome == "deny" or decision.personal or not rules.broken:
        return decision
    for broken in rules.broken:
        if broken.covers(request.tool, request.names, request.family, request.reads_paths):
            return Decision(outcome="ask", reason=broken.reason, layer="sandbox")
    return decision


def _may_write(request: PermissionRequest) -> str | None:
    if request.category == "read":
        return None
    if request.family == "command":
        if request.subject is None or not request.subject.strip():
            return "the command is missing"
        # a first, clear refusal; with the OS sandbox the role's commands also run
        # with the file system read-only, so what this reading misses cannot write
        return writes_possibly(analyze(request.subject))
    if request.family == "python":
        return "code run in the notebook may change anything"
    return f"{request.tool} is not read-only"


def _decide(
    request: PermissionRequest, rules: RuleSet, mode: Mode, workspace: Workspace
) -> Decision:
    if mode == "plan" and request.category != "read":
        return Decision(
            outcome="deny", reason=f"plan mode: {request.tool} is not read-only", layer="plan"
        )
    if request.family == "command":
        return decide_command(request, rules, mode, workspace=workspace)
    if request.family == "python":
        return decide_python(request, rules, mode)
    targets, problem = targets_of(request, workspace)
    if problem:
        return Decision(outcome="ask", reason=problem, layer="input")
    for rule in _rules_for(rules, "deny", request):
        if _hits(rule, request, targets, workspace):
            return Decision(
                outcome="deny", reason=f"denied by {rule.text}", layer="deny-rule", rules=(rule,)
            )
    for t in targets:
        reason = hard_ask(t)
        if reason:
            return Decision(outcome="ask", reason=reason, layer="sandbox")
    for t in (t for t in targets if t.search and t.resolved.kind != "file"):
        for rule in rules.of("deny") + rules.of("ask"):
            reads = rule.family_in(request.families) == "read"
            if reads and search_covers_rule(t, rule, workspace):
                why = f"searching {t.resolved.path} could read paths covered by {rule.text}"
                return Decision(outcome="ask", reason=why, layer="sandbox", rules=(rule,))
    for rule in _rules_for(rules, "ask", request):
        if _hits(rule, request, targets, workspace):
            return Decision(
                outcome="ask", reason=f"{rule.text} asks", layer="ask-rule", rules=(rule,)
            )
    for rule in _rules_for(rules, "allow", request):
        if _hits(rule, request, targets, workspace):
            return Decision(
                outcome="allow", reason=f"allowed by {rule.text}", layer="allow-rule", rules=(rule,)
            )
    return _by_mode(request, targets, mode, workspace)


def _rules_for(rules: RuleSet, behavior: Behavior, req: PermissionRequest) -> list[Rule]:
    found = [r for r in rules.of(behavior) if r.covers(req.tool, req.names)]
    if req.reads_paths and behavior != "allow":  # an edit reads the file too
        found += [
            r for r in rules.of(behavior)
            if r.family_in(req.families) == "read" and r not in found
        ]  # fmt: skip
    return found


def _text_rule_hits(rule: Rule, req: PermissionRequest) -> bool:
    if rule.specifier is None:
        return True
    value = req.subject
    if value is None:
        return False
    if rule.family_in(req.families) == "skill":
        m = rule.command_matcher()
        short = rule.specifier.rpartition(":")[2]
        return m.matches(value) or (":" in rule.specifier and short == value)
    return matches_for(rule.text_matcher(), value, (), rule.behavior)


def _hits(rule: Rule, req: PermissionRequest, targets: list[Target], workspace: Workspace) -> bool:
    if rule.family_in(req.families) in ("read", "edit") and req.file_family:
        return file_rule_hits(rule, targets, workspace, req.families)
    return _text_rule_hits(rule, req)


def _by_mode(
    req: PermissionRequest, targets: list[Target], mode: Mode, workspace: Workspace
) -> Decision:
    outside = next((t for t in targets if not t.resolved.inside), None)
    if req.category == "read":
        if outside is not None:
            return Decision(
                outcome="ask",
                reason=f"{outside.resolved.path} is outside the project root",
                layer="sandbox",
            )
        return Decision(outcome="allow", reason="read-only inside the project root", layer="mode")
    ci = workspace.case_insensitive
    guarded = next(
        (t for t in targets if t.write and is_protected(t.resolved, ignore_case=ci)), None
    )
    if guarded is not None:
        why = (
            f"{guarded.resolved.rel} holds settings, hooks or git data; changes need your approval"
        )
        return Decision(outcome="ask", reason=why, layer="protected")
    if req.default_allow:
        return Decision(
            outcome="allow",
            reason=f"{req.tool} is allowed unless a rule says otherwise",
            layer="mode",
        )
    if req.category == "edit" and mode == "acceptEdits" and targets:
        return Decision(
            outcome="allow", reason="acceptEdits: edit inside the project root", layer="mode"
        )
    if mode in LENIENT:
        return Decision(outcome="allow", reason=f"{mode} mode", layer="mode")
    what = {
        "edit": "changes files",
        "exec": "runs commands or an external tool",
        "other": "is not read-only",
    }.get(req.category, "is not read-only")
    return Decision(outcome="ask", reason=f"{req.tool} {what} ({mode} mode)", layer="mode")
