"""Text as the matcher reads it: separators out, ASCII letters lower case.

``fold`` takes out what may stand between the characters of a printed
secret without changing it: white space and line breaks (``base64`` wraps
at 76 columns, ``fold``, ``od -c`` spaces its characters), the escapes
``\\n``, ``\\r``, ``\\t`` (a wrapped value inside JSON or a repr), quotes,
commas, colons, semicolons, brackets, pipes, backslashes and ``%`` (lists of
numbers, ``\\x73`` and ``%73`` escapes, ``73:6b`` hex). Letters are matched
in either case (hex printed upper case, ``tr a-z A-Z``).

A ``View`` is a folded text that remembers where each of its characters
came from, so a match in it masks the right part of the original. The
main view is the whole text; the dump view only the data columns of the
lines of a hex or octal dump (``xxd``, ``hexdump``, ``od``), whose offsets
and printable-character columns would otherwise break a value apart.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

__all__ = ["View", "dump_tail", "dump_view", "fold", "folded_positions", "main_view"]

_REMOVED = " \t\n\r\v\f,;:'\"`\\%|()[]{}<>"
_TABLE = str.maketrans(
    {**{c: None for c in _REMOVED}, **{chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)}}
)
_ESCAPE = re.compile(r"\\[nrt]")
# what fold removes, in the same order: an escape first, else one character
_GAP = re.compile(r"(?:\\[nrt]|[" + re.escape(_REMOVED) + r"])+")
_CHUNK = 1 << 13

# a line of a dump: an offset (xxd: "00000010:", od: "0000020", hexdump -C)
# then data; "0000" somewhere is the quick test that a text may hold one
_DUMP_LINE = re.compile(r"^[ \t]*[0-9A-Fa-f]{6,16}:?(?P<data>[ \t]+\S[^\n]*)$", re.M)
_TOKEN = re.compile(r"\S+")
_NUMBER = re.compile(r"[0-9A-Fa-f]+")
_WIDTHS = frozenset({2, 3, 4, 6, 8, 11, 16})


def fold(text: str) -> str:
    """``text`` as the matcher reads it (see the module docstring)."""
    if "\\" in text:
        text = _ESCAPE.sub("", text)
    return text.translate(_TABLE)


@dataclass(eq=False, slots=True)
class _Segment:
    start: int  # where ``raw`` begins in the original text
    raw: str
    folded_at: int  # where its folded text begins in the view
    kept: list[int] | None = None  # original offsets where runs of kept characters begin
    kept_at: list[int] | None = None  # ...and where those runs begin in the folded text

    def position(self, j: int) -> int:
        """The original offset of the folded character ``j`` (segment-relative)."""
        if self.kept is None or self.kept_at is None:
            kept, kept_at, done, folded = [], [], 0, 0
            for gap in _GAP.finditer(self.raw):
                if gap.start() > done:
                    kept.append(done)
                    kept_at.append(folded)
                    folded += gap.start() - done
                done = gap.end()
            if done < len(self.raw):
                kept.append(done)
                kept_at.append(folded)
            self.kept, self.kept_at = kept, kept_at
        run = bisect.bisect_right(self.kept_at, j) - 1
        return self.start + self.kept[run] + (j - self.kept_at[run])


@dataclass(eq=False, slots=True)
class View:
    """Folded text built from pieces of an original text."""

    text: str = ""
    segments: list[_Segment] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, pieces: list[tuple[int, str]]) -> View:
        """The view of ``pieces``: (where in the original, the text there)."""
        view = cls()
        parts: list[str] = []
        at = 0
        for start, raw in pieces:
            folded = fold(raw)
            if not folded:
                continue
            view.segments.append(_Segment(start, raw, at))
            view._starts.append(at)
            parts.append(folded)
            at += len(folded)
        view.text = "".join(parts)
        return view

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the view's characters ``start`` to ``end``."""
        return self._position(start), self._position(end - 1) + 1

    def _position(self, j: int) -> int:
        segment = self.segments[bisect.bisect_right(self._starts, j) - 1]
        return segment.position(j - segment.folded_at)


def main_view(text: str) -> View:
    """The whole of ``text``, folded (in chunks, so a position is found fast)."""
    return View.of([(i, text[i : i + _CHUNK]) for i in range(0, len(text), _CHUNK)])


def dump_view(text: str) -> View | None:
    """The data columns of ``text``'s dump lines, one after the other
    (``None``: no line looks like one)."""
    if "0000" not in text:
        return None
    pieces: list[tuple[int, str]] = []
    for line in _DUMP_LINE.finditer(text):
        data_at = line.start("data")
        start, end = _data_columns(line["data"])
        if end > start:
            pieces.append((data_at + start, line["data"][start:end]))
    return View.of(pieces) if pieces else None


def _data_columns(data: str) -> tuple[int, int]:
    """Where a dump line's data runs: its numbers of one width (the
    printable-character column after them left out), or all of it (``od -c``
    prints characters)."""
    tokens = list(_TOKEN.finditer(data))
    first = tokens[0][0]
    if not _NUMBER.fullmatch(first) or len(first) not in _WIDTHS:
        return tokens[0].start(), len(data)
    end = tokens[0].end()
    for token in tokens[1:]:
        if not _NUMBER.fullmatch(token[0]) or len(token[0]) > len(first):
            break
        end = token.end()
        if len(token[0]) < len(first):  # a last group cut short (xxd -c 7)
            break
    return tokens[0].start(), end


def folded_positions(text: str) -> tuple[str, list[int]]:
    """``fold(text)`` and, for each of its characters, its offset in ``text``."""
    positions: list[int] = []
    done = 0
    for gap in _GAP.finditer(text):
        positions += range(done, gap.start())
        done = gap.end()
    positions += range(done, len(text))
    return fold(text), positions


_DUMP_START = re.compile(r"[ \t]*[0-9A-Fa-f]{6,16}:?(?:[ \t]|$)")


def dump_tail(text: str, lines: int) -> int | None:
    """Where the run of dump lines that ends ``text`` begins (at most
    ``lines`` of them; the last may be cut short), or ``None``."""
    end = len(text) - 1 if text.endswith("\n") else len(text)
    found: int | None = None
    for _ in range(lines):
        start = text.rfind("\n", 0, end) + 1
        if not _DUMP_START.match(text[start:end]):
            break
        found = start
        if start == 0:
            break
        end = start - 1
    return found
