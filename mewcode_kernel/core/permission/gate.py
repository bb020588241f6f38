"""``EngineGate``: the permission engine behind the core's ``PermissionGate`` seam.

It holds the mode (switchable during a session), the rule set (config and
settings files plus mutable session rules), turns every decision into an
``AuditRecord``, and answers "always allow" by adding a session rule for
exactly that command or path (optionally saved to the local settings file).
"""

from __future__ import annotations

import os
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..agent.gate import Decision
from ..messages import ToolUseBlock
from ..tools.base import Tool, ToolContext
from ._bash import harmless_part
from .audit import AuditRecord
from .commands import analyze
from .engine import Mode, PermissionRequest, Verdict, _targets, categorize, decide, parse_mode
from .matcher import has_glob_chars
from .rules import BUILTIN, SESSION, Rule, RuleSet, RuleSource, parse_rule
from .sandbox import Sandbox
from .settings import LOCAL_SETTINGS, load_project_settings, rules_from_permissions
from .settings import save_local_rule as _save_local_rule

__all__ = ["BUILTIN_ALLOW", "EngineGate", "suggest_rules"]

BUILTIN_ALLOW: tuple[str, ...] = (
    "Agent",
    "TaskList",
    "TaskGet",
    "TaskStop",
    "SendMessage",
    "load_skill",
)
_AUDIT_KEEP = 500
_CONTEXTS_KEEP = 64


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


def suggest_rules(request: PermissionRequest, sandbox: Sandbox) -> list[str]:
    """Allow rules for exactly this call: ``Bash(npm test)``, ``Edit(./src/app.py)``, ..."""
    tool = request.tool
    if tool == "bash":
        command = request.input.get("command")
        if not isinstance(command, str) or not command.strip():
            return []
        analysis = analyze(command)
        parts = [p for p in analysis.parts if not harmless_part(p, sandbox)]
        if not parts and not analysis.opaque:
            return []
        simple = not analysis.opaque and parts and all(
            p.text and not p.redirects and not p.risky_env and "*" not in p.text
            and not p.text.startswith(("=", "!")) and not (p.text.startswith("~") and not p.text.startswith("~/"))
            for p in parts
        )  # fmt: skip
        if simple:
            return list(dict.fromkeys(f"Bash({p.text})" for p in parts))
        return [f"Bash(={command.strip()})"]
    if request.path_args or tool in ("glob", "grep"):
        targets, problem = _targets(request, sandbox)
        if problem or not targets:
            return []
        name = "Read" if request.category == "read" else "Edit"
        return list(
            dict.fromkeys(
                _path_rule(name, t.resolved.rel, t.resolved.path)
                for t in targets
                if t.resolved.inside or not t.write  # writes outside always ask
            )
        )
    if tool == "Agent":
        kind = request.input.get("subagent_type")
        return [f"Agent({kind})" if isinstance(kind, str) and kind.isidentifier() else "Agent"]
    if tool == "load_skill":
        name = request.input.get("name")
        return [f"Skill({name})" if isinstance(name, str) and name and "(" not in name else "Skill"]
    return [tool]


class EngineGate:
    """The permission gate backed by ``engine.decide``.

    ``rules`` are the configured rules; session rules added by ``remember``
    live in the same set with the source ``session``. ``on_audit`` is called
    with every ``AuditRecord``; the last records are also kept in
    ``audit_log``. ``builtin_allow`` lists tools allowed unless a rule says
    otherwise (plan mode still refuses those that are not read-only).
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
        builtin_allow: Iterable[str] = BUILTIN_ALLOW,
        case_insensitive: bool | None = None,
        home: str | None = None,
    ) -> None:
        self.rules = rules if rules is not None else RuleSet()
        for name in builtin_allow:
            self.rules.add_text(name, "allow", BUILTIN)
        self.bypass_disabled = bypass_disabled
        self._mode: Mode = "default"
        self.mode = mode
        self.root = root
        self.additional_dirs = tuple(additional_dirs)
        self.on_audit = on_audit
        self.audit_log: deque[AuditRecord] = deque(maxlen=_AUDIT_KEEP)
        self._case_insensitive = case_insensitive
        self._home = home
        self._sandboxes: dict[tuple[str, tuple[str, ...]], Sandbox] = {}
        self._contexts: OrderedDict[str, ToolContext] = OrderedDict()

    @classmethod
    def for_project(
        cls,
        root: Path,
        *,
        mode: Mode | None = None,
        config_permissions: Iterable[tuple[Any, RuleSource]] = (),
        **kwargs: Any,
    ) -> EngineGate:
        """A gate with the rules of ``config_permissions`` (each a ``permissions``
        section and its source) and of the project's settings files."""
        rules = RuleSet()
        for block, source in config_permissions:
            rules.extend(rules_from_permissions(block, source))
        loaded = load_project_settings(root)
        rules.extend(loaded.rules)
        return cls(
            rules=rules,
            mode=mode or loaded.default_mode or "default",
            root=root,
            additional_dirs=(*kwargs.pop("additional_dirs", ()), *loaded.additional_dirs),
            bypass_disabled=loaded.bypass_disabled or kwargs.pop("bypass_disabled", False),
            **kwargs,
        )

    def derive(self, *, mode: Mode | None = None) -> EngineGate:
        """A gate for a subagent: the same rules (session rules included), sandbox
        settings and audit sink, with its own ``mode``."""
        child = EngineGate(
            rules=self.rules,
            mode=mode or self._mode,
            root=self.root,
            additional_dirs=self.additional_dirs,
            on_audit=self.on_audit,
            bypass_disabled=self.bypass_disabled,
            builtin_allow=(),
            case_insensitive=self._case_insensitive,
            home=self._home,
        )
        child._sandboxes = self._sandboxes
        return child

    # ---- mode ---------------------------------------------------------------

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

    # ---- checking -------------------------------------------------------------

    def sandbox(self, ctx: ToolContext) -> Sandbox:
        """The sandbox for ``ctx``'s root and additional directories (cached)."""
        dirs = tuple(
            dict.fromkeys(os.fspath(d) for d in (*ctx.additional_dirs, *self.additional_dirs))
        )
        key = (os.fspath(ctx.root), dirs)
        box = self._sandboxes.get(key)
        if box is None:
            box = Sandbox(ctx.root, dirs, home=self._home, case_insensitive=self._case_insensitive)
            self._sandboxes[key] = box
        return box

    def evaluate(self, call: ToolUseBlock, tool: Tool, ctx: ToolContext) -> Verdict:
        """The engine's verdict for ``call`` (no audit, no side effects)."""
        request = PermissionRequest.from_call(call, tool)
        return decide(request, self.rules, self._mode, sandbox=self.sandbox(ctx))

    async def check(self, call: ToolUseBlock, tool: Tool, ctx: ToolContext) -> Decision:
        """Decide ``call``; records an ``AuditRecord`` and reports it to ``on_audit``."""
        self._contexts[call.id] = ctx
        while len(self._contexts) > _CONTEXTS_KEEP:
            self._contexts.popitem(last=False)
        verdict = self.evaluate(call, tool, ctx)
        record = AuditRecord.of(
            tool=tool.name, call_id=call.id, args=call.input, verdict=verdict, mode=self._mode
        )
        self.audit_log.append(record)
        if self.on_audit is not None:
            self.on_audit(record)
        return verdict.to_decision()

    # ---- "always allow" ---------------------------------------------------------

    def _context_for(self, call: ToolUseBlock) -> ToolContext | None:
        ctx = self._contexts.get(call.id)
        if ctx is None and self.root is not None:
            ctx = ToolContext(root=self.root)
        return ctx

    def suggest(self, call: ToolUseBlock, tool: Tool) -> list[str]:
        """The rules ``remember`` would add for ``call``."""
        ctx = self._context_for(call)
        if ctx is None:
            return []
        return suggest_rules(PermissionRequest.from_call(call, tool), self.sandbox(ctx))

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

    def session_rules(self) -> list[Rule]:
        return [r for r in self.rules if r.source == SESSION]

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
        return path

    # ---- what the model and the person see -------------------------------------

    def offered_tools(self, registry: Iterable[Tool]) -> list[Tool]:
        """The tools to offer the model: in plan mode only the read-only ones."""
        tools = list(registry)
        if self._mode == "plan":
            return [t for t in tools if categorize(t) == "read"]
        return tools

    def list_rules(self) -> list[Rule]:
        """The active rules, deny first, then ask, then allow (for ``/permissions``)."""
        return self.rules.of("deny") + self.rules.of("ask") + self.rules.of("allow")
