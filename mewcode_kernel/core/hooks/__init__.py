"""Hooks: the user's scripts on the eleven lifecycle events (``core.lifecycle``).

Rules come from ``.mewcode/hooks.yaml`` (project, once trusted),
``~/.mewcode/hooks.yaml`` (user) and the ``hooks`` of
``.claude/settings.json`` / ``.claude/settings.local.json`` (Claude Code's
format, project). ``HookEngine`` is the session's dispatcher.
"""

from __future__ import annotations

from .engine import HookEngine, RuleStats
from .loader import HookSet, load_hooks
from .rules import Action, HookRule, RuleProblem, get_by_path, parse_duration
from .template import BodyTemplate, TemplateError

__all__ = [
    "Action",
    "BodyTemplate",
    "HookEngine",
    "HookRule",
    "HookSet",
    "RuleProblem",
    "RuleStats",
    "TemplateError",
    "get_by_path",
    "load_hooks",
    "parse_duration",
]
