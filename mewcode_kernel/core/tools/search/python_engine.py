"""The pure-Python grep engine: walk (pruning ignored directories), then read
and match files, in a thread pool when there are cores to spare.

Matching is line-oriented like ripgrep's. Files are first screened on their
raw bytes (``prefilter``); then either only the lines holding the required
literal are matched, or one regex search over the whole text finds
candidates and a match that spans a newline is re-checked on its line.

Threads only overlap file reads (matching holds the GIL): with two cores or
fewer they cost more than they save on a warm cache, so files are then
processed inline.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from .ignore import walk_files
from .prefilter import literal_lines
from .query import GrepQuery, GrepResult, Line

__all__ = ["search", "search_sync"]

_CHUNK = 256
_MIN_CPUS_FOR_POOL = 4
_FIRST_READ = 64 * 1024
_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            workers = min(4, os.cpu_count() or 1)
            _executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mewcode-grep")
        return _executor


async def search(query: GrepQuery) -> GrepResult:
    """Run ``search_sync`` in a worker thread; cancelling stops it between files."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(search_sync, query, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def search_sync(query: GrepQuery, stop: threading.Event | None = None) -> GrepResult:
    """Search synchronously (blocking)."""
    scope = query.scope
    flt = query.file_filter
    if query.single_file is not None:
        files = [(query.single_file, os.path.join(scope.start, query.single_file))]
    else:
        keep_dir = flt.allows_dir if flt is not None and flt.exclude else None
        files = [
            (rel, entry.path)
            for rel, entry in walk_files(scope, keep_dir=keep_dir)
            if flt is None or flt.allows_file(rel)
        ]
    matcher = _Matcher(query)
    stop = stop or threading.Event()
    result = GrepResult(engine="python")
    chunks = [files[i : i + _CHUNK] for i in range(0, len(files), _CHUNK)]
    if len(chunks) <= 1 or (os.cpu_count() or 1) < _MIN_CPUS_FOR_POOL:
        outputs: Iterator[list[tuple[str, int, list[Line]]]] = (
            matcher.run_chunk(c, stop) for c in chunks
        )
    else:
        outputs = _pool().map(lambda c: matcher.run_chunk(c, stop), chunks)
    for out in outputs:
        for rel, count, lines in out:
            result.counts[rel] = count
            if query.mode == "content":
                result.lines[rel] = lines
    return result


class _Matcher:
    def __init__(self, query: GrepQuery) -> None:
        self.rx = query.regex
        self.mode = query.mode
        self.context = query.context if query.mode == "content" else 0
        self.prefilter = query.prefilter
        # lookarounds could peek past a line end: check matches on the line alone
        self.isolate = any(s in query.pattern for s in ("(?=", "(?!", "(?<"))
        # \A and \Z mean the ends of each line (as in ripgrep): try every line
        self.per_line = "\\A" in query.pattern or "\\Z" in query.pattern

    def run_chunk(
        self, files: list[tuple[str, str]], stop: threading.Event
    ) -> list[tuple[str, int, list[Line]]]:
        out = []
        for rel, path in files:
            if stop.is_set():
                break
            hit = self.run_file(path)
            if hit is not None:
                out.append((rel, *hit))
        return out

    def run_file(self, path: str) -> tuple[int, list[Line]] | None:
        data = _read(path)
        if data is None:
            return None
        pf = self.prefilter
        rejected, hay = pf.check(data) if pf is not None else (False, None)
        if rejected or b"\0" in data:
            return None
        first_only = self.mode == "files_with_matches"
        if pf is not None and hay is not None:
            found = self._candidate_lines(data, hay, pf.key, pf.literal is not None, first_only)
        elif self.per_line:
            found = _each_line(self.rx, data.decode("utf-8", "replace"), first_only)
        else:
            found = list(
                _matching_lines(self.rx, data.decode("utf-8", "replace"), first_only, self.isolate)
            )
        if not found:
            return None
        if self.mode != "content":
            return len(found), []
        if not self.context:
            return len(found), [(n, True, line) for n, line in found]
        return len(found), self._with_context(data.decode("utf-8", "replace"), found)

    def _candidate_lines(
        self, data: bytes, hay: bytes, key: bytes, is_literal: bool, first_only: bool
    ) -> list[tuple[int, str]]:
        """Only lines holding the required literal can match: check just those."""
        found = []
        search = self.rx.search
        for n, s, e in literal_lines(hay, key, numbered=self.mode == "content"):
            line = data[s:e].decode("utf-8", "replace")
            if is_literal or search(line):
                found.append((n, line))
                if first_only:
                    break
        return found

    def _with_context(self, text: str, found: list[tuple[int, str]]) -> list[Line]:
        all_lines = text.split("\n")
        if text.endswith("\n"):
            all_lines.pop()
        wanted: dict[int, bool] = {}
        c = self.context
        for n, _ in found:
            for k in range(max(n - c, 1), min(n + c, len(all_lines)) + 1):
                wanted.setdefault(k, False)
            wanted[n] = True
        return [(k, wanted[k], all_lines[k - 1]) for k in sorted(wanted)]


def _read(path: str) -> bytes | None:
    try:  # a file swapped for a link after the walk is not followed
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        data = os.read(fd, _FIRST_READ)
        if len(data) == _FIRST_READ:
            chunks = [data]
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def _each_line(rx: re.Pattern[str], text: str, first_only: bool) -> list[tuple[int, str]]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    found = []
    for n, line in enumerate(lines, 1):
        if rx.search(line):
            found.append((n, line))
            if first_only:
                break
    return found


def _matching_lines(
    rx: re.Pattern[str], text: str, first_only: bool, isolate: bool
) -> Iterator[tuple[int, str]]:
    """Yield (line number, line) for lines holding a match. One search over
    the whole text finds candidates fast; a candidate that spans a newline
    (or, with ``isolate``, any) is re-checked on its line alone."""
    n = len(text)
    search = rx.search
    pos = 0
    lineno = 1
    counted = 0  # offset up to which newlines are counted into lineno
    while pos <= n:
        m = search(text, pos)
        if m is None:
            return
        s = m.start()
        if s == n and (n == 0 or text[n - 1] == "\n"):
            return  # the empty "line" after a final newline does not exist
        ls = text.rfind("\n", 0, s) + 1
        le = text.find("\n", s)
        if le == -1:
            le = n
        line = text[ls:le]
        if (m.end() <= le and not isolate) or search(line) is not None:
            lineno += text.count("\n", counted, ls)
            counted = ls
            yield lineno, line
            if first_only:
                return
        pos = le + 1
