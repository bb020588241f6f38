"""``SessionSafety``: the security side of an ``AgentSession``: the project's
trust, the OS sandbox, the secrets kept out of tool results, logs and child
processes, and the permission gate built on them.

A helper the session holds (composition, like ``SessionContext``): it builds
these from the config, says once what the person should know (settings
ignored until trusted, commands running unsandboxed), and rebuilds the gate
when the person trusts the project during the session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from .child_env import ChildEnv
from .config import ResolvedConfig, load_config
from .config.trust_items import TrustItem, allow_rule_item
from .fs import Workspace
from .permission import AuditRecord, Gate, Mode, PermissionGate, gate_for_project
from .permission.hidden import read_denied_paths
from .permission.rules import SESSION
from .permission.settings import LOCAL_SETTINGS
from .redaction import Redactor, environment_secrets
from .sandbox import Sandbox
from .tools.registry import ToolRegistry
from .trust import (
    ProjectTrust,
    approve_items,
    approve_project,
    assess_project,
    trusted_by_environment,
)

__all__ = ["SessionSafety"]


class SessionSafety:
    """Trust, sandbox and redaction for the session at ``root``."""

    def __init__(
        self,
        root: Path,
        config: ResolvedConfig,
        *,
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
        trust: ProjectTrust | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.root = root
        self.home = home
        # ``env`` is what config expansion read (tests pass their own); trust
        # (MEWCODE_TRUST_PROJECT) and bubblewrap come from the process's real
        # environment, which commands inherit, so its secrets are redacted too
        self.env = os.environ if env is None else env
        self.trust = trust or assess_project(root, home=home)
        self.sandbox = sandbox or Sandbox(root, config.sandbox, home=home)
        # known by value: the config's provider keys (whatever variable held
        # them), and the secrets of both environments
        known = [*_provider_keys(config).items(), *environment_secrets(self.env)]
        self.redactor = Redactor.from_environment(os.environ, known)
        #: the environment of every process the session starts (``core.child_env``)
        self.child_env = ChildEnv(config.env_allowlist, self.redactor)

    def notices(self) -> list[str]:
        """What to tell the person before the first turn (each at most once)."""
        return [n for n in (self.trust.notice(), self.sandbox.notice()) if n]

    def project_gate(
        self,
        config: ResolvedConfig,
        *,
        mode: Mode | None,
        on_audit: Callable[[AuditRecord], None],
    ) -> Gate:
        """The gate for the project's rules, as far as the trust lets them apply."""
        gate = gate_for_project(
            self.root,
            config.permission_rules,
            mode=mode,
            on_audit=on_audit,
            trust=self.trust,
            unreadable=config.unreadable_rule_files,
            sandboxed=self.sandbox.active,
        )
        gate.on_saved = self._saved_rule
        return gate

    def watch(self, gate: PermissionGate, tools: ToolRegistry, workspace: Workspace) -> None:
        """Hide from sandboxed processes what ``gate``'s Read deny rules cover
        (read when each process starts), resolved by the session's ``workspace``."""
        self.sandbox.hidden_paths = lambda: read_denied_paths(
            gate.list_rules(), workspace, tools.rule_families()
        )

    def trusted_now(self) -> bool:
        """Whether every project setting may be used now: approved, or
        ``MEWCODE_TRUST_PROJECT=1`` in the process's environment (set in a
        notebook after the session opened, it counts)."""
        return self.trust.trusted or trusted_by_environment()

    def allows(self, item: TrustItem | None) -> bool:
        """Whether the project setting ``item`` stands for may be used now."""
        return item is None or self.trust.allows(item) or trusted_by_environment()

    def approve(self, shown: ProjectTrust | None = None) -> ProjectTrust:
        """The person trusts the project's settings: exactly those ``shown`` to
        them (a card), or else those on disk now (``/trust yes``, which lists
        what it approved)."""
        current = shown if shown is not None else assess_project(self.root, home=self.home)
        self.trust = approve_project(current, home=self.home)
        return self.trust

    def reload(
        self, gate: PermissionGate, on_audit: Callable[[AuditRecord], None]
    ) -> tuple[ResolvedConfig, Gate]:
        """The config and gate as the current trust lets them apply, keeping
        ``gate``'s mode (unless the project now sets a default) and session rules."""
        config = load_config(self.root, self.home, self.env, trust=self.trust)
        self.redactor.add(_provider_keys(config))  # a project's provider, usable once trusted
        known = self.sandbox.support if self.sandbox.settings.enabled else None  # else detect
        self.sandbox = Sandbox(self.root, config.sandbox, support=known, home=self.home)
        fresh = self.project_gate(config, mode=None, on_audit=on_audit)
        if fresh.mode == "default":
            fresh.mode = gate.mode
        for rule in gate.list_rules():
            if rule.source == SESSION:
                fresh.rules.add(rule)
        return config, fresh

    def _saved_rule(self, path: Path, rule: str, behavior: str) -> None:
        """An "always allow" the person saved to the project's local settings is
        theirs: trust that rule, and nothing else that appeared meanwhile (a
        file a sandboxed command planted stays unapproved)."""
        if behavior != "allow" or self.trust.everything:
            return
        item = allow_rule_item(LOCAL_SETTINGS.as_posix(), rule)
        self.trust = approve_items(self.trust, [item], home=self.home)


def _provider_keys(config: ResolvedConfig) -> dict[str, str]:
    keys: dict[str, str] = {}
    for name, entry in config.providers.items():
        if entry.api_key is not None:
            keys[f"{name} API key"] = entry.api_key.get_secret_value()
    return keys
