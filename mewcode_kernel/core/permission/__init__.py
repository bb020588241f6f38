"""The permission engine: modes, rules, the path sandbox and the audit trail.

``decide(request, rules, mode, sandbox=...)`` is a pure function returning a
``Verdict`` (allow / deny / ask, the reason, and the layer or rules that
decided); ``EngineGate`` plugs it into the core's ``PermissionGate`` seam.
See ``engine`` for the order of the layers, ``rules`` for the rule syntax
and ``sandbox`` for path resolution and safe writes.
"""

from __future__ import annotations

from .audit import AuditRecord, redact, summarize_input
from .commands import CommandAnalysis, CommandPart, analyze
from .danger import catastrophic
from .engine import (
    MODES,
    Category,
    Layer,
    Mode,
    PermissionRequest,
    Verdict,
    categorize,
    decide,
    is_protected,
    parse_mode,
)
from .gate import BUILTIN_ALLOW, EngineGate, suggest_rules
from .matcher import Matcher, MatcherError, compile_match_spec, compile_matcher
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
from .sandbox import (
    ResolvedPath,
    Sandbox,
    SandboxError,
    atomic_write_within,
    safe_open_for_write,
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

__all__ = [
    "BUILTIN",
    "BUILTIN_ALLOW",
    "LOCAL_SETTINGS",
    "MODES",
    "SESSION",
    "AuditRecord",
    "Behavior",
    "Category",
    "CommandAnalysis",
    "CommandPart",
    "EngineGate",
    "Layer",
    "LoadedSettings",
    "Matcher",
    "MatcherError",
    "Mode",
    "PermissionRequest",
    "ResolvedPath",
    "Rule",
    "RuleError",
    "RuleProblem",
    "RuleSet",
    "RuleSource",
    "Sandbox",
    "SandboxError",
    "Verdict",
    "analyze",
    "atomic_write_within",
    "catastrophic",
    "categorize",
    "compile_match_spec",
    "compile_matcher",
    "decide",
    "is_protected",
    "load_claude_settings",
    "load_local_settings",
    "load_project_settings",
    "parse_mode",
    "parse_rule",
    "redact",
    "rules_from_permissions",
    "safe_open_for_write",
    "save_local_rule",
    "suggest_rules",
    "summarize_input",
]
