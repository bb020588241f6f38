"""The ripgrep engine: one ``rg`` process per search, its plain output parsed.

Flags make ripgrep follow the rules of ``ignore``: hidden files searched,
``.git`` and ``.mewcode`` skipped, only ``.gitignore`` files consulted (no ``.ignore``,
``.rgignore``, global excludes or ``.git/info/exclude``), no config file, no
transcoding. Inside a git work tree ripgrep reads the ancestors'
``.gitignore`` up to the repository itself, as ``ignore`` does; outside one
it is told to ignore parents, and the few results that rules from above the
searched directory could exclude are filtered here. ``-g`` whitelists
override ``.gitignore`` in ripgrep, so those results are filtered too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
from typing import BinaryIO

from .ignore import NEVER_SEARCHED
from .query import GrepQuery, GrepResult, LineBlocks

__all__ = ["MAX_OUTPUT_BYTES", "rg_args", "search"]

MAX_OUTPUT_BYTES = 256 * 1024 * 1024
_SIZE_CHECK_INTERVAL = 0.25
_COUNT_RECORD = re.compile(rb"([^\0]*)\0(\d+)\n")


def rg_args(query: GrepQuery) -> list[str]:
    """Command-line arguments (after the ``rg`` executable) for ``query``,
    to be run with the searched directory as the working directory."""
    args = [
        "--no-config",
        "--hidden",
        "--no-ignore-dot",
        "--no-ignore-exclude",
        "--no-ignore-global",
        "--no-messages",
        "--encoding=none",
        "--null",
    ]
    if not query.scope.git:
        args += ["--no-require-git", "--no-ignore-parent"]
    args.append("--ignore-case" if query.ignore_case else "--case-sensitive")
    if query.file_filter is not None:
        args += ["--glob", query.file_filter.glob]
    args += [arg for name in sorted(NEVER_SEARCHED) for arg in ("--glob", f"!{name}")]
    if query.mode == "files_with_matches":
        args.append("--files-with-matches")
    elif query.mode == "count":
        args.append("--count")
    else:
        args += ["--line-number", "--heading"]
        if query.context:
            args += ["--context", str(query.context)]
    args += ["--regexp", query.pattern, "--", "."]
    return args


async def search(query: GrepQuery, rg: str) -> GrepResult | None:
    """Run ripgrep; None when it cannot run this pattern (use the Python engine)."""
    with tempfile.TemporaryFile() as sink:
        try:
            code, truncated = await _run(rg, query, sink)
        except OSError:
            return None  # rg could not be started after all
        sink.seek(0)
        out = await asyncio.to_thread(sink.read, MAX_OUTPUT_BYTES)
    if code not in (0, 1) and not out:
        return None  # e.g. a regex ripgrep rejects: the Python engine decides instead
    result = _parse(query, out)
    result.truncated = truncated
    flt = query.file_filter
    if (flt is not None and not flt.exclude) or (not query.scope.git and query.scope.ancestors):
        _post_filter(query, result)
    return result


async def _run(rg: str, query: GrepQuery, sink: BinaryIO) -> tuple[int, bool]:
    """Run ripgrep into ``sink`` (a file: far cheaper than waking the event
    loop for each of its many small writes to a pipe); stop it if its output
    passes ``MAX_OUTPUT_BYTES``. Returns (exit code, stopped for size)."""
    proc = await asyncio.create_subprocess_exec(
        rg,
        *rg_args(query),
        cwd=query.scope.start,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=sink,
        stderr=asyncio.subprocess.DEVNULL,
    )
    exited = asyncio.ensure_future(proc.wait())
    try:
        while True:
            done, _ = await asyncio.wait({exited}, timeout=_SIZE_CHECK_INTERVAL)
            if done:
                return exited.result(), False
            if os.fstat(sink.fileno()).st_size > MAX_OUTPUT_BYTES:
                proc.kill()
                return await exited, True
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(exited)


def _rel(raw: bytes) -> str:
    path = os.fsdecode(raw)
    return path[2:] if path.startswith("./") else path


def _parse(query: GrepQuery, out: bytes) -> GrepResult:
    result = GrepResult(engine="rg")
    if query.mode == "files_with_matches":
        for raw in out.split(b"\0"):
            if raw:
                result.counts[_rel(raw)] = 1
    elif query.mode == "count":
        for m in _COUNT_RECORD.finditer(out):
            result.counts[_rel(m.group(1))] = int(m.group(2))
    else:
        _parse_content(out, result, query.context)
    return result


def _parse_content(out: bytes, result: GrepResult, context: int) -> None:
    """``--heading`` output: per file ``path NUL`` then its lines, files
    separated by an empty line (every line starts with its number, so an
    empty line cannot occur inside a file's block)."""
    blocks = LineBlocks()
    for block in out.split(b"\n\n"):
        nul = block.find(b"\0")
        if nul < 0:
            continue
        rel = _rel(block[:nul])
        result.counts[rel] = blocks.add(rel, block[nul + 1 :], all_matches=not context)
    result.lines = blocks


def _post_filter(query: GrepQuery, result: GrepResult) -> None:
    ignored = query.scope.checker()
    flt = query.file_filter
    for rel in list(result.counts):
        if ignored(rel) or (flt is not None and not flt.allows_file(rel)):
            del result.counts[rel]
            result.lines.pop(rel, None)
