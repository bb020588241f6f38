"""The ``edit_file`` tool: exact string replacement with helpful misses."""

from __future__ import annotations

import asyncio
import difflib
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ..errors import ToolError
from ._files import atomic_write_text, read_for_preview, read_text
from ._paths import display_path, missing_path_error, resolve_path, write_destination
from .base import FileChange, tool
from .context import RunContext

__all__ = ["edit_file"]

_SNIPPET_CONTEXT = 3
_SNIPPET_MAX_LINES = 30
_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t")


def _preview(ctx: RunContext, args: dict[str, Any]) -> FileChange | None:
    path, old, new = args.get("path"), args.get("old_string"), args.get("new_string")
    if not (isinstance(path, str) and isinstance(old, str) and isinstance(new, str)):
        return None
    exists, before = read_for_preview(resolve_path(ctx, path))
    if not exists:
        return FileChange(path=path, before=None, after=new, whole_file=False) if not old else None
    if before is None:
        return None
    if not old:
        return (
            None
            if before.strip()
            else FileChange(path=path, before=before, after=new, whole_file=False)
        )
    old, new = _match_line_endings(before, old, new)
    starts = _occurrences(before, old)
    if not starts or (len(starts) > 1 and not args.get("replace_all")):
        return None
    after = before.replace(old, new) if args.get("replace_all") else before.replace(old, new, 1)
    return FileChange(path=path, before=before, after=after, whole_file=False)


@tool(
    read_only=False,
    kind="edit",
    path_args=("path",),
    family="edit",
    rule_names=frozenset({"Edit", "Write", "MultiEdit"}),
    aliases=frozenset({"Edit", "MultiEdit"}),
    reads_paths=True,
    display_key="path",
    file_effect="edited",
    background_ok=True,
    preview=_preview,
)
async def edit_file(
    ctx: RunContext,
    path: Annotated[
        str, Field(description="File to edit: relative to the project root, or absolute.")
    ],
    old_string: Annotated[
        str, Field(description="Exact text to replace (empty only to create a new file).")
    ],
    new_string: Annotated[str, Field(description="Text to put in its place.")],
    replace_all: Annotated[
        bool, Field(description="Replace every occurrence instead of requiring exactly one.")
    ] = False,
) -> str:
    """Replace exact text in a file.

    - `old_string` must match the file exactly, whitespace and indentation
      included, and must occur exactly once unless `replace_all` is true; add
      surrounding lines to make it unique. Read the file first.
    - Copy text from read_file output without its line-number prefix (the
      number and the tab before each line).
    - Use `replace_all` to rename something throughout the file.
    - An empty `old_string` creates a new file containing `new_string`.
    - Returns the edited region with line numbers.
    """
    if old_string == new_string:
        raise ToolError("old_string and new_string are identical; the edit would change nothing")
    target, roots = write_destination(ctx, path)
    shown = display_path(ctx, target)
    try:
        return await asyncio.to_thread(
            _edit, ctx, target, roots, shown, old_string, new_string, replace_all
        )
    except PermissionError:
        raise ToolError(f"permission denied editing {shown}") from None


def _edit(
    ctx: RunContext,
    target: Path,
    roots: tuple[Path, ...],
    shown: str,
    old: str,
    new: str,
    replace_all: bool,
) -> str:
    if target.is_dir():
        raise ToolError(f"{shown} is a directory, not a file")
    if not target.exists():
        if old:
            err = missing_path_error(ctx, target)
            raise ToolError(f"{err}; to create a file use write_file (or an empty old_string)")
        atomic_write_text(
            target, new, roots, checkpoints=ctx.checkpoints, shown=shown
        )  # parents made without following links
        return f"Created {shown}.\n" + _snippet(new, 0, new)
    if not target.is_file():
        raise ToolError(f"{shown} is not a regular file (a device, socket or pipe)")
    text = read_text(target, shown)
    if not old:
        if text.strip():
            raise ToolError(
                f"old_string is empty but {shown} already has content; give the exact text "
                "to replace, or use write_file to replace the whole file"
            )
        atomic_write_text(target, new, roots, checkpoints=ctx.checkpoints, shown=shown)
        return f"Wrote {shown} (it was empty).\n" + _snippet(new, 0, new)
    old, new = _match_line_endings(text, old, new)
    starts = _occurrences(text, old)
    if not starts:
        raise ToolError(_not_found(text, old, shown))
    if len(starts) > 1 and not replace_all:
        lines = ", ".join(str(_line_of(text, s)) for s in starts[:20])
        more = ", ..." if len(starts) > 20 else ""
        raise ToolError(
            f"old_string occurs {len(starts)} times in {shown} (at lines {lines}{more}); "
            "include more surrounding lines to make it unique, or set replace_all=true"
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    atomic_write_text(target, updated, roots, checkpoints=ctx.checkpoints, shown=shown)
    first = starts[0]
    head = f"Edited {shown}: replaced {len(starts)} occurrence{'s' if len(starts) > 1 else ''}"
    if len(starts) > 1:
        shift = len(new) - len(old)
        where = ", ".join(str(_line_of(updated, s + i * shift)) for i, s in enumerate(starts[:20]))
        head += f" (now at lines {where}{', ...' if len(starts) > 20 else ''})"
    return head + ".\n" + _snippet(updated, first, new)


def _match_line_endings(text: str, old: str, new: str) -> tuple[str, str]:
    """Let LF-only strings match a CRLF file (read_file shows lines without \\r)."""
    if "\r\n" in text and "\n" in old and "\r\n" not in old and old not in text:
        crlf_old = old.replace("\n", "\r\n")
        if crlf_old in text:
            return crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
    return old, new


def _occurrences(text: str, old: str) -> list[int]:
    starts: list[int] = []
    i = text.find(old)
    while i != -1:
        starts.append(i)
        i = text.find(old, i + len(old))
    return starts


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _snippet(text: str, start: int, inserted: str) -> str:
    """The edited region (plus a little context) in ``cat -n`` form."""
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    first = _line_of(text, start)
    last = first + inserted.count("\n")
    lo = max(first - _SNIPPET_CONTEXT, 1)
    hi = min(last + _SNIPPET_CONTEXT, len(lines))
    cut = hi - lo + 1 > _SNIPPET_MAX_LINES
    if cut:
        hi = lo + _SNIPPET_MAX_LINES - 1
    body = "\n".join(f"{n:>6}\t{lines[n - 1].rstrip(chr(13))}" for n in range(lo, hi + 1))
    return body + ("\n   ...\t(edited region continues)" if cut else "")


def _norm(line: str) -> str:
    return " ".join(line.split())


def _not_found(text: str, old: str, shown: str) -> str:
    msg = f"old_string was not found in {shown}."
    old_lines = old.strip("\n").split("\n")
    if any(_LINE_NUMBER_PREFIX.match(line) for line in old_lines):
        return msg + (
            " It seems to include line-number prefixes from read_file output; "
            "remove the number and tab at the start of each line."
        )
    file_lines = text.split("\n")
    normed = [_norm(line) for line in file_lines]
    want = [_norm(line) for line in old_lines]
    span = len(want)
    for i in range(len(normed) - span + 1):
        if normed[i] == want[0] and normed[i : i + span] == want:
            return (
                msg
                + f" {_span_name(i, span)} match{'es' if span == 1 else ''} except for"
                + " whitespace or indentation;"
                + " copy them exactly:\n"
                + _numbered(file_lines, i, span)
            )
    anchor = next((w for w in want if w), "")
    candidates = difflib.get_close_matches(anchor, set(normed), n=3, cutoff=0.6) if anchor else []
    best: tuple[float, int] | None = None
    for cand in candidates:
        idx = normed.index(cand)
        offset = want.index(anchor)
        lo = max(idx - offset, 0)
        window = "\n".join(normed[lo : lo + span])
        ratio = difflib.SequenceMatcher(None, window, "\n".join(want)).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, lo)
    if best is not None:
        return (
            msg
            + f" The closest text is at line {best[1] + 1}:\n"
            + _numbered(file_lines, best[1], span)
            + "\nRead the file again and copy the text exactly."
        )
    return (
        msg
        + " Read the file again (it may have changed) and copy the text exactly, whitespace included."
    )


def _numbered(lines: list[str], start: int, count: int) -> str:
    count = min(count, 15)
    return "\n".join(
        f"{n + 1:>6}\t{lines[n].rstrip(chr(13))}"
        for n in range(start, min(start + count, len(lines)))
    )


def _span_name(i: int, span: int) -> str:
    return f"Line {i + 1}" if span == 1 else f"Lines {i + 1}-{i + span}"
