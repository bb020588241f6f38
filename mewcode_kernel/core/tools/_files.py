"""Reading text files safely and replacing them atomically (blocking helpers:
call them through ``asyncio.to_thread``)."""

from __future__ import annotations

import codecs
import contextlib
import os
from pathlib import Path

from ..errors import ToolError

__all__ = ["SNIFF_BYTES", "atomic_write_text", "check_text_sample", "read_text"]

SNIFF_BYTES = 8192


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


def atomic_write_text(path: Path, content: str, roots: tuple[Path, ...] = ()) -> bool:
    """Replace ``path`` with ``content`` (UTF-8) atomically; return True if it existed.

    The text goes to a temporary file in the same directory, is fsynced and
    renamed over the target, so readers see the old or the new file, never a
    torn one; an existing file keeps its permission bits. The directory is
    reached from one of ``roots`` (default: the target's nearest existing
    ancestor) without following any symlink, so a link planted between the
    permission check and the write is refused rather than followed.
    """
    from ..permission.sandbox import atomic_write_within

    existed = os.path.lexists(path)
    atomic_write_within(path, content, roots or (_nearest_existing(path.parent),))
    _fsync_dir(path.parent)
    return existed


def write_target(
    root: Path, additional: tuple[Path, ...], raw: str
) -> tuple[Path, tuple[Path, ...]]:
    """Where a write of ``raw`` lands, and the directories it is reached from.

    Resolved now, at the write, not trusted from the permission check: a path
    that names a place inside the project but leads outside it through a
    symlink (one swapped in after the check, say) is refused. A write outside
    the project (one the person approved) is reached from its nearest existing
    ancestor.
    """
    base = tuple(Path(os.path.abspath(r)) for r in (root, *additional))
    real_roots = tuple(Path(os.path.realpath(r)) for r in base)
    lexical = Path(os.path.normpath(os.path.join(root, os.path.expanduser(raw))))
    target = Path(os.path.realpath(lexical))
    inside_lexically = any(_within(lexical, r) for r in (*base, *real_roots))
    containing = tuple(r for r in real_roots if _within(target, r))
    if inside_lexically and not containing:
        raise ToolError(f"refusing to write {raw}: it leads outside the project through a symlink")
    return target, containing or (_nearest_existing(target.parent),)


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _nearest_existing(directory: Path) -> Path:
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    return Path(os.path.realpath(directory))


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
