"""The ripgrep engine: one ``rg`` process per search, its plain output parsed.

Flags make ripgrep follow the rules of ``_ignore``: hidden files searched,
``.git`` skipped, only ``.gitignore`` files consulted (no ``.ignore``,
``.rgignore``, global excludes or ``.git/info/exclude``), no config file, no
transcoding. Inside a git work tree ripgrep reads the ancestors'
``.gitignore`` up to the repository itself, as ``_ignore`` does; outside one
it is told to ignore parents, and the few results that rules from above the
searched directory could exclude are filtered here. ``-g`` whitelists
override ``.gitignore`` in ripgrep, so those results are filtered too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re

from ._grep import GrepQuery, GrepResult, Line

__all__ = ["MAX_OUTPUT_BYTES", "rg_args", "search"]

MAX_OUTPUT_BYTES = 256 * 1024 * 1024
_COUNT_RECORD = re.compile(rb"([^\0]*)\0(\d+)\n")
_LINE_PREFIX = re.compile(rb"(\d+)([:-])")


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
    args += ["--glob", "!.git"]
    if query.mode == "files_with_matches":
        args.append("--files-with-matches")
    elif query.mode == "count":
        args.append("--count")
    else:
        args += ["--line-number", "--with-filename", "--no-heading"]
        if query.context:
            args += ["--context", str(query.context)]
    args += ["--regexp", query.pattern, "--", "."]
    return args


async def search(query: GrepQuery, rg: str) -> GrepResult | None:
    """Run ripgrep; None when it cannot run this pattern (use the Python engine)."""
    proc = await asyncio.create_subprocess_exec(
        rg,
        *rg_args(query),
        cwd=query.scope.start,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        out, truncated = await _read_capped(proc)
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(proc.wait())
    if code not in (0, 1) and not out:
        return None  # e.g. a regex ripgrep rejects: the Python engine decides instead
    result = _parse(query, out)
    result.truncated = truncated
    flt = query.file_filter
    if (flt is not None and not flt.exclude) or (not query.scope.git and query.scope.ancestors):
        _post_filter(query, result)
    return result


async def _read_capped(proc: asyncio.subprocess.Process) -> tuple[bytes, bool]:
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    while chunk := await proc.stdout.read(1 << 20):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_OUTPUT_BYTES:
            proc.kill()
            return b"".join(chunks), True
    return b"".join(chunks), False


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
        _parse_content(out, result)
    return result


def _parse_content(out: bytes, result: GrepResult) -> None:
    current: list[Line] | None = None
    current_raw = b""
    for record in out.split(b"\n"):
        nul = record.find(b"\0")
        if nul < 0:
            continue  # "--" separators (we draw our own) and the final empty piece
        raw_path = record[:nul]
        m = _LINE_PREFIX.match(record, nul + 1)
        if m is None:
            continue  # e.g. a "binary file matches" warning
        if current is None or raw_path != current_raw:
            current_raw = raw_path
            current = result.lines.setdefault(_rel(raw_path), [])
        is_match = m.group(2) == b":"
        text = record[m.end() :].decode("utf-8", "replace")
        current.append((int(m.group(1)), is_match, text))
    for rel, lines in result.lines.items():
        result.counts[rel] = sum(1 for _, is_match, _ in lines if is_match)


def _post_filter(query: GrepQuery, result: GrepResult) -> None:
    ignored = query.scope.checker()
    flt = query.file_filter
    for rel in list(result.counts):
        if ignored(rel) or (flt is not None and not flt.allows_file(rel)):
            del result.counts[rel]
            result.lines.pop(rel, None)
