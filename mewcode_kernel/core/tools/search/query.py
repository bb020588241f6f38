"""What both search engines share: the query, the compiled pattern and the result."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Literal

from .globpat import GlobError, expand_braces, translate
from .ignore import SearchScope
from .prefilter import Prefilter, study

__all__ = [
    "CompiledPattern",
    "FileFilter",
    "GrepQuery",
    "GrepResult",
    "Line",
    "LineBlocks",
    "Mode",
    "compile_pattern",
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
    prefilter: Prefilter | None = None


class LineBlocks(MutableMapping[str, list[Line]]):
    """Content-mode lines kept as ripgrep printed them (``N:text`` / ``N-text``
    lines per file) and parsed only when read: the caller usually shows a few
    hundred lines of many thousands."""

    _PREFIX = re.compile(rb"^(\d+)([:-])", re.MULTILINE)
    _KIND = re.compile(rb"^\d+([:-])", re.MULTILINE)

    def __init__(self) -> None:
        self._raw: dict[str, bytes] = {}
        self._sizes: dict[str, int] = {}
        self._parsed: dict[str, list[Line]] = {}

    def add(self, rel: str, body: bytes, *, all_matches: bool) -> int:
        """Keep one file's block; return how many of its lines are matches.
        ``all_matches``: no context lines were asked for (a fast count then)."""
        self._raw[rel] = body
        if all_matches and b"WARNING" not in body:
            self._sizes[rel] = n = body.count(b"\n") + (not body.endswith(b"\n"))
            return n
        kinds = self._KIND.findall(body)
        self._sizes[rel] = len(kinds)
        return kinds.count(b":")

    def size(self, rel: str) -> int:
        """How many lines (matches and context) the file contributes."""
        return self._sizes[rel]

    def __getitem__(self, rel: str) -> list[Line]:
        if rel not in self._parsed:
            body = self._raw[rel]
            lines = []
            for m in self._PREFIX.finditer(body):
                end = body.find(b"\n", m.end())
                text = body[m.end() : end if end >= 0 else len(body)]
                lines.append((int(m.group(1)), m.group(2) == b":", text.decode("utf-8", "replace")))
            self._parsed[rel] = lines
        return self._parsed[rel]

    def __setitem__(self, rel: str, lines: list[Line]) -> None:
        self._parsed[rel] = lines
        self._raw.setdefault(rel, b"")
        self._sizes[rel] = len(lines)

    def __delitem__(self, rel: str) -> None:
        del self._raw[rel]
        del self._sizes[rel]
        self._parsed.pop(rel, None)

    def __contains__(self, rel: object) -> bool:
        return rel in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


@dataclass(slots=True)
class GrepResult:
    """Per file (path relative to ``scope.start``): matching-line counts, and
    in content mode the lines to show. In ``files_with_matches`` mode a count
    of 1 only means "at least one"."""

    counts: dict[str, int] = field(default_factory=dict)
    lines: MutableMapping[str, list[Line]] = field(default_factory=dict)
    engine: str = "python"
    truncated: bool = False
    #: matching files left out because they have other hard links (the same
    #: file may live outside the project)
    hard_linked: int = 0

    def line_total(self, rel: str) -> int:
        """Lines (matches and context) to show for one file."""
        if isinstance(self.lines, LineBlocks):
            return self.lines.size(rel) if rel in self.lines else 0
        return len(self.lines.get(rel, ()))


@dataclass(frozen=True, slots=True)
class CompiledPattern:
    """A pattern compiled for line-oriented search.

    ``python_only``: ripgrep would read it differently (nested sets such as
    ``[[:alpha:]]``, ``&&``/``--`` in sets, ``\\<``), so only Python runs it.
    ``prefilter``: byte-level shortcuts for the Python engine.
    """

    regex: re.Pattern[str]
    python_only: bool
    prefilter: Prefilter | None


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
    prefilter = study(parsed) if parsed is not None else None
    return CompiledPattern(rx, python_only, prefilter)
