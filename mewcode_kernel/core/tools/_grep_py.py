"""The pure-Python grep engine: walk (pruning ignored directories), then read
and match files in a thread pool. Matching is line-oriented like ripgrep's:
one regex search over the whole text finds candidates quickly, and a match
that spans a newline is re-checked within its line."""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from ._grep import GrepQuery, GrepResult, Line
from ._ignore import walk_files

__all__ = ["search", "search_sync"]

_CHUNK = 48
_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            workers = min(8, (os.cpu_count() or 2) + 2)
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
    if len(chunks) <= 1:
        outputs: Iterator[list[tuple[str, int, list[Line]]]] = iter(
            [matcher.run_chunk(c, stop) for c in chunks]
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
        self.needle = query.needle

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
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        if self.needle is not None and self.needle not in data:
            return None
        if b"\0" in data:
            return None
        text = data.decode("utf-8", "replace")
        first_only = self.mode == "files_with_matches"
        spans = list(_matching_lines(self.rx, text, first_only))
        if not spans:
            return None
        if self.mode != "content":
            return len(spans), []
        return len(spans), self._lines(text, spans)

    def _lines(self, text: str, spans: list[tuple[int, int, int]]) -> list[Line]:
        if not self.context:
            return [(n, True, text[s:e]) for n, s, e in spans]
        all_lines = text.split("\n")
        if text.endswith("\n"):
            all_lines.pop()
        wanted: dict[int, bool] = {}
        c = self.context
        for n, _, _ in spans:
            for k in range(max(n - c, 1), min(n + c, len(all_lines)) + 1):
                wanted.setdefault(k, False)
            wanted[n] = True
        return [(k, wanted[k], all_lines[k - 1]) for k in sorted(wanted)]


def _matching_lines(
    rx: re.Pattern[str], text: str, first_only: bool
) -> Iterator[tuple[int, int, int]]:
    """Yield (line number, line start, line end) for lines holding a match."""
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
        if m.end() <= le or search(text, ls, le) is not None:
            lineno += text.count("\n", counted, ls)
            counted = ls
            yield lineno, ls, le
            if first_only:
                return
        pos = le + 1
