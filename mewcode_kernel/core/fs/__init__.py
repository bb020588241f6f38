"""The file system as the agent sees it: the workspace (allowed directories and
the one path resolver) and writes that never follow a planted symlink."""

from __future__ import annotations

from .safe_write import (
    UnsafeWriteError,
    atomic_write_within,
    safe_open_for_write,
    safe_unlink_within,
)
from .workspace import PathKind, ResolvedPath, Workspace, suspicious_name

__all__ = [
    "PathKind",
    "ResolvedPath",
    "UnsafeWriteError",
    "Workspace",
    "atomic_write_within",
    "safe_open_for_write",
    "safe_unlink_within",
    "suspicious_name",
]
