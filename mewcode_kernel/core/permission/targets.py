"""The paths a call touches, resolved, and the checks on them that no rule or
mode lifts: shared by the engine and the shell-command branch."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..fs import ResolvedPath, Workspace
from ..project_paths import PROTECTED_PATHS
from ..tools.base import RuleFamily
from .matcher import Matcher, MatcherError, Not
from .request import PermissionRequest
from .rules import Behavior, Rule, path_rule_prefix

__all__ = [
    "Target",
    "file_rule_hits",
    "hard_ask",
    "is_protected",
    "matches_for",
    "search_covers_rule",
    "targets_of",
]

# anything inside these folders, and these names themselves, wherever they are
_PROTECTED_DIRS = frozenset({".git", ".mewcode", ".claude"})
_PROTECTED_FILES = frozenset({".mewcode.yaml", ".mcp.json", ".envrc"})
# what the loaders read (project_paths), matched at any depth: the path itself,
# inside it, or a folder on the way to it (writing ``.agents`` plants ``.agents/skills``)
_PROTECTED_ENTRIES: tuple[tuple[str, ...], ...] = tuple(
    tuple(p.split("/")) for p in PROTECTED_PATHS
)
_FOLDED_ENTRIES: tuple[tuple[str, ...], ...] = tuple(
    tuple(n.casefold() for n in e) for e in _PROTECTED_ENTRIES
)
_CLIMBS = re.compile(r"(?:^|[/{,])\.\.(?:$|[/},])")


@dataclass(frozen=True, slots=True)
class Target:
    """A path a call reads or writes; ``search``: a tree the call walks."""

    resolved: ResolvedPath
    write: bool
    search: bool


def matches_for(
    matcher: Matcher, primary: str, variants: tuple[str, ...], behavior: Behavior
) -> bool:
    """Whether ``matcher`` holds. Deny and ask rules match any spelling; an
    allow rule must match the real one, and a negated allow rule must fail
    to match every spelling."""
    if behavior != "allow":
        return any(matcher.matches(v) for v in (primary, *variants))
    if isinstance(matcher, Not):
        return not any(matcher.inner.matches(v) for v in (primary, *variants))
    return matcher.matches(primary)


def file_rule_hits(
    rule: Rule,
    targets: list[Target],
    workspace: Workspace,
    families: Mapping[str, RuleFamily],
) -> bool:
    """Whether the path rule ``rule`` covers ``targets`` (any of them for deny
    and ask, all of them for allow). A specifier that cannot be read as a
    path covers everything for deny and ask and nothing for allow."""
    if rule.specifier is None:
        return True
    if rule.family_in(families) not in ("read", "edit") or not targets:
        return False
    try:
        m = rule.path_matcher(
            workspace.root, workspace.home, ignore_case=workspace.case_insensitive
        )
    except MatcherError:
        return rule.behavior != "allow"
    hits = (matches_for(m, t.resolved.path, t.resolved.variants, rule.behavior) for t in targets)
    return any(hits) if rule.behavior != "allow" else all(hits)


def _literal_prefix(pattern: str) -> str:
    names = pattern.split("/")
    cut = next((i for i, n in enumerate(names) if any(c in n for c in "*?[{")), len(names))
    return "/".join(names[:cut]) or "/"


def targets_of(req: PermissionRequest, workspace: Workspace) -> tuple[list[Target], str | None]:
    """The paths ``req`` touches, and a problem that keeps them from being known."""
    write = req.category != "read"
    search = req.search is not None
    names = req.path_args or (("path",) if search else ())
    targets: list[Target] = []
    for name in names:
        value = req.input.get(name)
        if value is None and search:
            value = "."
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            return [], f"the {name!r} argument is not a usable path"
        targets.append(Target(workspace.resolve(value), write, search))
    pattern = req.input.get(req.search.pattern_arg) if req.search is not None else None
    if isinstance(pattern, str):
        if _CLIMBS.search(pattern):
            return targets, f"the pattern {pattern!r} climbs out with '..'"
        if pattern.startswith(("/", "~")):
            extra = Target(workspace.resolve(_literal_prefix(pattern)), write, True)
            assert req.search is not None
            targets = [extra] if req.search.pattern_sets_base else [*targets, extra]
    return targets, None


def hard_ask(t: Target) -> str | None:
    """Why a person must approve touching ``t`` whatever the rules and mode say."""
    r = t.resolved
    if r.suspicious:
        return f"{r.raw}: {r.suspicious}"
    if r.hard_link and not t.search and (t.write or r.inside):
        verb = "written" if t.write else "read"
        return f"{r.path} has other hard links; the file {verb} may be one outside the project"
    if not t.write:
        return None
    if not r.inside:
        return f"{r.path} is outside the project root and the additional directories"
    if r.kind == "other":
        return f"{r.path} is not a regular file"
    return None


def is_protected(resolved: ResolvedPath, *, ignore_case: bool = False) -> bool:
    """Whether writing ``resolved`` could change MewCode's or Claude's settings, hooks or git."""
    if resolved.rel is None:
        return False
    names = resolved.rel.split("/")
    entries = _PROTECTED_ENTRIES
    if ignore_case:
        names = [n.casefold() for n in names]
        entries = _FOLDED_ENTRIES
    if _PROTECTED_DIRS.intersection(names[:-1]) or names[-1] in _PROTECTED_FILES | _PROTECTED_DIRS:
        return True
    for start in range(len(names)):
        tail = names[start:]
        for entry in entries:
            n = min(len(tail), len(entry))
            if tail[:n] == list(entry[:n]):
                return True
    return False


def search_covers_rule(t: Target, rule: Rule, workspace: Workspace) -> bool:
    """Whether searching the directory ``t`` would read paths ``rule`` covers."""
    prefix = path_rule_prefix(rule, workspace.root, workspace.home)
    d = t.resolved.path.rstrip("/") or "/"
    below = prefix.startswith(d.rstrip("/") + "/") or d.startswith(prefix.rstrip("/") + "/")
    return prefix == d or below or d == "/"
