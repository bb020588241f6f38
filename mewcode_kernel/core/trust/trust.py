"""Whether a project's settings may loosen anything: ``ProjectTrust``.

Until the user approves a project's security-relevant settings (see
``items``), they can only make things stricter: deny and ask rules apply;
allow rules, mode defaults, additional directories, hooks, MCP servers,
provider URLs and variables, and sandbox loosening do not. An approval is
remembered per root and digest of those settings (``store``): any change
to them asks again. ``MEWCODE_TRUST_PROJECT=1`` trusts without asking
(headless runs of one's own projects).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from ..userdirs import mewcode_home
from .items import TrustItem, TrustKind, project_items
from .store import TrustStore

__all__ = [
    "TRUST_ENV",
    "ProjectTrust",
    "TrustState",
    "approve_project",
    "assess_project",
    "describe",
    "project_may_use",
]

TRUST_ENV = "MEWCODE_TRUST_PROJECT"
TrustState = Literal["nothing to trust", "approved", "environment", "not approved", "changed"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ProjectTrust:
    """The project's loosening settings and whether they may be used."""

    root: Path
    items: tuple[TrustItem, ...]
    digest: str
    state: TrustState

    @property
    def trusted(self) -> bool:
        return self.state in ("nothing to trust", "approved", "environment")

    @property
    def needs_approval(self) -> bool:
        """Settings are being ignored until the user approves them."""
        return not self.trusted

    def may_use(self, kind: TrustKind, name: str | None = None) -> bool:
        """May the project's setting of ``kind`` (named ``name``) be used?
        ``True`` when trusted, or when the project sets no such thing."""
        if self.trusted:
            return True
        return not any(i.kind == kind and (name is None or i.name == name) for i in self.items)

    def ignored(self) -> tuple[TrustItem, ...]:
        """What is ignored now (empty when trusted)."""
        return () if self.trusted else self.items

    def notice(self) -> str | None:
        """One message saying what was ignored and how to trust it, or ``None``."""
        ignored = self.ignored()
        if not ignored:
            return None
        shown = "; ".join(f"{i.file}: {i.detail}" for i in ignored[:8])
        more = f"; and {len(ignored) - 8} more" if len(ignored) > 8 else ""
        why = "changed since you trusted it" if self.state == "changed" else "not trusted yet"
        return (
            f"This project's settings are {why}, so only their deny and ask rules apply. "
            f"Ignored: {shown}{more}. Trust them with /trust (or the card in a live notebook), "
            f"or {TRUST_ENV}=1 for headless runs."
        )


def _digest(items: list[TrustItem]) -> str:
    h = hashlib.sha256()
    for key in sorted(i.key for i in items):
        h.update(key.encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()


def _user_network(home: Path | None) -> str | None:
    state = mewcode_home(home)
    if state is None:
        return None
    try:
        data = yaml.safe_load((state / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    sandbox = data.get("sandbox") if isinstance(data, dict) else None
    value = sandbox.get("network") if isinstance(sandbox, dict) else None
    return value if isinstance(value, str) else None


class _NoStore:
    def digest_for(self, root: Path) -> str | None:
        return None


def _store(home: Path | None) -> TrustStore | _NoStore:
    try:
        return TrustStore(home)
    except RuntimeError:
        return _NoStore()


def assess_project(
    root: Path, *, home: Path | None = None, env: Mapping[str, str] | None = None
) -> ProjectTrust:
    """Read the project's loosening settings and decide whether they may be used."""
    env = os.environ if env is None else env
    root = Path(os.path.realpath(root))
    items = project_items(root, user_network=_user_network(home))
    digest = _digest(items)
    state: TrustState
    if not items:
        state = "nothing to trust"
    elif env.get(TRUST_ENV, "").strip() == "1":
        state = "environment"
    else:
        stored = _store(home).digest_for(root)
        state = "approved" if stored == digest else ("changed" if stored else "not approved")
    return ProjectTrust(root=root, items=tuple(items), digest=digest, state=state)


def approve_project(trust: ProjectTrust, *, home: Path | None = None) -> ProjectTrust:
    """Remember the user's approval of exactly ``trust``'s settings; returns the
    trust as it now stands."""
    if trust.items:
        TrustStore(home).approve(
            trust.root, trust.digest, [f"{i.file}: {i.detail}" for i in trust.items]
        )
    state: TrustState = "approved" if trust.items else "nothing to trust"
    return ProjectTrust(root=trust.root, items=trust.items, digest=trust.digest, state=state)


def project_may_use(
    root: Path,
    kind: TrustKind,
    name: str | None = None,
    *,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    trust: ProjectTrust | None = None,
) -> bool:
    """May the project's ``kind`` setting named ``name`` be used (an MCP server
    from ``.mewcode.yaml`` / ``.mcp.json``, a hook, ...)? The one question the
    MCP and hooks loaders ask; pass ``trust`` when the session already has it."""
    current = trust if trust is not None else assess_project(root, home=home, env=env)
    return current.may_use(kind, name)


def describe(trust: ProjectTrust) -> list[dict[str, Any]]:
    """The items as plain data (for ``/trust`` and the card)."""
    return [
        {"kind": i.kind, "file": i.file, "name": i.name, "detail": i.detail} for i in trust.items
    ]
