"""The ``write_file`` tool."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ..errors import ToolError
from ._files import atomic_write_text, read_for_preview
from ._paths import display_path, resolve_path, write_destination
from .base import FileChange, tool
from .context import FileCheckpoints, RunContext

__all__ = ["write_file"]


def _preview(ctx: RunContext, args: dict[str, Any]) -> FileChange | None:
    path, content = args.get("path"), args.get("content")
    if not isinstance(path, str) or not isinstance(content, str) or not path.strip():
        return None
    exists, before = read_for_preview(resolve_path(ctx, path))
    if exists and before is None:
        return None
    return FileChange(path=path, before=before, after=content, whole_file=True)


@tool(
    read_only=False,
    kind="edit",
    path_args=("path",),
    family="edit",
    rule_names=frozenset({"Edit", "Write"}),
    aliases=frozenset({"Write"}),
    display_key="path",
    file_effect="edited",
    background_ok=True,
    preview=_preview,
)
async def write_file(
    ctx: RunContext,
    path: Annotated[
        str, Field(description="File to write: relative to the project root, or absolute.")
    ],
    content: Annotated[str, Field(description="The complete new content of the file.")],
) -> str:
    """Write a file, creating it (and any missing parent directories) or
    replacing it entirely.

    - Overwrites without merging: the file ends up holding exactly `content`.
    - To change part of an existing file, prefer edit_file, which sends only
      the change; read a file before overwriting it.
    - Do not create documentation or README files unless asked.
    """
    target, roots = write_destination(ctx, path)
    shown = display_path(ctx, target)
    return await asyncio.to_thread(_write, target, shown, content, roots, ctx.checkpoints)


def _write(
    target: Path,
    shown: str,
    content: str,
    roots: tuple[Path, ...],
    checkpoints: FileCheckpoints | None = None,
) -> str:
    if target.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path")
    for parent in (target.parent, *target.parent.parents):
        if parent.exists():
            if not parent.is_dir():
                raise ToolError(f"cannot create {shown}: {parent} is a file, not a directory")
            break
    old_lines: int | None = None
    if target.is_file():
        try:
            old_lines = _line_count(target.read_bytes())
        except OSError:
            old_lines = None
    try:
        # missing parents are made by the write itself, one directory at a time
        # without following links (``fs.safe_write``), never by ``mkdir -p``
        existed = atomic_write_text(target, content, roots, checkpoints=checkpoints, shown=shown)
    except PermissionError:
        raise ToolError(f"permission denied writing {shown}") from None
    except OSError as exc:
        raise ToolError(f"could not write {shown}: {exc.strerror or exc}") from None
    data = content.encode("utf-8")
    data_len, lines = len(data), _line_count(data)
    if existed:
        was = f"; it had {_n(old_lines, 'line')}" if old_lines is not None else ""
        return f"Overwrote {shown} ({_n(lines, 'line')}, {_n(data_len, 'byte')}{was})."
    return f"Created {shown} ({_n(lines, 'line')}, {_n(data_len, 'byte')})."


def _line_count(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
