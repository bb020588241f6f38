"""Byte-level shortcuts for the pure-Python grep engine.

Most files searched do not match. Rather than decode each one and run the
regex, look at the raw bytes first for a literal every match must contain:
as is, or (ignoring case) in the ASCII-lowered bytes. A pattern that is a
plain literal is searched in the bytes outright. Every check is a superset
of what the regex would find, never narrower.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Prefilter", "literal_lines", "study"]

# Non-ASCII characters that Python's re.IGNORECASE equates with ASCII
# letters (found by brute force over all code points): İ ı -> i, K -> k, ſ -> s.
_FOLD_SPECIALS = (
    (b"\xc4\xb0", b"i"),
    (b"\xc4\xb1", b"i"),
    (b"\xe2\x84\xaa", b"k"),
    (b"\xc5\xbf", b"s"),
)


@dataclass(frozen=True, slots=True)
class Prefilter:
    """``needle``: bytes every match contains (case-sensitive). ``folded``:
    the same, lower-case ASCII, for case-insensitive patterns. ``literal``:
    the whole pattern is this case-sensitive literal (no newline).
    ``by_line``: run the regex only on lines holding the literal; otherwise
    on the whole text (re scans fast for a literal prefix by itself)."""

    needle: bytes | None = None
    folded: bytes | None = None
    fold_specials: bool = False
    literal: bytes | None = None
    by_line: bool = False

    def check(self, data: bytes) -> tuple[bool, bytes | None]:
        """(rejected, haystack). ``rejected``: ``data`` cannot hold a match.
        ``haystack`` (when ``by_line``): bytes aligned with ``data`` in which
        every matching line contains ``key``; None when there is no such view."""
        if self.needle is not None:
            return (self.needle not in data), (data if self.by_line else None)
        if self.folded is not None:
            low = data.lower()  # ASCII only, so offsets stay aligned
            if self.fold_specials and any(seq in low for seq, _ in _FOLD_SPECIALS):
                for seq, ascii_letter in _FOLD_SPECIALS:
                    low = low.replace(seq, ascii_letter)
                return (self.folded not in low), None
            return (self.folded not in low), low
        return False, None

    @property
    def key(self) -> bytes:
        """The literal looked for in the haystack."""
        return self.needle or self.folded or b""


def study(parsed: Any) -> Prefilter | None:
    """Derive a prefilter from ``re._parser.parse`` output (None if no use)."""
    runs: list[tuple[int, str]] = []  # (index of the first op, literal run)
    run: list[str] = []
    start = 0
    for i, (op, av) in enumerate(parsed.data):
        if str(op) == "LITERAL":
            if not run:
                start = i
            run.append(chr(av))
        elif run:
            runs.append((start, "".join(run)))
            run = []
    if run:
        runs.append((start, "".join(run)))
    if not runs:
        return None
    first, best = max(runs, key=lambda r: len(r[1]))
    if len(best) < 2 or "\ufffd" in best:
        return None
    if parsed.state.flags & re.IGNORECASE:
        if not best.isascii():
            return None
        folded = best.lower().encode("ascii")
        return Prefilter(
            folded=folded, fold_specials=any(c in folded for c in b"iks"), by_line=True
        )
    whole = len(runs) == 1 and len(best) == len(parsed.data)
    literal = best.encode("utf-8") if whole and "\n" not in best else None
    return Prefilter(needle=best.encode("utf-8"), literal=literal, by_line=whole or first != 0)


def literal_lines(data: bytes, literal: bytes, numbered: bool) -> Iterator[tuple[int, int, int]]:
    """Yield (line number, or 0 unless ``numbered``; line start; line end)
    for each line holding ``literal``."""
    n = len(data)
    pos = 0
    lineno = 1 if numbered else 0
    counted = 0
    while True:
        i = data.find(literal, pos)
        if i < 0:
            return
        ls = data.rfind(b"\n", 0, i) + 1
        le = data.find(b"\n", i)
        if le < 0:
            le = n
        if numbered:
            lineno += data.count(b"\n", counted, ls)
            counted = ls
        yield lineno, ls, le
        pos = le + 1
