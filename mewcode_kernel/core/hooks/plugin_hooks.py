"""Plugins' hooks (``hooks/hooks.json``, or inline in ``plugin.json``), in
Claude Code's format, as rules next to the others.

Each command gets ``CLAUDE_PLUGIN_ROOT`` (the plugin's folder) in its
environment, so ``"${CLAUDE_PLUGIN_ROOT}/hooks/x.sh"`` works as in Claude
Code. The user's plugins run like the user's hooks; a project's plugin runs
only while the trust allows the item of exactly the section read (scripts
included), and each script is checked again before each run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..plugins import ROOT_VAR, discover_plugins
from ..trust import TRUST_ENV, ProjectTrust, plugin_hook_item, plugin_hook_scripts
from .claude import claude_rules
from .rules import HookRule, RuleProblem

__all__ = ["plugin_rules"]


def plugin_rules(
    root: Path, home: Path | None, trust: ProjectTrust
) -> tuple[list[HookRule], list[RuleProblem], list[str]]:
    """The rules of every plugin's hooks, the problems met, and what waits for trust."""
    rules: list[HookRule] = []
    problems: list[RuleProblem] = []
    waiting: list[str] = []
    for plugin in discover_plugins(root, home=home).plugins:
        for section in plugin.hooks:
            shown = f"{plugin.name}:{section.rel}"
            if plugin.scope == "project" and not trust.allows(plugin_hook_item(plugin, section)):
                waiting.append(
                    f"{plugin.label}: {section.rel}: turned on by the project, which is not "
                    f"trusted for these hooks yet (/trust, or {TRUST_ENV}=1 for headless runs)"
                )
                continue
            found, issues = claude_rules(
                section.hooks, file=shown, source=section.path, scope=plugin.scope
            )
            problems += [replace(p, file=f"{section.path} ({shown})") for p in issues]
            for rule in found:
                pinned: tuple[tuple[str, str], ...] = ()
                if plugin.scope == "project" and rule.action.type == "shell":
                    pinned = tuple(plugin_hook_scripts(plugin, rule.action.command))
                rules.append(
                    replace(
                        rule,
                        env=((ROOT_VAR, str(plugin.root)),),
                        scripts=pinned,
                        scripts_root=plugin.root if pinned else None,
                    )
                )
    return rules, problems, waiting
