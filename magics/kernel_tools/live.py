"""``LiveNotebooks``: the ``NotebookAccess`` the kernel tools and revert use.

The open document when a front end linked to this kernel (``frontend``)
has the path, else the file on disk (``core.notebook.DiskNotebooks``). The
extension applies a batch of ops all or nothing, in one transaction (one
undo step in the notebook), after checking that each cell still holds the
source the op expects, so the person's typing is never overwritten.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mewcode_kernel.core.notebook import CellOp, DiskNotebooks, Full, NotebookCells

from .frontend import FrontendLinks

__all__ = ["LiveNotebooks"]


def _cells(path: Path, shown: str, result: dict[str, Any]) -> NotebookCells:
    cells = [c for c in result.get("cells") or [] if isinstance(c, dict) and c.get("id")]
    selected = result.get("selected")
    return NotebookCells(
        path=path, shown=shown, cells=cells, live=True, dirty=bool(result.get("dirty")),
        selected=selected if isinstance(selected, str) else None, where="open in the browser",
    )  # fmt: skip


class LiveNotebooks:
    """``NotebookAccess``: the open document when linked, else the file."""

    def __init__(self, links: FrontendLinks, disk: DiskNotebooks | None = None) -> None:
        self.links = links
        self.disk = disk or DiskNotebooks()

    def is_live(self, path: Path) -> bool:
        return self.links.for_path(path) is not None

    async def read(self, path: Path, shown: str, *, full: Full = "all") -> NotebookCells:
        link = self.links.for_path(path)
        if link is None:
            return await self.disk.read(path, shown, full=full)
        wanted: Any = "all" if full == "all" else sorted(full or ())
        return _cells(path, shown, await link.request("read", {"full": wanted}))

    async def apply(
        self,
        path: Path,
        shown: str,
        ops: Sequence[CellOp],
        *,
        roots: Sequence[str],
        before: Callable[[NotebookCells], None] | None = None,
    ) -> NotebookCells:
        link = self.links.for_path(path)
        if link is None:
            return await self.disk.apply(path, shown, ops, roots=roots, before=before)
        if before is not None:
            touched = {op.id for op in ops}
            before(await self.read(path, shown, full=touched))
        result = await link.request("apply", {"ops": [op.to_json() for op in ops]})
        return _cells(path, shown, result)
