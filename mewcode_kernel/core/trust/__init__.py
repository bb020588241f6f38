"""Project trust: which of a project's settings may loosen anything.

``assess_project(root)`` lists what the project's files would loosen and
whether the user approved exactly that (``ProjectTrust``); loaders ask
``trust.may_use(kind, name)`` (or ``project_may_use(root, kind, name)``)
before using a project's allow rules, mode default, additional
directories, hooks, MCP servers, provider URLs and sandbox loosening.
``approve_project`` remembers an approval under ``~/.mewcode/``.
"""

from __future__ import annotations

from .items import PROJECT_FILES, TrustItem, TrustKind, hook_items, project_items
from .store import TRUST_FILE, TrustStore
from .trust import (
    TRUST_ENV,
    ProjectTrust,
    TrustState,
    approve_project,
    assess_project,
    describe,
    project_may_use,
)

__all__ = [
    "PROJECT_FILES",
    "TRUST_ENV",
    "TRUST_FILE",
    "ProjectTrust",
    "TrustItem",
    "TrustKind",
    "TrustState",
    "TrustStore",
    "approve_project",
    "assess_project",
    "describe",
    "hook_items",
    "project_items",
    "project_may_use",
]
