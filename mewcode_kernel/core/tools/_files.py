"""Reading text files safely and replacing them atomically (blocking helpers:
call them through ``asyncio.to_thread``)."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

from ..errors import ToolError
from ..fs import atomic_write_within
from ..fs.durable import fsync_dir
from .context import FileCheckpoints

__all__ = [
    "PREVIEW_BYTES",
    "SNIFF_BYTES",
    "atomic_write_text",
    "check_text_sample",
    "read_for_preview",
    "read_text",
]

SNIFF_BYTES = 8192
PREVIEW_BYTES = 1_000_000
"""Files larger than this are not read to preview a change."""


def check_text_sample(sample: bytes, shown: str) -> None:
    """Refuse a file whose first bytes look binary (NUL) or are not UTF-8."""
    if b"\0" in sample:
        raise ToolError(
            f"{shown} is a binary file (it contains NUL bytes); it cannot be shown as text"
        )
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not UTF-8 text (undecodable byte at offset {exc.start}); "
            "it may be binary or in another encoding"
        ) from None


def read_text(path: Path, shown: str) -> str:
    """The whole file as text; ``ToolError`` if binary or not valid UTF-8."""
    data = path.read_bytes()
    check_text_sample(data[:SNIFF_BYTES], shown)
    if b"\0" in data:
        raise ToolError(f"{shown} is a binary file (it contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{shown} is not valid UTF-8 (undecodable byte at offset {exc.start})"
        ) from None


def read_for_preview(path: Path) -> tuple[bool, str | None]:
    """``(exists, text)`` of a file about to be changed; ``text`` is ``None``
    when it exists but is too large, not a regular file, binary or unreadable
    (so no preview is drawn rather than a wrong one)."""
    if not os.path.lexists(path):
        return False, None
    try:
        if not path.is_file() or path.stat().st_size > PREVIEW_BYTES:
            return True, None
        return True, read_text(path, path.name)
    except (OSError, ToolError):
        return True, None


def atomic_write_text(
    path: Path,
    content: str,
    roots: tuple[Path, ...],
    *,
    checkpoints: FileCheckpoints | None = None,
    shown: str = "",
) -> bool:
    """Replace ``path`` with ``content`` (UTF-8) atomically; return True if it existed.

    The text goes to a temporary file in the same directory, is fsynced and
    renamed over the target, so readers see the old or the new file, never a
    torn one; an existing file keeps its permission bits. The directory is
    reached from one of ``roots`` (see ``Workspace.write_destination``)
    without following any symlink, so a link planted between the permission
    check and the write is refused rather than followed. ``checkpoints``
    (the turn's recorder) saves the file as it was before the write.
    """
    existed = os.path.lexists(path)
    data = content.encode("utf-8")
    if checkpoints is not None:
        checkpoints.before_write(path, shown or path.name)
    atomic_write_within(path, data, roots)
    fsync_dir(path.parent)
    if checkpoints is not None:
        checkpoints.after_write(path, data)
    return existed
