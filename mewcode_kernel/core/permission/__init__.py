"""Permissions: modes, rules, the engine, the gate and the audit trail.

``decide(request, rules, mode, workspace=...)`` (``engine``) is a pure
function returning a ``Decision`` (allow / deny / ask, the reason, and the
layer or rules that decided); ``Gate`` (``gate``) puts it behind the core's
``PermissionGate`` seam (``seam``), with the approval types front ends use.
See ``rules`` for the rule syntax, ``targets`` for the path checks no rule
lifts, and ``shell`` for command analysis.

Names are imported lazily, so reading ``MODES`` at kernel start costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .audit import AuditRecord, redact, summarize_input
    from .decision import Decision, Layer, Outcome
    from .engine import decide
    from .gate import Gate, suggest_rules
    from .matcher import Matcher, MatcherError, compile_match_spec, compile_matcher
    from .modes import MODES, Mode, parse_mode
    from .project import gate_for_project
    from .request import Category, PermissionRequest, categorize
    from .rules import (
        BUILTIN,
        SESSION,
        Behavior,
        Rule,
        RuleError,
        RuleProblem,
        RuleSet,
        RuleSource,
        parse_rule,
    )
    from .seam import (
        ApprovalAnswer,
        ApprovalHandler,
        ApprovalRequest,
        NobodyToAsk,
        PermissionGate,
    )
    from .settings import (
        LOCAL_SETTINGS,
        LoadedSettings,
        load_claude_settings,
        load_local_settings,
        load_project_settings,
        rules_from_permissions,
        save_local_rule,
    )
    from .shell.analysis import CommandAnalysis, CommandPart, analyze
    from .shell.danger import catastrophic
    from .targets import is_protected

_WHERE = {
    "audit": ("AuditRecord", "redact", "summarize_input"),
    "decision": ("Decision", "Layer", "Outcome"),
    "engine": ("decide",),
    "gate": ("Gate", "suggest_rules"),
    "matcher": ("Matcher", "MatcherError", "compile_match_spec", "compile_matcher"),
    "modes": ("MODES", "Mode", "parse_mode"),
    "project": ("gate_for_project",),
    "request": ("Category", "PermissionRequest", "categorize"),
    "rules": (
        "BUILTIN", "SESSION", "Behavior", "Rule", "RuleError", "RuleProblem", "RuleSet",
        "RuleSource", "parse_rule",
    ),
    "seam": (
        "ApprovalAnswer", "ApprovalHandler", "ApprovalRequest", "NobodyToAsk", "PermissionGate",
    ),
    "settings": (
        "LOCAL_SETTINGS", "LoadedSettings", "load_claude_settings", "load_local_settings",
        "load_project_settings", "rules_from_permissions", "save_local_rule",
    ),
    "shell.analysis": ("CommandAnalysis", "CommandPart", "analyze"),
    "shell.danger": ("catastrophic",),
    "targets": ("is_protected",),
}  # fmt: skip
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "BUILTIN",
    "LOCAL_SETTINGS",
    "MODES",
    "SESSION",
    "ApprovalAnswer",
    "ApprovalHandler",
    "ApprovalRequest",
    "AuditRecord",
    "Behavior",
    "Category",
    "CommandAnalysis",
    "CommandPart",
    "Decision",
    "Gate",
    "Layer",
    "LoadedSettings",
    "Matcher",
    "MatcherError",
    "Mode",
    "NobodyToAsk",
    "Outcome",
    "PermissionGate",
    "PermissionRequest",
    "Rule",
    "RuleError",
    "RuleProblem",
    "RuleSet",
    "RuleSource",
    "analyze",
    "catastrophic",
    "categorize",
    "compile_match_spec",
    "compile_matcher",
    "decide",
    "gate_for_project",
    "is_protected",
    "load_claude_settings",
    "load_local_settings",
    "load_project_settings",
    "parse_mode",
    "parse_rule",
    "redact",
    "rules_from_permissions",
    "save_local_rule",
    "suggest_rules",
    "summarize_input",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
