"""Build a project's ``Gate`` from its resolved config and settings files."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..config import ConfiguredRule
from ..config.trust_items import TrustPolicy
from .audit import AuditRecord
from .gate import Gate
from .modes import Mode
from .rules import RuleSource

__all__ = ["gate_for_project"]


def gate_for_project(
    root: Path,
    rules: Iterable[ConfiguredRule],
    *,
    mode: Mode | None = None,
    on_audit: Callable[[AuditRecord], None] | None = None,
    trust: TrustPolicy | None = None,
    unreadable: Iterable[str] = (),
    sandboxed: bool = False,
) -> Gate:
    """The gate for ``root``: rules from ``.mewcode.yaml`` / ``~/.mewcode/config.yaml``
    (as resolved by the config loader, each with its file) plus the project's
    ``.claude/settings*.json`` and ``.mewcode/settings.local.yaml``. Bad rules are
    kept in ``gate.rules.problems``; a bad deny rule, or a config file that
    could not be read at all (``unreadable``, from ``ResolvedConfig``), fails
    closed. ``trust`` keeps an untrusted project's settings from loosening;
    ``sandboxed`` says the session's OS sandbox is active."""
    sections: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for rule in rules:
        sections[rule.source][rule.action].append(rule.rule)
    config_permissions: list[tuple[Any, RuleSource]] = [
        (dict(block), RuleSource(label=source, path=Path(source), base=root))
        for source, block in sections.items()
    ]
    gate = Gate.for_project(
        root,
        mode=mode,
        config_permissions=config_permissions,
        on_audit=on_audit,
        trust=trust,
        sandboxed=sandboxed,
    )
    for path in unreadable:
        gate.rules.fail_closed(
            RuleSource(label=path, path=Path(path)), "the file could not be read"
        )
    return gate
