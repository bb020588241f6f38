"""Content search shared by both engines: the query, the result, the dispatch.

``search`` runs ripgrep when it is on PATH and the pattern means the same to
ripgrep as to Python's ``re``; otherwise (or if ripgrep rejects the pattern)
the pure-Python engine. Both return the same ``GrepResult`` for a tree: the
same files, counts and lines; ordering is applied by the caller (by path).

Known difference: ripgrep may report matches that precede a NUL byte found
late (past its first read buffer) in ``files_with_matches`` mode; the Python
engine skips any file containing NUL.
"""

from __future__ import annotations

import re
import shutil
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

from ._globpat import GlobError, expand_braces, translate
from ._ignore import SearchScope

__all__ = [
    "CompiledPattern",
    "FileFilter",
    "GrepQuery",
    "GrepResult",
    "Line",
    "Mode",
    "compile_pattern",
    "search",
]

Mode = Literal["files_with_matches", "content", "count"]
Line = tuple[int, bool, str]  # (1-based line number, is a match (not context), text)


@dataclass(frozen=True, slots=True)
class FileFilter:
    """grep's ``glob`` argument, with ripgrep's ``-g`` meaning: gitignore-style
    (a glob without ``/`` matches the file name at any depth, one with ``/``
    matches the path from the searched directory), ``{a,b}`` allowed, and a
    leading ``!`` excluding matches instead (files and directories)."""

    glob: str
    exclude: bool
    dir_only: bool
    regex: re.Pattern[str]

    @classmethod
    def parse(cls, text: str) -> FileFilter:
        exclude = text.startswith("!")
        body = text[1:] if exclude else text
        dir_only = body.endswith("/")
        body = body.rstrip("/")
        anchored = "/" in body
        body = body.lstrip("/")
        if not body:
            raise GlobError("empty glob")
        alts = [translate(p) for p in expand_braces(body)]
        prefix = "" if anchored else "(?:.*/)?"
        rx = re.compile(prefix + "(?:" + "|".join(alts) + ")", re.DOTALL)
        return cls(text, exclude, dir_only, rx)

    def allows_file(self, rel: str) -> bool:
        hit = not self.dir_only and self.regex.fullmatch(rel) is not None
        return not hit if self.exclude else hit

    def allows_dir(self, rel: str) -> bool:
        return not (self.exclude and self.regex.fullmatch(rel))


@dataclass(frozen=True, kw_only=True, slots=True)
class GrepQuery:
    """One search. ``scope.start`` is the directory searched; ``single_file``
    (relative name inside it) restricts the search to one file."""

    pattern: str
    regex: re.Pattern[str]
    ignore_case: bool
    mode: Mode
    context: int
    scope: SearchScope
    file_filter: FileFilter | None = None
    single_file: str | None = None
    python_only: bool = False
    needle: bytes | None = None


@dataclass(slots=True)
class GrepResult:
    """Per file (path relative to ``scope.start``): matching-line counts, and
    in content mode the lines to show. In ``files_with_matches`` mode a count
    of 1 only means "at least one"."""

    counts: dict[str, int] = field(default_factory=dict)
    lines: dict[str, list[Line]] = field(default_factory=dict)
    engine: str = "python"
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class CompiledPattern:
    """A pattern compiled for line-oriented search.

    ``python_only``: ripgrep would read it differently (nested sets such as
    ``[[:alpha:]]``, ``&&``/``--`` in sets, ``\\<``), so only Python runs it.
    ``needle``: UTF-8 bytes every match contains, to skip files cheaply.
    """

    regex: re.Pattern[str]
    python_only: bool
    needle: bytes | None


def compile_pattern(pattern: str, ignore_case: bool) -> CompiledPattern:
    """Compile with Python's ``re`` (raises ``re.error``) and study the pattern."""
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    # re caches compiled patterns, so parse afresh to see the warnings it
    # gives about sets that other engines read differently
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rx = re.compile(pattern, flags)
        try:
            from re import _parser  # type: ignore[attr-defined]

            parsed = _parser.parse(pattern, flags)
        except Exception:
            parsed = None
    python_only = "\\<" in pattern or "\\>" in pattern
    python_only = python_only or any(issubclass(w.category, FutureWarning) for w in caught)
    needle = _required_literal(parsed) if parsed is not None else None
    return CompiledPattern(rx, python_only, needle)


def _required_literal(parsed: Any) -> bytes | None:
    """The longest run of literal characters at the top level of the pattern
    (so in every match), unless case is ignored; None if under 2 chars."""
    if parsed.state.flags & re.IGNORECASE:
        return None
    best, run = "", []
    for op, av in parsed.data:
        if str(op) == "LITERAL":
            run.append(chr(av))
            continue
        best = max(best, "".join(run), key=len)
        run = []
    best = max(best, "".join(run), key=len)
    if len(best) < 2 or "\ufffd" in best:
        return None
    return best.encode("utf-8")


async def search(query: GrepQuery, *, use_rg: bool | None = None) -> GrepResult:
    """Run the query with ripgrep if available (``use_rg=None``), or force an engine."""
    from . import _grep_py, _grep_rg

    rg = shutil.which("rg") if use_rg is not False else None
    if use_rg and rg is None:
        raise RuntimeError("ripgrep (rg) is not on PATH")
    if rg and query.single_file is None and not query.python_only:
        result = await _grep_rg.search(query, rg)
        if result is not None:
            return result
    return await _grep_py.search(query)
