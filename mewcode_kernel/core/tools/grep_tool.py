"""The ``grep`` tool: regex search over file contents (ripgrep or pure Python)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Annotated

from pydantic import Field

from ..errors import ToolError
from ._paths import display_path, missing_path_error, resolve_path
from .base import SearchSpec, tool
from .context import RunContext
from .search.globpat import GlobError
from .search.ignore import SearchScope
from .search.query import FileFilter, GrepQuery, GrepResult, Mode, compile_pattern
from .search.run import search

__all__ = ["DEFAULT_LIMITS", "MAX_LINE_CHARS", "format_result", "grep", "grep_text", "run_grep"]

DEFAULT_LIMITS: dict[str, int] = {"files_with_matches": 200, "count": 200, "content": 400}
MAX_LINE_CHARS = 500
MAX_OUTPUT_CHARS = 128 * 1024


@tool(
    read_only=True,
    kind="read",
    path_args=("path",),
    family="read",
    rule_names=frozenset({"Read", "Grep"}),
    aliases=frozenset({"Grep"}),
    search=SearchSpec(pattern_arg="glob"),
    display_key="pattern",
    background_ok=True,
)
async def grep(
    ctx: RunContext,
    pattern: Annotated[
        str, Field(description="Regular expression (Python `re` syntax) to search for.")
    ],
    path: Annotated[
        str | None,
        Field(description="File or directory to search (default: the project root)."),
    ] = None,
    glob: Annotated[
        str | None,
        Field(
            description='Only search files matching this glob, e.g. "*.py", "**/*.{ts,tsx}"; "!*.min.js" excludes.'
        ),
    ] = None,
    case_insensitive: Annotated[bool, Field(description="Ignore case.")] = False,
    output_mode: Annotated[
        Mode,
        Field(
            description='"files_with_matches" (default): paths only; "content": matching lines; "count": matches per file.'
        ),
    ] = "files_with_matches",
    context: Annotated[
        int | None,
        Field(
            ge=0,
            le=50,
            description='Lines of context before and after each match ("content" mode).',
        ),
    ] = None,
    head_limit: Annotated[
        int | None,
        Field(
            ge=1, description="Show at most this many entries (files, or lines in content mode)."
        ),
    ] = None,
) -> str:
    """Search file contents with a regular expression.

    - Use this for every content search; do not run grep or rg through bash.
    - Python regex syntax, matched line by line: `log.*Error`, `def \\w+\\(`.
      Escape literal metacharacters: `interface\\{\\}` finds `interface{}`.
    - `output_mode`: "files_with_matches" (default) lists files, "content"
      shows `path:line:text` (with `context` lines around), "count" gives
      matching lines per file. Results are sorted by path.
    - `glob` filters files: by name at any depth ("*.py", "*.{ts,tsx}") or
      by path below `path` ("src/**/*.ts"); a leading "!" excludes. Files
      ignored by .gitignore, the .git directory and binary files are skipped.
    - Output is capped (200 files / 400 lines by default); `head_limit`
      changes the cap.
    """
    return await grep_text(
        ctx,
        pattern,
        path=path,
        glob=glob,
        case_insensitive=case_insensitive,
        output_mode=output_mode,
        context=context or 0,
        head_limit=head_limit,
    )


async def grep_text(
    ctx: RunContext,
    pattern: str,
    *,
    path: str | None = None,
    glob: str | None = None,
    case_insensitive: bool = False,
    output_mode: Mode = "files_with_matches",
    context: int = 0,
    head_limit: int | None = None,
    use_rg: bool | None = None,
) -> str:
    """What the tool does, with the engine selectable (``use_rg``: None =
    ripgrep if on PATH, True = ripgrep, False = pure Python)."""
    if not pattern:
        raise ToolError("pattern is empty")
    try:
        query = await asyncio.to_thread(
            _build_query, ctx, pattern, path, glob, case_insensitive, output_mode, context
        )
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    except GlobError as exc:
        raise ToolError(f"invalid glob {glob!r}: {exc}") from None
    result = await search(query, use_rg=use_rg)
    return format_result(ctx, query, result, head_limit)


async def run_grep(
    ctx: RunContext,
    pattern: str,
    *,
    path: str | None = None,
    glob: str | None = None,
    case_insensitive: bool = False,
    output_mode: Mode = "files_with_matches",
    context: int = 0,
    use_rg: bool | None = None,
) -> GrepResult:
    """The structured result behind the tool (engine chosen as in ``grep_text``)."""
    query = await asyncio.to_thread(
        _build_query, ctx, pattern, path, glob, case_insensitive, output_mode, context
    )
    return await search(query, use_rg=use_rg)


def _build_query(
    ctx: RunContext,
    pattern: str,
    path: str | None,
    glob: str | None,
    case_insensitive: bool,
    mode: Mode,
    context: int,
) -> GrepQuery:
    compiled = compile_pattern(pattern, case_insensitive)
    target = resolve_path(ctx, path or ".")
    single: str | None = None
    if target.is_file():
        target, single = target.parent, target.name
    elif not target.is_dir():
        raise missing_path_error(ctx, target, what="path")
    root = ctx.root.expanduser().resolve()
    return GrepQuery(
        pattern=pattern,
        regex=compiled.regex,
        ignore_case=case_insensitive,
        mode=mode,
        context=context,
        scope=SearchScope.for_dir(target, root),
        file_filter=FileFilter.parse(glob) if glob else None,
        single_file=single,
        python_only=compiled.python_only,
        prefilter=compiled.prefilter,
    )


def format_result(
    ctx: RunContext, query: GrepQuery, result: GrepResult, head_limit: int | None
) -> str:
    """Render a result for the model, sorted by path and capped."""
    start = Path(query.scope.start)
    shown_start = display_path(ctx, start)
    prefix = "" if shown_start == "." else shown_start.rstrip("/") + "/"
    ordered = sorted(result.counts)
    limit = head_limit or DEFAULT_LIMITS[query.mode]
    notes: list[str] = []
    if result.truncated:
        notes.append("[ripgrep output exceeded its size limit; results are incomplete]")
    if result.hard_linked:
        notes.append(
            f"[{result.hard_linked} matching file(s) with other hard links were left out: "
            "the same file may live outside the project; read_file asks before reading one]"
        )
    if not ordered:
        hint = ""
        if "\\n" in query.pattern or "\n" in query.pattern:
            hint = " (patterns match within single lines; \\n never matches)"
        return "No matches found" + hint + "." + ("\n" + "\n".join(notes) if notes else "")
    if query.mode == "files_with_matches":
        body = [prefix + rel for rel in ordered[:limit]]
        head = f"Found {len(ordered)} file{'s' if len(ordered) != 1 else ''}"
        if len(ordered) > limit:
            notes.append(
                f"[showing the first {limit} of {len(ordered)} files; narrow the search or raise head_limit]"
            )
        return _join([head, *body], notes)
    if query.mode == "count":
        total = sum(result.counts.values())
        body = [f"{prefix}{rel}:{result.counts[rel]}" for rel in ordered[:limit]]
        if len(ordered) > limit:
            notes.append(
                f"[showing the first {limit} of {len(ordered)} files; narrow the search or raise head_limit]"
            )
        tail = f"Found {total} matching line{'s' if total != 1 else ''} in {len(ordered)} file{'s' if len(ordered) != 1 else ''}"
        return _join([*body, "", tail], notes)
    return _format_content(prefix, ordered, result, query.context, limit, notes)


def _format_content(
    prefix: str, ordered: list[str], result: GrepResult, context: int, limit: int, notes: list[str]
) -> str:
    out: list[str] = []
    total = sum(result.line_total(rel) for rel in ordered)
    shown = 0
    size = 0
    for rel in ordered:
        prev: int | None = None
        if shown >= limit or size > MAX_OUTPUT_CHARS:
            break
        for n, is_match, text in result.lines.get(rel, ()):
            if shown >= limit or size > MAX_OUTPUT_CHARS:
                break
            if context and out and (prev is None or n != prev + 1):
                out.append("--")
            text = text.rstrip("\r")
            if len(text) > MAX_LINE_CHARS:
                text = text[:MAX_LINE_CHARS] + f"… [{len(text)} chars]"
            line = f"{prefix}{rel}{':' if is_match else '-'}{n}{':' if is_match else '-'}{text}"
            out.append(line)
            size += len(line) + 1
            shown += 1
            prev = n
    if shown < total:
        notes.append(f"[showing {shown} of {total} lines; narrow the search or raise head_limit]")
    return _join(out, notes)


def _join(lines: list[str], notes: list[str]) -> str:
    return "\n".join(lines + (["", *notes] if notes else []))
