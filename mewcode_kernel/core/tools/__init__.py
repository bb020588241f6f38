"""Tools offered to the model, and the built-in six."""

from __future__ import annotations

from .base import Tool, ToolContext, ToolKind, ToolRegistry, tool

__all__ = ["Tool", "ToolContext", "ToolKind", "ToolRegistry", "tool"]
