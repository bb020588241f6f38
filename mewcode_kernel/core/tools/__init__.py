"""Tools offered to the model: the seam (``Tool``, ``RunContext``, toolsets and
the registry) and the built-in six."""

from __future__ import annotations

from .base import RuleFamily, SearchSpec, Tool, ToolKind, ToolOutput, tool
from .bash_tool import bash
from .context import AgentServices, CancelScope, RunContext
from .edit_tool import edit_file
from .glob_tool import glob
from .grep_tool import grep
from .read_tool import read_file
from .registry import FunctionToolset, ToolRegistry, Toolset
from .write_tool import write_file

__all__ = [
    "AgentServices",
    "CancelScope",
    "FunctionToolset",
    "RuleFamily",
    "RunContext",
    "SearchSpec",
    "Tool",
    "ToolKind",
    "ToolOutput",
    "ToolRegistry",
    "Toolset",
    "bash",
    "builtin_tools",
    "builtin_toolset",
    "edit_file",
    "glob",
    "grep",
    "read_file",
    "tool",
    "write_file",
]


def builtin_tools() -> list[Tool]:
    """The six built-in tools, in the order they are offered to the model."""
    return [read_file, write_file, edit_file, glob, grep, bash]


def builtin_toolset() -> FunctionToolset:
    """The built-in tools as one toolset."""
    return FunctionToolset(builtin_tools(), name="built-in")
