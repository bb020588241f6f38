"""The agent loop, its permission seam and per-session runtime state."""

from __future__ import annotations

from .gate import (
    ApprovalAnswer,
    ApprovalHandler,
    ApprovalRequest,
    Decision,
    DefaultGate,
    PermissionGate,
)
from .loop import DEFAULT_MAX_TURNS, Agent
from .runtime import SessionRuntime

__all__ = [
    "DEFAULT_MAX_TURNS",
    "Agent",
    "ApprovalAnswer",
    "ApprovalHandler",
    "ApprovalRequest",
    "Decision",
    "DefaultGate",
    "PermissionGate",
    "SessionRuntime",
]
