"""Where a notebook's cells are read and changed: ``NotebookAccess``.

Tools, checkpoints and revert use one protocol: ``read`` the cells of the
notebook at a (resolved) path as they are now, and ``apply`` ``CellOp``s to
them, all or nothing (an op whose ``expect`` no longer holds raises
``StaleCell`` and nothing changes). ``DiskNotebooks`` does it on the
``.ipynb`` file: read without following a link, written atomically through
``fs.atomic_write_within`` (a link planted meanwhile is refused), every
untouched byte kept. A front end that has the notebook open implements the
same protocol for the open document (the kernel's ``magics``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..fs import atomic_write_within
from ..fs.read_regular import read_regular_file
from .document import MAX_NOTEBOOK_BYTES, NotebookError, NotebookFile
from .edits import CellOp, apply_ops

__all__ = ["DiskNotebooks", "Full", "NotebookAccess", "NotebookCells"]

Full = Literal["all"] | Collection[str] | None
"""Which cells to read whole (outputs, metadata): all, these ids, or none."""


@dataclass(kw_only=True)
class NotebookCells:
    """A notebook's cells as read now (each with an ``id``). ``live``: the
    open document in a front end (unsaved typing included); ``selected``:
    the id of the cell the person has selected there."""

    path: Path
    shown: str
    cells: list[dict[str, Any]]
    live: bool = False
    selected: str | None = None
    dirty: bool = False
    where: str = "on disk"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def order(self) -> list[str]:
        return [str(c.get("id")) for c in self.cells]


class NotebookAccess(Protocol):
    """Reading and changing a notebook's cells (see the module docstring)."""

    def is_live(self, path: Path) -> bool:
        """Whether ``path`` is open in a front end this kernel can reach."""
        ...

    async def read(self, path: Path, shown: str, *, full: Full = "all") -> NotebookCells: ...

    async def apply(
        self,
        path: Path,
        shown: str,
        ops: Sequence[CellOp],
        *,
        roots: Sequence[str],
        before: Callable[[NotebookCells], None] | None = None,
    ) -> NotebookCells:
        """Apply ``ops``; ``before`` sees the cells just before they change
        (the turn's checkpoint is saved there). Returns the cells after."""
        ...


def _read_file(path: Path, shown: str) -> NotebookFile:
    if path.suffix.lower() != ".ipynb":
        raise NotebookError(f"{shown} is not a notebook (.ipynb)")
    try:
        raw = read_regular_file(os.fspath(path), MAX_NOTEBOOK_BYTES, single_link=True)
    except FileNotFoundError:
        raise NotebookError(f"{shown} does not exist") from None
    except OSError as exc:
        raise NotebookError(f"{shown} cannot be read: {exc.strerror or exc}") from None
    return NotebookFile.parse(raw, shown)


class DiskNotebooks:
    """Notebooks as ``.ipynb`` files (see the module docstring)."""

    def is_live(self, path: Path) -> bool:
        return False

    async def read(self, path: Path, shown: str, *, full: Full = "all") -> NotebookCells:
        return await asyncio.to_thread(self.read_now, path, shown)

    def read_now(self, path: Path, shown: str) -> NotebookCells:
        nb = _read_file(path, shown)
        return NotebookCells(path=path, shown=shown, cells=nb.with_ids(os.fspath(path)))

    async def apply(
        self,
        path: Path,
        shown: str,
        ops: Sequence[CellOp],
        *,
        roots: Sequence[str],
        before: Callable[[NotebookCells], None] | None = None,
    ) -> NotebookCells:
        return await asyncio.to_thread(self.apply_now, path, shown, ops, roots, before)

    def apply_now(
        self,
        path: Path,
        shown: str,
        ops: Sequence[CellOp],
        roots: Sequence[str],
        before: Callable[[NotebookCells], None] | None = None,
    ) -> NotebookCells:
        nb = _read_file(path, shown)
        cells = nb.with_ids(os.fspath(path))
        after, fresh = apply_ops(cells, ops, shown=shown)
        if before is not None:
            before(NotebookCells(path=path, shown=shown, cells=cells))
        changed = [n for n, c in enumerate(after) if c.get("id") in fresh]
        atomic_write_within(path, nb.render(after, changed), list(roots))
        return NotebookCells(path=path, shown=shown, cells=after)
