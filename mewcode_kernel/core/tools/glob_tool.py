"""The ``glob`` tool: find files by path pattern, newest first."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Annotated

from pydantic import Field

from ..errors import ToolError
from ._paths import display_path, missing_path_error, resolve_path
from .base import SearchSpec, tool
from .context import RunContext
from .search.globpat import GlobError, expand_braces, has_magic, translate, translate_component
from .search.ignore import SearchScope, walk_files

__all__ = ["MAX_RESULTS", "glob"]

MAX_RESULTS = 200


@tool(
    read_only=True,
    kind="read",
    path_args=("path",),
    family="read",
    rule_names=frozenset({"Read", "Glob"}),
    aliases=frozenset({"Glob"}),
    search=SearchSpec(pattern_arg="pattern", pattern_sets_base=True),
    display_key="pattern",
    background_ok=True,
)
async def glob(
    ctx: RunContext,
    pattern: Annotated[
        str, Field(description='Glob to match, e.g. "**/*.py", "src/**/*.{ts,tsx}", "*.md".')
    ],
    path: Annotated[
        str | None,
        Field(description="Directory to search in (default: the project root)."),
    ] = None,
) -> str:
    """Find files by name pattern; works on any size of codebase.

    - Patterns match paths relative to `path`: `*` and `?` stay within one
      directory level, `**` spans any number of directories, `{a,b}` gives
      alternatives, `[abc]` is a character class. So `*.py` lists only the
      top level, `**/*.py` every Python file.
    - Files ignored by .gitignore and the .git directory are skipped.
    - Returns matching file paths, most recently modified first (at most 200).
    - To search file contents, use grep.
    """
    pattern = pattern.strip()
    if not pattern:
        raise ToolError("pattern is empty")
    base = resolve_path(ctx, path or ".")
    if pattern.startswith("~"):
        head, _, pattern = pattern.partition("/")
        base = resolve_path(ctx, head)
    elif pattern.startswith("/"):
        base, pattern = Path("/"), pattern.lstrip("/")
    return await asyncio.to_thread(_glob, ctx, base, pattern)


def _glob(ctx: RunContext, base: Path, pattern: str) -> str:
    if not base.exists():
        raise missing_path_error(ctx, base, what="directory")
    if not base.is_dir():
        raise ToolError(
            f"{display_path(ctx, base)} is a file, not a directory; glob needs a directory"
        )
    inside = ctx.workspace.contains(os.fspath(base)) is not None
    literal, pattern = _split_literal_prefix(base, pattern)
    if inside and ctx.workspace.contains(os.fspath(literal)) is None:
        raise ToolError(
            "the pattern's leading directories lead outside the project through a symbolic "
            "link; glob does not follow links out of it (pass the real path instead)"
        )
    base = literal
    shown_base = display_path(ctx, base)
    if not pattern:
        return f"{shown_base} is a directory; use a pattern such as '{shown_base}/*' to list it"
    try:
        alternatives = expand_braces(pattern)
        full = re.compile("|".join(f"(?:{translate(p)})" for p in alternatives), re.DOTALL)
        pruners = [_Pruner(p) for p in alternatives]
    except GlobError as exc:
        raise ToolError(f"invalid glob pattern {pattern!r}: {exc}") from None
    if not base.is_dir():
        return f"No files found: {shown_base} does not exist."

    def keep_dir(rel: str) -> bool:
        parts = rel.split("/")
        return any(p.may_contain(parts) for p in pruners)

    scope = SearchScope.for_dir(base, ctx.root.expanduser().resolve())
    found: list[tuple[float, str]] = []
    for rel, entry in walk_files(scope, keep_dir=keep_dir, follow_file_links=True):
        if full.fullmatch(rel):
            if inside and entry.is_symlink() and not _lands_inside(ctx, entry.path):
                continue  # a link out of the project is not followed, not even listed
            try:
                mtime = entry.stat().st_mtime
            except OSError:
                continue
            found.append((-mtime, display_path(ctx, Path(entry.path))))
    if not found:
        where = f" in {shown_base}" if shown_base != "." else ""
        return f"No files found matching {pattern!r}{where}."
    found.sort()
    lines = [p for _, p in found[:MAX_RESULTS]]
    if len(found) > MAX_RESULTS:
        lines.append(
            f"\n[showing the {MAX_RESULTS} most recently modified of {len(found)} files; "
            "use a narrower pattern or path to see the rest]"
        )
    return "\n".join(lines)


def _lands_inside(ctx: RunContext, path: str) -> bool:
    try:
        return ctx.workspace.contains(os.path.realpath(path)) is not None
    except OSError:
        return False


def _split_literal_prefix(base: Path, pattern: str) -> tuple[Path, str]:
    """Move leading wildcard-free directories of the pattern into the base."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    i = 0
    while i < len(parts) - 1 and not has_magic(parts[i]):
        i += 1
    if i == 0:
        return base, "/".join(parts)
    literal = os.path.join(*parts[:i])
    return (base / literal).resolve(strict=False), "/".join(parts[i:])


class _Pruner:
    """Decides whether a directory can hold a match of one (brace-free) glob."""

    def __init__(self, pattern: str) -> None:
        parts = pattern.split("/")
        self._deep = parts.index("**") if "**" in parts else None
        self._count = len(parts)
        self._parts = [
            None if p == "**" else re.compile(translate_component(p), re.DOTALL) for p in parts
        ]

    def may_contain(self, dir_parts: list[str]) -> bool:
        for i, name in enumerate(dir_parts):
            if self._deep is not None and i >= self._deep:
                return True
            if i >= self._count - 1:
                return False
            rx = self._parts[i]
            if rx is not None and not rx.fullmatch(name):
                return False
        return True
