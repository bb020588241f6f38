"""Content search: ripgrep when it can answer, else the pure-Python engine.

``search`` runs ripgrep when it is on PATH and the pattern means the same to
ripgrep as to Python's ``re``; otherwise (or if ripgrep rejects the pattern)
the pure-Python engine. Both return the same ``GrepResult`` for a tree: the
same files, counts and lines; ordering is applied by the caller (by path).

Known difference: ripgrep may report matches that precede a NUL byte found
late (past its first read buffer) in ``files_with_matches`` mode; the Python
engine skips any file containing NUL.
"""

from __future__ import annotations

import shutil

from . import python_engine, rg_engine
from .query import GrepQuery, GrepResult

__all__ = ["search"]


async def search(query: GrepQuery, *, use_rg: bool | None = None) -> GrepResult:
    """Run the query with ripgrep if available (``use_rg=None``), or force an engine."""
    rg = shutil.which("rg") if use_rg is not False else None
    if use_rg and rg is None:
        raise RuntimeError("ripgrep (rg) is not on PATH")
    if rg and query.single_file is None and not query.python_only:
        result = await rg_engine.search(query, rg)
        if result is not None:
            return result
    return await python_engine.search(query)
