"""``Gate``: the permission engine behind the core's ``PermissionGate`` seam.

It holds the mode (switchable during a session), the rule set (config and
settings files plus mutable session rules), turns every decision and every
answered "ask" into an ``AuditRecord`` for one sink, and answers "always
allow" by adding a session rule for exactly that command or path
(optionally saved to the local settings file). A bare agent gets a ``Gate``
with no rules.
"""

from __future__ import annotations

import os
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from ..config.trust_items import TrustPolicy
from ..fs import Workspace
from ..messages import ToolUseBlock
from ..tools.base import Tool
from ..tools.context import RunContext
from .audit import AuditRecord
from .decision import Decision
from .engine import decide
from .matcher import has_glob_chars
from .modes import Mode, parse_mode
from .python_code import is_pattern, read_code
from .request import PermissionRequest, categorize
from .rules import SESSION, Rule, RuleProblem, RuleSet, RuleSource, parse_rule
from .settings import LOCAL_SETTINGS, load_project_settings, rules_from_permissions
from .settings import save_local_rule as _save_local_rule
from .shell.analysis import analyze
from .shell.decide import harmless_part
from .targets import targets_of

__all__ = ["Gate", "suggest_rules"]

_AUDIT_KEEP = 500
_CONTEXTS_KEEP = 64
# How far each mode lets a call go; a subagent's mode is capped at its parent's.
_LENIENCY: dict[Mode, int] = {
    "plan": 0, "dontAsk": 1, "default": 2, "acceptEdits": 3, "bypassPermissions": 4,
}  # fmt: skip
_RULE_NAME = {"agent": "Agent", "skill": "Skill"}


def _path_rule(name: str, resolved_rel: str | None, path: str) -> str:
    if resolved_rel is None:
        spec = "//" + path.lstrip("/")
    elif resolved_rel == ".":
        spec = "./**"
    else:
        spec = "./" + resolved_rel
    if has_glob_chars(spec.removesuffix("/**")) or spec.startswith(("=", "!")):
        spec = "=" + spec
    return f"{name}({spec})"


def _command_rules(request: PermissionRequest, workspace: Workspace) -> list[str]:
    command = request.subject
    if command is None or not command.strip():
        return []
    analysis = analyze(command)
    parts = [p for p in analysis.parts if not harmless_part(p, workspace)]
    if not parts and not analysis.opaque:
        return []
    simple = not analysis.opaque and parts and all(
        p.text and not p.redirects and not p.risky_env and "*" not in p.text
        and not p.text.startswith(("=", "!")) and not (p.text.startswith("~") and not p.text.startswith("~/"))
        for p in parts
    )  # fmt: skip
    name = "Bash" if "Bash" in request.names else request.tool
    if simple:
        return list(dict.fromkeys(f"{name}({p.text})" for p in parts))
    return [f"{name}(={command.strip()})"]


def _python_rules(request: PermissionRequest) -> list[str]:
    """``RunPython(stmt)`` for one-line statements (``RunPython(=stmt)`` when it
    holds a character a pattern would read as a wildcard: ``df[0]``,
    ``f"{x}"``), else the whole code exactly."""
    code = read_code(request.subject or "")
    if isinstance(code, str) or not code.top:
        return []
    name = "RunPython" if "RunPython" in request.names else request.tool
    lines = [s.spellings[0] for s in code.top if s.spellings]
    if len(lines) == len(code.top) and all("\n" not in ln for ln in lines):
        return list(
            dict.fromkeys(
                f"{name}(={ln})" if is_pattern(ln) or ln.startswith("=") else f"{name}({ln})"
                for ln in lines
            )
        )
    return [f"{name}(={code.code.strip()})"]


def suggest_rules(request: PermissionRequest, workspace: Workspace) -> list[str]:
    """Allow rules for exactly this call: ``Bash(npm test)``, ``Edit(./src/app.py)``, ..."""
    if request.family == "command":
        return _command_rules(request, workspace)
    if request.family == "python":
        return _python_rules(request)
    if request.file_family:
        targets, problem = targets_of(request, workspace)
        if problem or not targets:
            return []
        name = "Read" if request.category == "read" else "Edit"
        if name == "Edit" and "NotebookEdit" in request.names:
            name = "NotebookEdit"  # exactly the notebook tool: not every file tool
        return list(
            dict.fromkeys(
                _path_rule(name, t.resolved.rel, t.resolved.path)
                for t in targets
                if t.resolved.inside or not t.write  # writes outside always ask
            )
        )
    rule_name = _RULE_NAME.get(request.family)
    if rule_name is not None:
        subject = request.subject
        usable = isinstance(subject, str) and subject and "(" not in subject
        if request.family == "agent":
            usable = usable and subject.isidentifier()  # type: ignore[union-attr]
        return [f"{rule_name}({subject})" if usable else rule_name]
    return [request.tool]


class Gate:
    """The permission gate backed by ``engine.decide``.

    ``rules`` are the configured rules; session rules added by ``remember``
    live in the same set with the source ``session``. ``on_audit`` receives
    every ``AuditRecord`` (decisions and answered asks); the last records are
    also kept in ``audit_log``. ``home`` and ``case_insensitive`` override
    what path resolution assumes (tests). ``sandboxed``: the session's OS
    sandbox is active, so calls of tools that run in it (``Tool.sandboxed``)
    are judged knowing it holds them.
    """

    def __init__(
        self,
        *,
        rules: RuleSet | None = None,
        mode: Mode = "default",
        root: Path | None = None,
        additional_dirs: Iterable[Path] = (),
        on_audit: Callable[[AuditRecord], None] | None = None,
        bypass_disabled: bool = False,
        case_insensitive: bool | None = None,
        home: str | None = None,
        read_only: bool = False,
        sandboxed: bool = False,
    ) -> None:
        self.rules = rules if rules is not None else RuleSet()
        self.read_only = read_only
        self.sandboxed = sandboxed
        self.bypass_disabled = bypass_disabled
        self._mode: Mode = "default"
        self.mode = mode
        self.root = root
        self._additional_dirs = tuple(additional_dirs)
        self.on_audit = on_audit
        self.audit_log: deque[AuditRecord] = deque(maxlen=_AUDIT_KEEP)
        self._case_insensitive = case_insensitive
        self._home = home
        self._workspaces: dict[tuple[str, tuple[str, ...]], Workspace] = {}
        self._contexts: OrderedDict[str, RunContext] = OrderedDict()
        #: Called with the file after an "always allow" rule was saved to it.
        #: told of each rule saved to the project: ``(file, rule, behavior)``
        self.on_saved: Callable[[Path, str, str], None] | None = None

    @classmethod
    def for_project(
        cls,
        root: Path,
        *,
        mode: Mode | None = None,
        config_permissions: Iterable[tuple[Any, RuleSource]] = (),
        trust: TrustPolicy | None = None,
        **kwargs: Any,
    ) -> Gate:
        """A gate with the rules of ``config_permissions`` (each a ``permissions``
        section and its source) and of the project's settings files (which an
        untrusted project's ``trust`` keeps from loosening anything)."""
        rules = RuleSet()
        for block, source in config_permissions:
            rules.extend(rules_from_permissions(block, source))
        loaded = load_project_settings(root, trust)
        rules.extend(loaded.rules)
        return cls(
            rules=rules,
            mode=mode or loaded.default_mode or "default",
            root=root,
            additional_dirs=(*kwargs.pop("additional_dirs", ()), *loaded.additional_dirs),
            bypass_disabled=loaded.bypass_disabled or kwargs.pop("bypass_disabled", False),
            **kwargs,
        )

    def derive(self, *, mode: Mode | None = None, read_only: bool = False) -> Gate:
        """A gate for a subagent: the same rules (session rules included),
        directories and audit sink, with its own ``mode``, never more lenient
        than this gate's; ``read_only`` (or this gate's) refuses anything that
        may write."""
        wanted = mode or self._mode
        if _LENIENCY[wanted] > _LENIENCY[self._mode]:
            wanted = self._mode
        child = Gate(
            rules=self.rules,
            mode=wanted,
            root=self.root,
            additional_dirs=self._additional_dirs,
            on_audit=self.on_audit,
            bypass_disabled=self.bypass_disabled,
            case_insensitive=self._case_insensitive,
            home=self._home,
            read_only=read_only or self.read_only,
            sandboxed=self.sandboxed,
        )
        child._workspaces = self._workspaces
        return child

    # ---- what callers read ------------------------------------------------------

    @property
    def mode(self) -> Mode:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        mode = parse_mode(value)
        if mode == "bypassPermissions" and self.bypass_disabled:
            raise ValueError(
                "bypassPermissions is disabled by the settings (disableBypassPermissionsMode)"
            )
        self._mode = mode

    @property
    def additional_dirs(self) -> tuple[Path, ...]:
        return self._additional_dirs

    @property
    def problems(self) -> list[RuleProblem]:
        return list(self.rules.problems)

    def list_rules(self) -> list[Rule]:
        """The active rules, deny first, then ask, then allow (for ``/permissions``)."""
        return self.rules.of("deny") + self.rules.of("ask") + self.rules.of("allow")

    def session_rules(self) -> list[Rule]:
        return [r for r in self.rules if r.source == SESSION]

    # ---- checking -------------------------------------------------------------

    def workspace(self, ctx: RunContext) -> Workspace:
        """The resolver for ``ctx``: its own when it covers the gate's
        directories (a session hands one resolver to its gate, tools and
        hooks), else one for ``ctx``'s root and both sets of directories."""
        dirs = tuple(
            dict.fromkeys(os.fspath(d) for d in (*ctx.additional_dirs, *self._additional_dirs))
        )
        given = ctx.workspace
        if (
            given.root == os.path.realpath(ctx.root)
            and set(given.roots) >= {os.path.realpath(d) for d in dirs}
            and given.home == os.path.realpath(self._home or os.path.expanduser("~"))
            and self._case_insensitive in (None, given.case_insensitive)
        ):
            return given
        key = (os.fspath(ctx.root), dirs)
        box = self._workspaces.get(key)
        if box is None:
            box = Workspace(
                ctx.root, dirs, home=self._home, case_insensitive=self._case_insensitive
            )
            self._workspaces[key] = box
        return box

    def _request(self, call: ToolUseBlock, tool: Tool, ctx: RunContext) -> PermissionRequest:
        families = ctx.services.tools.rule_families() if ctx.services is not None else None
        return PermissionRequest.from_call(call, tool, families, sandbox_active=self.sandboxed)

    def evaluate(self, call: ToolUseBlock, tool: Tool, ctx: RunContext) -> Decision:
        """The engine's decision for ``call`` (no audit, no side effects)."""
        return decide(
            self._request(call, tool, ctx),
            self.rules,
            self._mode,
            workspace=self.workspace(ctx),
            read_only=self.read_only,
        )

    async def check(self, call: ToolUseBlock, tool: Tool, ctx: RunContext) -> Decision:
        """Decide ``call``; records an ``AuditRecord`` and hands it to ``on_audit``."""
        self._contexts[call.id] = ctx
        while len(self._contexts) > _CONTEXTS_KEEP:
            self._contexts.popitem(last=False)
        decision = self.evaluate(call, tool, ctx)
        self._record(
            AuditRecord.of(
                tool=tool, call_id=call.id, args=call.input, decision=decision, mode=self._mode
            )
        )
        return decision

    def record_approval(
        self,
        call: ToolUseBlock,
        tool: Tool,
        *,
        allowed: bool,
        by: Literal["user", "headless", "hook"],
        rules_added: tuple[str, ...] = (),
        note: str | None = None,
    ) -> None:
        self._record(
            AuditRecord.approval(
                tool=tool,
                call_id=call.id,
                mode=self._mode,
                allowed=allowed,
                by=by,
                rules_added=rules_added,
                note=note,
            )
        )

    def _record(self, record: AuditRecord) -> None:
        self.audit_log.append(record)
        if self.on_audit is not None:
            self.on_audit(record)

    # ---- "always allow" ---------------------------------------------------------

    def _context_for(self, call: ToolUseBlock) -> RunContext | None:
        ctx = self._contexts.get(call.id)
        if ctx is None and self.root is not None:
            ctx = RunContext(root=self.root)
        return ctx

    def suggest(self, call: ToolUseBlock, tool: Tool) -> list[str]:
        ctx = self._context_for(call)
        if ctx is None:
            return []
        return suggest_rules(self._request(call, tool, ctx), self.workspace(ctx))

    def remember(self, call: ToolUseBlock, tool: Tool, *, save: bool = False) -> list[str]:
        """After "always allow": allow exactly this command / path for the session,
        and with ``save`` also in ``.mewcode/settings.local.yaml``."""
        texts = self.suggest(call, tool)
        for text in texts:
            if save:
                self.save_local_rule(text)
            else:
                self.rules.add_text(text, "allow", SESSION)
        return texts

    def save_local_rule(self, rule: str | Rule) -> Path:
        """Write ``rule`` to ``<root>/.mewcode/settings.local.yaml`` and keep it active."""
        root = self.root or next((c.root for c in reversed(self._contexts.values())), None)
        if root is None:
            raise ValueError("no project root known to save the rule under")
        text = rule.text if isinstance(rule, Rule) else rule
        behavior = rule.behavior if isinstance(rule, Rule) else "allow"
        path = _save_local_rule(root, text, behavior)
        source = RuleSource(label=str(Path(root) / LOCAL_SETTINGS), path=path, base=Path(root))
        saved = parse_rule(text, behavior, source)
        for old in [r for r in self.rules if r.source == SESSION and r.text == text]:
            self.rules.remove(old)
        self.rules.add(saved)
        if self.on_saved is not None:
            self.on_saved(path, text, behavior)
        return path

    # ---- what the model sees ------------------------------------------------------

    def offered_tools(self, tools: Iterable[Tool]) -> list[Tool]:
        """The tools to offer the model: in plan mode only the read-only ones."""
        listed = list(tools)
        if self._mode == "plan":
            return [t for t in listed if categorize(t) == "read"]
        return listed
