"""Content search: ripgrep when it can answer, else the pure-Python engine.

``search`` runs ripgrep when it is on PATH and the pattern means the same to
ripgrep as to Python's ``re``; otherwise (or if ripgrep rejects the pattern)
the pure-Python engine. Both return the same ``GrepResult`` for a tree: the
same files, counts and lines; ordering is applied by the caller (by path).

Known difference: ripgrep may report matches that precede a NUL byte found
late (past its first read buffer) in ``files_with_matches`` mode; the Python
engine skips any file containing NUL.

Neither engine follows a symbolic link; a matching file with other hard
links is left out (the same file may live outside the project), counted
in ``GrepResult.hard_linked``. A single file named by the call is searched
whatever its links: the permission check asked about it.
"""

from __future__ import annotations

import os
import shutil

from . import python_engine, rg_engine
from .query import GrepQuery, GrepResult

__all__ = ["search"]


async def search(query: GrepQuery, *, use_rg: bool | None = None) -> GrepResult:
    """Run the query with ripgrep if available (``use_rg=None``), or force an engine."""
    rg = shutil.which("rg") if use_rg is not False else None
    if use_rg and rg is None:
        raise RuntimeError("ripgrep (rg) is not on PATH")
    result = None
    if rg and query.single_file is None and not query.python_only:
        result = await rg_engine.search(query, rg)
    if result is None:
        result = await python_engine.search(query)
    if query.single_file is None:
        _drop_hard_linked(query, result)
    return result


def _drop_hard_linked(query: GrepQuery, result: GrepResult) -> None:
    for rel in list(result.counts):
        try:
            st = os.lstat(os.path.join(query.scope.start, rel))
        except OSError:
            continue
        if st.st_nlink > 1:
            del result.counts[rel]
            result.lines.pop(rel, None)
            result.hard_linked += 1
