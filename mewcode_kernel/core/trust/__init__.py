"""Project trust: which of a project's settings may loosen anything.

``assess_project(root)`` lists what the project's files would loosen and
which of it the user approved (``ProjectTrust``); loaders ask
``trust.allows(item)`` for the item of exactly the setting they apply
(``core.config.trust_items``), or ``trust.may_use(kind, name)``, before
using a project's allow rules, mode default, additional directories, hooks,
MCP servers, provider URLs and sandbox loosening. ``approve_project``
remembers an approval in the user's MewCode folder.
"""

from __future__ import annotations

from ..config.trust_items import TrustItem, TrustKind, TrustPolicy, item_hash
from .items import PROJECT_FILES, hook_items, hook_scripts, project_items, script_digest
from .plugin_items import plugin_hook_item, plugin_hook_scripts, project_plugin_items
from .store import TRUST_FILE, TrustStore
from .trust import (
    TRUST_ENV,
    ProjectTrust,
    TrustState,
    approve_items,
    approve_project,
    assess_project,
    describe,
    project_may_use,
    trusted_by_environment,
)

__all__ = [
    "PROJECT_FILES",
    "TRUST_ENV",
    "TRUST_FILE",
    "ProjectTrust",
    "TrustItem",
    "TrustKind",
    "TrustPolicy",
    "TrustState",
    "TrustStore",
    "approve_items",
    "approve_project",
    "assess_project",
    "describe",
    "hook_items",
    "hook_scripts",
    "item_hash",
    "plugin_hook_item",
    "plugin_hook_scripts",
    "project_items",
    "project_may_use",
    "project_plugin_items",
    "script_digest",
    "trusted_by_environment",
]
