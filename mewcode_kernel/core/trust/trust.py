"""Whether a project's settings may loosen anything: ``ProjectTrust``.

Until the user approves a project's security-relevant settings (see
``items``), they can only make things stricter: deny and ask rules apply;
allow rules, mode defaults, additional directories, hooks, MCP servers,
provider URLs and variables, and sandbox loosening do not. An approval is
remembered per root and per item (``store``): a setting is used only while
its exact content is one the person approved, so any change to it, and any
setting added later, asks again. ``MEWCODE_TRUST_PROJECT=1`` trusts without
asking (headless runs of one's own projects).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..config._layer import load_layer
from ..config.trust_items import TrustItem, TrustKind, item_hash
from ..userdirs import mewcode_home
from .items import project_items
from .plugin_items import project_plugin_items
from .store import TrustStore

__all__ = [
    "TRUST_ENV",
    "ProjectTrust",
    "TrustState",
    "approve_items",
    "approve_project",
    "assess_project",
    "describe",
    "project_may_use",
    "trusted_by_environment",
]

TRUST_ENV = "MEWCODE_TRUST_PROJECT"
TrustState = Literal["nothing to trust", "approved", "environment", "not approved", "changed"]


def trusted_by_environment(env: Mapping[str, str] | None = None) -> bool:
    """``MEWCODE_TRUST_PROJECT=1`` in ``env`` (default: the process's, read now)."""
    return (os.environ if env is None else env).get(TRUST_ENV, "").strip() == "1"


@dataclass(frozen=True, kw_only=True, slots=True)
class ProjectTrust:
    """The project's loosening settings and which of them may be used.

    ``approved``: hashes of the items the person approved (``item_hash``);
    ``everything``: trusted by the environment. Loaders ask ``allows(item)``
    for the item of exactly the setting they are about to apply."""

    root: Path
    items: tuple[TrustItem, ...]
    digest: str
    state: TrustState
    approved: frozenset[str] = field(default_factory=frozenset)
    everything: bool = False

    @property
    def trusted(self) -> bool:
        """Every loosening setting of the project may be used."""
        return self.state in ("nothing to trust", "approved", "environment")

    @property
    def needs_approval(self) -> bool:
        """Settings are being ignored until the user approves them."""
        return not self.trusted

    def allows(self, item: TrustItem) -> bool:
        """May the setting ``item`` stands for be applied? (``TrustPolicy``)"""
        return self.everything or item_hash(item) in self.approved

    def may_use(self, kind: TrustKind, name: str | None = None) -> bool:
        """May the project's settings of ``kind`` (named ``name``) be used?
        ``True`` when each is approved, or the project sets no such thing."""
        return all(
            self.allows(i)
            for i in self.items
            if i.kind == kind and (name is None or i.name == name)
        )

    def ignored(self) -> tuple[TrustItem, ...]:
        """What is ignored now (empty when trusted)."""
        return tuple(i for i in self.items if not self.allows(i))

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


def _digest(items: Iterable[TrustItem]) -> str:
    h = hashlib.sha256()
    for key in sorted(i.key for i in items):
        h.update(key.encode("utf-8", "surrogatepass") + b"\n")
    return h.hexdigest()


def _user_network(home: Path | None) -> str | None:
    """The user's own ``sandbox.network``, as the config loader reads it."""
    state = mewcode_home(home)
    if state is None:
        return None
    layer, _ = load_layer(state / "config.yaml")
    return layer.file.sandbox.network if layer is not None else None


def _state(items: tuple[TrustItem, ...], approved: frozenset[str], known: bool) -> TrustState:
    if not items:
        return "nothing to trust"
    if all(item_hash(i) in approved for i in items):
        return "approved"
    return "changed" if known else "not approved"


def assess_project(
    root: Path, *, home: Path | None = None, env: Mapping[str, str] | None = None
) -> ProjectTrust:
    """Read the project's loosening settings and decide which may be used."""
    root = Path(os.path.realpath(root))
    items = tuple(project_items(root, user_network=_user_network(home)))
    items += tuple(project_plugin_items(root, home=home))
    digest = _digest(items)
    if items and trusted_by_environment(env):
        return ProjectTrust(
            root=root, items=items, digest=digest, state="environment", everything=True
        )
    store = _store(home)
    found = store.approval_for(root) if store is not None else None
    approved: frozenset[str] = frozenset()
    if found is not None:
        approved = found.keys
        if found.digest == digest:  # an approval of this very set (also one kept as a digest only)
            approved |= {item_hash(i) for i in items}
    return ProjectTrust(
        root=root,
        items=items,
        digest=digest,
        state=_state(items, approved, found is not None),
        approved=approved,
    )


def approve_project(trust: ProjectTrust, *, home: Path | None = None) -> ProjectTrust:
    """Remember the person's approval of exactly ``trust``'s items (what they
    were shown, never what is on disk at the moment they answer); returns the
    trust as it now stands."""
    if trust.items:
        keys = {item_hash(i) for i in trust.items}
        _save(trust.root, trust.items, keys, home)
    else:
        keys = set()
    return _with(trust, frozenset(keys))


def approve_items(
    trust: ProjectTrust, items: Iterable[TrustItem], *, home: Path | None = None
) -> ProjectTrust:
    """Add the person's own ``items`` (a rule they saved) to what ``trust``
    approves, and nothing else: a setting that appeared meanwhile stays
    unapproved."""
    added = list(items)
    if not added:
        return trust
    keys = set(trust.approved) | {item_hash(i) for i in added}
    covered = [i for i in (*trust.items, *added) if item_hash(i) in keys]
    _save(trust.root, covered, keys, home)
    known = list(trust.items) + [i for i in added if i.key not in {t.key for t in trust.items}]
    return _with(trust, frozenset(keys), items=tuple(known))


def _save(root: Path, items: Iterable[TrustItem], keys: set[str], home: Path | None) -> None:
    listed = list(dict.fromkeys(items))
    store = _store(home)
    if store is None:
        raise RuntimeError("no home directory to remember the approval in")
    store.approve(root, _digest(listed), [f"{i.file}: {i.detail}" for i in listed], keys)


def _with(
    trust: ProjectTrust, approved: frozenset[str], items: tuple[TrustItem, ...] | None = None
) -> ProjectTrust:
    listed = trust.items if items is None else items
    state: TrustState = (
        "environment" if trust.everything and listed else _state(listed, approved, True)
    )
    return ProjectTrust(
        root=trust.root,
        items=listed,
        digest=_digest(listed),
        state=state,
        approved=approved,
        everything=trust.everything,
    )


def _store(home: Path | None) -> TrustStore | None:
    try:
        return TrustStore(home)
    except RuntimeError:
        return None


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
    from ``.mewcode.yaml`` / ``.mcp.json``, a hook, ...)? Pass ``trust`` when
    the session already has it."""
    current = trust if trust is not None else assess_project(root, home=home, env=env)
    return current.may_use(kind, name)


def describe(trust: ProjectTrust) -> list[dict[str, Any]]:
    """The items as plain data (for ``/trust`` and the card)."""
    return [
        {
            "kind": i.kind,
            "file": i.file,
            "name": i.name,
            "detail": i.detail,
            "approved": trust.allows(i),
        }
        for i in trust.items
    ]
