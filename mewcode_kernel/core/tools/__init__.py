"""Tools offered to the model, and the built-in six."""

from __future__ import annotations

from .base import Tool, ToolContext, ToolKind, ToolRegistry, tool
from .bash_tool import bash
from .edit_tool import edit_file
from .glob_tool import glob
from .grep_tool import grep
from .read_tool import read_file
from .write_tool import write_file

__all__ = [
    "Tool",
    "ToolContext",
    "ToolKind",
    "ToolRegistry",
    "bash",
    "builtin_tools",
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
