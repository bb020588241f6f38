"""Loading permission rules from files, and saving "always allow" answers.

Sources read here: the ``permissions`` block of ``.claude/settings.json`` and
``.claude/settings.local.json`` (``allow``/``ask``/``deny``, plus
``additionalDirectories``, ``defaultMode`` and
``disableBypassPermissionsMode``; other keys are ignored), and MewCode's
local, not-committed ``.mewcode/settings.local.yaml`` (same lists).
MewCode's own config files are parsed by ``core.config``; pass their
``permissions`` section to ``rules_from_permissions``.

Every problem is reported, never raised: a file that cannot be read is one
``RuleProblem`` naming it; a bad rule is one naming the file and the rule.
A file that cannot be read but mentions deny rules, and a deny rule that
does not parse, fail closed (``RuleSet.broken``): what they may cover asks.

Given the project's ``trust``, these files can only tighten unless it
allows each loosening entry's exact item: allow rules, additional
directories and a lenient ``defaultMode`` (``acceptEdits``,
``bypassPermissions``) it does not allow are left out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..config.trust_items import TrustPolicy, allow_rule_item, directory_item, mode_item
from ..fs import atomic_write_within
from .modes import MODES, Mode
from .rules import BEHAVIORS, Behavior, RuleProblem, RuleSet, RuleSource, parse_rule

__all__ = [
    "CLAUDE_SETTINGS",
    "LOCAL_SETTINGS",
    "LoadedSettings",
    "load_claude_settings",
    "load_local_settings",
    "load_project_settings",
    "rules_from_permissions",
    "save_local_rule",
]

CLAUDE_SETTINGS = (Path(".claude/settings.json"), Path(".claude/settings.local.json"))
LOCAL_SETTINGS = Path(".mewcode/settings.local.yaml")
_KNOWN_KEYS = frozenset(
    {
        "allow",
        "ask",
        "deny",
        "additionalDirectories",
        "additional_directories",
        "defaultMode",
        "disableBypassPermissionsMode",
    }
)
_LOCAL_HEADER = (
    '# Written by MewCode when you chose "always allow" and saved it.\n'
    "# Local to this checkout: keep it out of version control.\n"
)


@dataclass(kw_only=True, slots=True)
class LoadedSettings:
    """Rules and related settings from one or more files."""

    rules: RuleSet = field(default_factory=RuleSet)
    additional_dirs: list[Path] = field(default_factory=list)
    default_mode: Mode | None = None
    bypass_disabled: bool = False
    files: list[Path] = field(default_factory=list)

    @property
    def problems(self) -> list[RuleProblem]:
        return self.rules.problems

    def merge(self, other: LoadedSettings) -> None:
        """Add ``other`` (a later, more specific source) to this one."""
        self.rules.extend(other.rules)
        self.additional_dirs += [d for d in other.additional_dirs if d not in self.additional_dirs]
        self.default_mode = other.default_mode or self.default_mode
        self.bypass_disabled = self.bypass_disabled or other.bypass_disabled
        self.files += other.files


def rules_from_permissions(permissions: Any, source: RuleSource) -> RuleSet:
    """Rules from a ``permissions`` mapping (or an object with ``allow``/``ask``/``deny``)."""
    out = RuleSet()
    for behavior in BEHAVIORS:
        entries = (
            permissions.get(behavior)
            if isinstance(permissions, Mapping)
            else getattr(permissions, behavior, None)
        )
        if entries is None:
            continue
        if isinstance(entries, str):
            entries = [entries]
        if not isinstance(entries, list | tuple):
            out.problems.append(
                RuleProblem(
                    source=source.label,
                    text="",
                    message=f"permissions.{behavior} must be a list of rule strings, not {type(entries).__name__}",
                )
            )
            continue
        for entry in entries:
            out.add_text(entry, behavior, source)
    return out


def _only_trusted(block: Mapping[str, Any], rel: str, trust: TrustPolicy | None) -> dict[str, Any]:
    """``block`` without the loosening entries ``trust`` does not allow, each
    judged by the item of exactly its value (what the trust card showed)."""
    out = dict(block)
    if trust is None:
        return out
    allow = out.get("allow")
    if isinstance(allow, str):
        allow = [allow]
    if isinstance(allow, list):
        out["allow"] = [r for r in allow if trust.allows(allow_rule_item(rel, r))]
    mode = mode_item(rel, out.get("defaultMode"))
    if mode is not None and not trust.allows(mode):
        out.pop("defaultMode")
    for key in ("additionalDirectories", "additional_directories"):
        dirs = out.get(key)
        if dirs is None:
            continue
        listed = dirs if isinstance(dirs, list) else [dirs]
        out[key] = [d for d in listed if trust.allows(directory_item(rel, d))]
    return out


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _apply_block(
    block: Any,
    settings: LoadedSettings,
    source: RuleSource,
    root: Path,
    *,
    trust: TrustPolicy | None = None,
) -> None:
    label = source.label
    if block is None:
        return
    if not isinstance(block, Mapping):
        settings.rules.problems.append(
            RuleProblem(
                source=label, text="", message="'permissions' must be an object; file ignored"
            )
        )
        if "deny" in json.dumps(block, default=str).lower():
            settings.rules.fail_closed(source, "'permissions' is not an object")
        return
    if source.path is not None:
        block = _only_trusted(block, _relative(source.path, root), trust)
    settings.rules.extend(rules_from_permissions(block, source))
    dirs = block.get("additionalDirectories", block.get("additional_directories"))
    for entry in dirs if isinstance(dirs, list) else ([] if dirs is None else [dirs]):
        if not isinstance(entry, str) or not entry.strip():
            settings.rules.problems.append(
                RuleProblem(
                    source=label,
                    text=repr(entry),
                    message="additionalDirectories entries must be paths",
                )
            )
            continue
        path = Path(os.path.expanduser(entry))
        path = path if path.is_absolute() else root / path
        if not path.is_dir():
            settings.rules.problems.append(
                RuleProblem(
                    source=label,
                    text=entry,
                    message="additional directory does not exist",
                    severity="warning",
                )
            )
        settings.additional_dirs.append(path)
    mode = block.get("defaultMode")
    if mode is not None:
        if mode in MODES:
            settings.default_mode = mode
        else:
            settings.rules.problems.append(
                RuleProblem(
                    source=label,
                    text=str(mode),
                    message=f"defaultMode must be one of {', '.join(MODES)}; ignored",
                    severity="warning",
                )
            )
    if block.get("disableBypassPermissionsMode") == "disable":
        settings.bypass_disabled = True
    for key in block:
        if key not in _KNOWN_KEYS:
            settings.rules.problems.append(
                RuleProblem(
                    source=label,
                    text="",
                    message=f"permissions.{key} is not used by MewCode",
                    severity="warning",
                )
            )


def load_claude_settings(
    path: Path, *, project_root: Path, trust: TrustPolicy | None = None
) -> LoadedSettings:
    """Read one Claude Code settings file. Missing file: empty settings."""
    settings = LoadedSettings()
    label = str(path)
    if not path.is_file():
        return settings
    settings.files.append(path)
    source = RuleSource(label=label, path=path, base=project_root)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        settings.rules.problems.append(
            RuleProblem(
                source=f"{label}:{exc.lineno}",
                text="",
                message=f"invalid JSON ({exc.msg}); file ignored",
            )
        )
        if "deny" in text.lower():
            settings.rules.fail_closed(source, f"invalid JSON at line {exc.lineno}")
        return settings
    except (OSError, UnicodeDecodeError) as exc:
        settings.rules.problems.append(
            RuleProblem(source=label, text="", message=f"cannot read: {exc}")
        )
        return settings
    if not isinstance(data, Mapping):
        settings.rules.problems.append(
            RuleProblem(source=label, text="", message="not a JSON object; file ignored")
        )
        if "deny" in text.lower():
            settings.rules.fail_closed(source, "not a JSON object")
        return settings
    _apply_block(data.get("permissions"), settings, source, project_root, trust=trust)
    return settings


def load_local_settings(root: Path, trust: TrustPolicy | None = None) -> LoadedSettings:
    """Read ``<root>/.mewcode/settings.local.yaml`` (rules saved by "always allow")."""
    path = root / LOCAL_SETTINGS
    settings = LoadedSettings()
    if not path.is_file():
        return settings
    settings.files.append(path)
    source = RuleSource(label=str(path), path=path, base=root)
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        settings.rules.problems.append(
            RuleProblem(source=str(path), text="", message=f"cannot read: {exc}")
        )
        if isinstance(exc, yaml.YAMLError) and "deny" in text.lower():
            settings.rules.fail_closed(source, "invalid YAML")
        return settings
    if data is None:
        return settings
    if not isinstance(data, Mapping):
        settings.rules.problems.append(
            RuleProblem(source=str(path), text="", message="not a mapping; file ignored")
        )
        return settings
    _apply_block(data.get("permissions"), settings, source, root, trust=trust)
    return settings


def load_project_settings(root: Path, trust: TrustPolicy | None = None) -> LoadedSettings:
    """The project's Claude settings (shared, then local) and MewCode's local file
    (``trust``: see the module docstring; ``None`` applies everything)."""
    settings = LoadedSettings()
    for rel in CLAUDE_SETTINGS:
        settings.merge(load_claude_settings(root / rel, project_root=root, trust=trust))
    settings.merge(load_local_settings(root, trust))
    return settings


def save_local_rule(root: Path, rule: str, behavior: Behavior = "allow") -> Path:
    """Add ``rule`` under ``permissions.<behavior>`` of ``<root>/.mewcode/settings.local.yaml``.

    The file is created if needed and replaced atomically; a rule already
    present is not added twice. Also makes sure ``.mewcode/.gitignore``
    ignores the file. Raises ``ValueError`` for a bad rule or an unreadable file.
    """
    parse_rule(rule, behavior, RuleSource(label=str(LOCAL_SETTINGS)))
    root = Path(os.path.realpath(root))
    path = root / LOCAL_SETTINGS
    data: dict[str, Any] = {}
    if path.exists():
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ValueError(f"{path}: cannot update, the file is not valid YAML: {exc}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise ValueError(f"{path}: cannot update, the file is not a mapping")
        data = loaded or {}
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise ValueError(f"{path}: cannot update, 'permissions' is not a mapping")
    entries = permissions.setdefault(behavior, [])
    if not isinstance(entries, list):
        raise ValueError(f"{path}: cannot update, 'permissions.{behavior}' is not a list")
    if rule not in entries:
        entries.append(rule)
    text = _LOCAL_HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    atomic_write_within(path, text, [root])
    _ensure_ignored(root)
    return path


def _ensure_ignored(root: Path) -> None:
    ignore = root / LOCAL_SETTINGS.parent / ".gitignore"
    name = LOCAL_SETTINGS.name
    try:
        current = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    except (OSError, UnicodeDecodeError):
        return
    if name in current.splitlines():
        return
    prefix = current if not current or current.endswith("\n") else current + "\n"
    atomic_write_within(ignore, prefix + name + "\n", [root])
