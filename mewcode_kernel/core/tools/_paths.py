"""Path handling shared by the file tools.

Tools accept paths relative to the project root, absolute paths and ``~``
paths. They do not sandbox: the permission layer decides what is allowed,
using the same resolver (the run context's ``workspace``) so both see the
same file.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from ..errors import ToolError
from .context import RunContext

__all__ = ["display_path", "missing_path_error", "resolve_path", "write_destination"]


def resolve_path(ctx: RunContext, p: str | os.PathLike[str]) -> Path:
    """Absolute, normalised path for a tool argument: ``~`` expanded, relative
    paths joined to ``ctx.root``, ``..`` and symlinks resolved (the target
    need not exist)."""
    text = os.fspath(p)
    if not text.strip():
        raise ToolError("path is empty")
    if "\0" in text:
        raise ToolError("path contains a NUL character")
    return Path(ctx.workspace.resolve(text).path)


def write_destination(ctx: RunContext, p: str) -> tuple[Path, tuple[Path, ...]]:
    """Where a write of the tool argument ``p`` lands, and the directories it
    is reached from without following a symlink (``Workspace.write_destination``)."""
    resolve_path(ctx, p)  # validates the argument
    target, roots = ctx.workspace.write_destination(p)
    return Path(target), tuple(Path(r) for r in roots)


def display_path(ctx: RunContext, path: Path) -> str:
    """``path`` as the model should see it: relative to the root when inside it."""
    root = ctx.root.expanduser().resolve(strict=False)
    try:
        rel = path.relative_to(root)
    except ValueError:
        return str(path)
    return rel.as_posix() if rel.parts else "."


def missing_path_error(ctx: RunContext, path: Path, *, what: str = "file") -> ToolError:
    """A ``ToolError`` for a path that does not exist, naming close matches."""
    shown = display_path(ctx, path)
    parent = path.parent
    if not parent.is_dir():
        ancestor = next((a for a in parent.parents if a.is_dir()), None)
        where = (
            f"; the nearest existing directory is {display_path(ctx, ancestor)}" if ancestor else ""
        )
        return ToolError(
            f"{what} not found: {shown} (directory {display_path(ctx, parent)} does not exist{where})"
        )
    try:
        names = os.listdir(parent)
    except OSError:
        names = []
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    if not close:
        lowered = path.name.lower()
        close = [n for n in names if n.lower() == lowered]
    hint = ""
    if close:
        hint = "; did you mean " + " or ".join(display_path(ctx, parent / n) for n in close) + "?"
    return ToolError(f"{what} not found: {shown}{hint}")
