"""The paths the OS sandbox hides: what ``Read(...)`` deny rules cover now.

A rule naming a literal place (``Read(./secrets/**)``, ``Read(~/.ssh)``,
``Read(./.env)``) hides that place; a rule with a wildcard
(``Read(*.env)``, ``Read(./config/*.key)``) hides every existing path it
matches below its literal directory (the project itself for a regex rule),
found by a bounded walk that never follows a link. Files made later by the
same command are not hidden, nor what a negated rule (``Read(!src/**)``)
leaves out: the static checks still see those.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping

from ..fs import Workspace
from ..tools.base import RuleFamily
from .matcher import Matcher, MatcherError, Not
from .rules import Rule, path_rule_prefix

__all__ = ["WALK_LIMIT", "read_denied_paths"]

WALK_LIMIT = 50_000
"""Entries looked at per rule before the walk gives up (the rest stays visible)."""


def read_denied_paths(
    rules: Iterable[Rule],
    workspace: Workspace,
    families: Mapping[str, RuleFamily] | None = None,
    *,
    limit: int = WALK_LIMIT,
) -> list[str]:
    """Existing resolved paths that a ``Read`` deny rule among ``rules`` covers."""
    known = dict(families or {})
    found: dict[str, None] = {}
    for rule in rules:
        if rule.behavior != "deny" or rule.specifier is None:
            continue
        if rule.family_in(known) != "read":
            continue
        try:
            matcher = rule.path_matcher(
                workspace.root, workspace.home, ignore_case=workspace.case_insensitive
            )
        except MatcherError:
            continue  # a rule that cannot be read fails closed in the engine
        if isinstance(matcher, Not):
            continue
        start = path_rule_prefix(rule, workspace.root, workspace.home)
        starts = list(workspace.roots) if start == "/" else [start]
        for base in starts:
            for path in _covered(matcher, base, limit):
                found[path] = None
    return list(found)


def _covered(matcher: Matcher, start: str, limit: int) -> Iterator[str]:
    if not os.path.lexists(start):
        return
    if matcher.matches(start):
        yield start
        return
    todo = [start]
    seen = 0
    while todo and seen < limit:
        directory = todo.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if entry.name == ".git":
                continue
            if matcher.matches(entry.path):
                yield entry.path
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append(entry.path)
            except OSError:
                continue
