"""Splitting streamed text into blocks that can be shown apart.

A streamed answer is shown as a run of outputs: finished blocks, sent once,
and a growing tail, repainted. So the bytes sent stay close to the length of
the answer instead of growing with its square. ``MarkdownBlocks`` only
splits where rendering the two halves separately changes nothing: after a
blank line, outside fenced code, before a line that starts at the margin
(not an indented continuation or code). ``LineBlocks`` splits plain text
(thinking) at any line end.
"""

from __future__ import annotations

import re

__all__ = ["LineBlocks", "MarkdownBlocks"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class MarkdownBlocks:
    """Feed Markdown as it streams; take the blocks that are finished.

    A block is finished once it is at least ``min_size`` characters long and
    a safe split point follows it. ``tail`` is the unfinished rest.
    """

    def __init__(self, min_size: int = 800) -> None:
        self._min = min_size
        self._buf = ""
        self._scanned = 0  # buf[:scanned] is whole lines already scanned
        self._fence: str | None = None  # the open fence's marker, if any
        self._split: int | None = None  # candidate split after a blank line

    @property
    def tail(self) -> str:
        return self._buf

    def feed(self, text: str) -> list[str]:
        """Add ``text``; return the blocks it finished (possibly none)."""
        self._buf += text
        done: list[str] = []
        while True:
            if self._split is not None and len(self._buf) > self._split:
                if self._buf[self._split] in " \t\n":
                    self._split = None  # an indented or blank line: keep together
                else:
                    done.append(self._buf[: self._split])
                    self._buf = self._buf[self._split :]
                    self._scanned -= self._split
                    self._split = None
                    continue
            end = self._buf.find("\n", self._scanned)
            if end < 0 or self._split is not None:
                return done
            self._scan_line(self._buf[self._scanned : end], end + 1)
            self._scanned = end + 1

    def _scan_line(self, line: str, after: int) -> None:
        match = _FENCE.match(line)
        if self._fence is not None:
            if (
                match
                and match.group(1)[0] == self._fence[0]
                and len(match.group(1)) >= len(self._fence)
            ):
                if not line[match.end() :].strip():
                    self._fence = None
            return
        if match:
            self._fence = match.group(1)
        elif not line.strip() and after >= self._min:
            self._split = after


class LineBlocks:
    """Plain text split at line ends once a block reaches ``min_size``."""

    def __init__(self, min_size: int = 1200) -> None:
        self._min = min_size
        self._buf = ""

    @property
    def tail(self) -> str:
        return self._buf

    def feed(self, text: str) -> list[str]:
        self._buf += text
        done: list[str] = []
        if len(self._buf) >= self._min:
            cut = self._buf.rfind("\n")
            if cut >= 0:
                done.append(self._buf[: cut + 1])
                self._buf = self._buf[cut + 1 :]
        return done
