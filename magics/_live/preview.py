"""What a file-changing tool call would change, read before it runs.

``change_preview(call, root)`` is the one place the front end works out the
"before" and "after" text of a ``write_file`` or ``edit_file`` call (reading
the file and applying the edit as the tool would), so a diff can be drawn on
the approval card and the tool row. It is a stand-in for metadata the tools
themselves will carry; nothing else in the front end reads files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mewcode_kernel.core.messages import ToolUseBlock

__all__ = ["MAX_PREVIEW_BYTES", "ChangePreview", "change_preview"]

MAX_PREVIEW_BYTES = 1_000_000
"""Files larger than this are not read for a preview."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ChangePreview:
    path: str
    before: str | None  # None: the file does not exist yet
    after: str
    whole_file: bool  # a write (replaces the file) rather than an edit


def change_preview(call: ToolUseBlock, root: Path) -> ChangePreview | None:
    """The change ``call`` would make, or ``None`` when it is not a file change
    or cannot be worked out (unreadable file, edit text not found)."""
    args = call.input
    path = args.get("path") or args.get("file_path")
    if not isinstance(path, str) or not path:
        return None
    target = Path(os.path.expanduser(path))
    if not target.is_absolute():
        target = root / target
    exists = os.path.lexists(target)
    before = _read(target) if exists else None
    if exists and before is None:
        return None  # too large or unreadable: no preview rather than a wrong one
    if call.name == "write_file":
        content = args.get("content")
        if not isinstance(content, str):
            return None
        return ChangePreview(path=path, before=before, after=content, whole_file=True)
    if call.name == "edit_file":
        old, new = args.get("old_string"), args.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        if before is None and old == "":
            return ChangePreview(path=path, before=None, after=new, whole_file=False)
        if before is None or not old or old not in before:
            return None
        count = -1 if args.get("replace_all") else 1
        return ChangePreview(
            path=path, before=before, after=before.replace(old, new, count), whole_file=False
        )
    return None


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_PREVIEW_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
