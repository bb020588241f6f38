"""The ``read_file`` tool."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, BinaryIO

from pydantic import Field

from ..errors import ToolError
from ._files import SNIFF_BYTES, check_text_sample
from ._paths import display_path, missing_path_error, resolve_path
from .base import tool
from .context import RunContext

__all__ = ["DEFAULT_LIMIT", "MAX_LINE_CHARS", "MAX_OUTPUT_CHARS", "read_file"]

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 256 * 1024
_CHUNK = 64 * 1024


@tool(
    read_only=True,
    kind="read",
    path_args=("path",),
    family="read",
    rule_names=frozenset({"Read"}),
    aliases=frozenset({"Read"}),
    display_key="path",
    file_effect="read",
    large_output="reread",
    background_ok=True,
)
async def read_file(
    ctx: RunContext,
    path: Annotated[
        str, Field(description="File to read: relative to the project root, or absolute.")
    ],
    offset: Annotated[
        int | None,
        Field(
            ge=0,
            description="1-based line number to start at. Only for files too long to read at once.",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        Field(ge=1, description=f"Maximum number of lines to return (default {DEFAULT_LIMIT})."),
    ] = None,
) -> str:
    """Read a text file from the local filesystem.

    - Returns the file with line numbers, `cat -n` style (number, tab, line);
      the numbers are not part of the file, so never copy them into edits.
    - Reads up to 2000 lines from the start by default. For long files pass
      `offset` (1-based line to start at) and `limit`; the output says which
      offset to use to continue.
    - Lines longer than 2000 characters are cut, and the whole output is
      capped at 256 KiB.
    - Binary files are refused. For directories, use the glob tool instead.
    - Reading several files you may need is cheap: call read_file for each in
      parallel rather than one at a time.
    """
    target = resolve_path(ctx, path)
    return await asyncio.to_thread(_read, ctx, target, offset, limit)


def _read(ctx: RunContext, target: Path, offset: int | None, limit: int | None) -> str:
    shown = display_path(ctx, target)
    if target.is_dir():
        raise ToolError(
            f"{shown} is a directory, not a file; use glob (e.g. pattern='*', path='{shown}') to list it"
        )
    if not target.exists():
        raise missing_path_error(ctx, target)
    if not target.is_file():
        raise ToolError(f"{shown} is not a regular file (a device, socket or pipe)")
    start = max(offset or 1, 1)
    want = limit or DEFAULT_LIMIT
    try:
        with open(target, "rb") as fh:
            sample = fh.read(SNIFF_BYTES)
            if not sample:
                return f"{shown} is empty (0 bytes)."
            check_text_sample(sample, shown)
            fh.seek(0)
            return _render(fh, shown, start, want)
    except PermissionError:
        raise ToolError(f"permission denied reading {shown}") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a directory, not a file") from None


def _render(fh: BinaryIO, shown: str, start: int, want: int) -> str:
    out: list[str] = []
    size = 0
    lineno = 0
    stopped: str | None = None  # "limit" or "size"
    for raw, full_len in _lines(fh):
        lineno += 1
        if lineno < start:
            continue
        if len(out) >= want:
            stopped = "limit"
            break
        text = raw.decode("utf-8", "replace")
        if text.endswith("\n"):
            text = text[:-1]
        if text.endswith("\r"):
            text = text[:-1]
        if len(text) > MAX_LINE_CHARS or full_len > len(raw):
            text = f"{text[:MAX_LINE_CHARS]}… [line truncated: {full_len} bytes in all]"
        entry = f"{lineno:>6}\t{text}"
        if out and size + len(entry) + 1 > MAX_OUTPUT_CHARS:
            stopped = "size"
            break
        out.append(entry)
        size += len(entry) + 1
    if not out:
        raise ToolError(f"offset {start} is past the end of {shown}, which has {lineno} lines")
    last = start + len(out) - 1
    if stopped is None:
        return "\n".join(out)
    total = lineno + _count_lines(fh)
    if stopped == "limit":
        note = f"[showing lines {start}-{last} of {total}; to read more, call read_file with offset={last + 1}]"
    else:
        note = (
            f"[output capped at {MAX_OUTPUT_CHARS // 1024} KiB: showing lines {start}-{last} of "
            f"{total}; to read more, call read_file with offset={last + 1}]"
        )
    return "\n".join(out) + "\n\n" + note


def _lines(fh: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """Lines as (first bytes of the line, full length in bytes); memory stays
    bounded even for a file that is one huge line."""
    keep = MAX_LINE_CHARS * 4 + 4
    while True:
        chunk = fh.readline(_CHUNK)
        if not chunk:
            return
        if chunk.endswith(b"\n") or len(chunk) < _CHUNK:
            yield chunk, len(chunk)
            continue
        head, total = chunk[:keep], len(chunk)
        while True:
            more = fh.readline(_CHUNK)
            total += len(more)
            if not more or more.endswith(b"\n"):
                break
        yield head, total


def _count_lines(fh: BinaryIO) -> int:
    """Lines left from the current position (a last line without newline counts)."""
    count = 0
    last = b"\n"
    while chunk := fh.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)
