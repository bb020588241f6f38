"""Loading the hook rules of a project and its user.

Order: ``<root>/.mewcode/hooks.yaml``, ``~/.mewcode/hooks.yaml``, then the
``hooks`` of Claude Code's settings: ``<root>/.claude/settings.json``,
``.claude/settings.local.json``, the user's ``~/.claude/settings.json``,
then any further ``(HookSource, hooks)`` pairs the caller gives (a
plugin's ``hooks/hooks.json``), all through ``add_claude_hooks``. Rules are
appended; a rule whose name is already taken is skipped ("name conflict").

The project's files run only when the project is trusted
(``core.trust``), and only the content that was trusted: each file is read
once, and the hooks items of exactly what was read must be among the items
the trust covers (a file changed after the approval, or between the check
and the read, is not used). A project hook file that is a symlink leading
out of the project is never used. The user's own files need no trust.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from ..trust import TRUST_ENV, assess_project, hook_items, hook_scripts
from ..userdirs import mewcode_home, user_home
from .claude import claude_rules, never_firing
from .plugin_hooks import plugin_rules
from .rules import FILE, HookRule, RuleError, RuleProblem, Scope, compile_rule, rule_label

__all__ = ["HookSet", "HookSource", "add_claude_hooks", "load_hooks"]

MEWCODE_FILE = ".mewcode/hooks.yaml"
CLAUDE_FILES = (".claude/settings.json", ".claude/settings.local.json")
USER_CLAUDE_FILE = "~/.claude/settings.json"


@dataclass(kw_only=True)
class HookSet:
    """The loaded rules; ``problems``: rejected rules and files;
    ``waiting``: project files not used until the project is trusted;
    ``sources``: the files rules came from; ``never``: hooks on Claude
    Code events that load but cannot fire here."""

    rules: list[HookRule] = field(default_factory=list)
    problems: list[RuleProblem] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    sources: list[Path] = field(default_factory=list)
    never: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True, slots=True)
class HookSource:
    """Where a Claude Code ``hooks`` section came from: ``file`` as shown in
    problems and ``/hooks``, its ``path``, and its ``scope`` (a project's
    rules are pinned to the scripts they run as trusted)."""

    file: str
    path: Path
    scope: Scope


def _parse(path: Path, text: str) -> Any:
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _escapes(root: Path, path: Path) -> bool:
    """Whether ``path`` (inside ``root``) leads out of it through a symlink."""
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return True
    return False


def _read(path: Path, shown: str, out: HookSet) -> tuple[bool, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        out.problems.append(RuleProblem(file=shown, rule=FILE, reason=f"cannot be read: {exc}"))
        return False, None
    try:
        return True, _parse(path, text)
    except (ValueError, yaml.YAMLError) as exc:
        reason = f"is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}"
        out.problems.append(RuleProblem(file=shown, rule=FILE, reason=" ".join(reason.split())))
        return False, None


def _mewcode_rules(data: Any, shown: str, path: Path, scope: Scope, out: HookSet) -> None:
    if data is None:
        return
    entries = data.get("hooks") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        out.problems.append(
            RuleProblem(file=shown, rule=FILE, reason="needs a top-level 'hooks:' list")
        )
        return
    for i, entry in enumerate(entries, 1):
        try:
            rule = compile_rule(entry, index=i, scope=scope, source=path)
        except RuleError as exc:
            out.problems.append(RuleProblem(file=shown, rule=rule_label(entry, i), reason=str(exc)))
            continue
        _add(rule, shown, out)


def _add(rule: HookRule, shown: str, out: HookSet) -> None:
    if any(r.name == rule.name for r in out.rules):
        out.problems.append(
            RuleProblem(
                file=shown,
                rule=repr(rule.name),
                reason="name conflict with a previously loaded hook",
            )
        )
        return
    out.rules.append(rule)
    if rule.source not in out.sources:
        out.sources.append(rule.source)


def load_hooks(
    root: Path, *, home: Path | None = None, extra: Iterable[tuple[HookSource, Any]] = ()
) -> HookSet:
    """Every rule that may run now (see the module docstring); ``extra``:
    more Claude Code ``hooks`` sections, already allowed to run."""
    out = HookSet()
    root = Path(os.path.realpath(root))
    trust = assess_project(root, home=home)

    def project(rel: str) -> tuple[bool, Any]:
        path = root / rel
        if not path.is_file():
            return False, None
        if _escapes(root, path):
            out.waiting.append(f"{rel}: a symlink out of the project; never used")
            return False, None
        ok, data = _read(path, rel, out)
        if not ok:
            return False, None
        # the items of exactly what was read (scripts included): what was approved runs
        items = hook_items(rel, data, root)
        if all(trust.allows(i) for i in items):
            return True, data
        if trust.state == "not approved":
            out.waiting.append(
                f"{rel}: the project is not trusted yet (/trust, or {TRUST_ENV}=1 for "
                "headless runs)"
            )
        else:
            out.waiting.append(
                f"{rel}: its hooks (or a script they run) changed since the project was "
                "trusted; trust it again (/trust)"
            )
        return False, None

    ok, data = project(MEWCODE_FILE)
    if ok:
        _mewcode_rules(data, MEWCODE_FILE, root / MEWCODE_FILE, "project", out)
        if not trust.everything:  # trusted by the environment: scripts may change
            _pin_scripts(out, root)
    state = mewcode_home(home)
    if state is not None:
        user = state / "hooks.yaml"
        if user.is_file():
            ok, data = _read(user, "~/.mewcode/hooks.yaml", out)
            if ok:
                _mewcode_rules(data, "~/.mewcode/hooks.yaml", user, "user", out)
    found: list[tuple[HookSource, Any]] = []
    for rel in CLAUDE_FILES:
        ok, data = project(rel)
        if ok and isinstance(data, Mapping) and data.get("hooks"):
            found.append((HookSource(file=rel, path=root / rel, scope="project"), data["hooks"]))
    user = _user_claude(root, home, out)
    if user is not None:
        found.append(user)
    add_claude_hooks(out, [*found, *extra], root=root, pin=not trust.everything)
    rules, problems, waiting = plugin_rules(root, home, trust)
    out.problems += problems
    out.waiting += waiting
    for rule in rules:
        _add(rule, rule.name.split(":")[0], out)
    return out


def add_claude_hooks(
    out: HookSet, sources: Iterable[tuple[HookSource, Any]], *, root: Path, pin: bool = True
) -> None:
    """Compile each ``(source, hooks)`` pair (Claude Code's format) into
    ``out``: its rules, its problems (file and reason; the rest loads) and
    its hooks on events that never fire here. ``pin``: project rules keep
    the scripts they run as they are now (not when trusted by the
    environment, where scripts may change)."""
    for source, hooks in sources:
        out.never += never_firing(hooks, source.file)
        rules, problems = claude_rules(
            hooks, file=source.file, source=source.path, scope=source.scope
        )
        out.problems += problems
        for rule in rules:
            _add(rule, source.file, out)
    if pin:
        _pin_scripts(out, root)


def _user_claude(root: Path, home: Path | None, out: HookSet) -> tuple[HookSource, Any] | None:
    """The ``hooks`` of the user's own ``~/.claude/settings.json`` (no trust
    needed), unless that file is one of the project's (a project opened at
    the home folder: the project's copy waits for its trust)."""
    base = user_home(home)
    if base is None:
        return None
    path = base / ".claude" / "settings.json"
    if not path.is_file():
        return None
    real = os.path.realpath(path)
    if any(real == os.path.realpath(root / rel) for rel in CLAUDE_FILES):
        return None
    ok, data = _read(path, USER_CLAUDE_FILE, out)
    if not ok or not isinstance(data, Mapping) or not data.get("hooks"):
        return None
    return HookSource(file=USER_CLAUDE_FILE, path=path, scope="user"), data["hooks"]


def _pin_scripts(out: HookSet, root: Path) -> None:
    """Each project shell rule keeps the scripts it runs as they are now (just
    checked against the trust): the engine runs it only while they still are."""
    for i, rule in enumerate(out.rules):
        if rule.scope == "project" and rule.action.type in ("shell", "exec") and not rule.scripts:
            action = rule.action
            command = action.command if action.type == "shell" else shlex.join(action.argv)
            pinned = tuple(hook_scripts(command, root))
            if pinned:
                out.rules[i] = replace(rule, scripts=pinned)
