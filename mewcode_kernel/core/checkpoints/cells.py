"""Notebook cells in a turn's checkpoint, and reverting them.

A turn's edits to a notebook (``notebook_edit``) are kept per cell, not as
the whole file: ``NotebookEntry`` holds the notebook's cell order before
the turn first changed it and, for each cell the turn touched, its JSON
before (a blob; ``None`` for a cell the turn inserted) and its source after
the turn's last change (a digest; ``GONE`` for a cell it deleted).

Reverting puts those cells back (sources, types, inserted cells deleted,
deleted cells restored with their outputs, moved cells back in place) in
the open notebook or the file, whichever ``NotebookAccess`` reaches, and
leaves every other cell as it is. A touched cell whose source is not what
the turn left (the person typed in it since) is a conflict: nothing is
reverted unless forced.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

from ..notebook import CellOp, NotebookAccess, NotebookCells, cell_source
from .records import GONE, NotebookEntry
from .store import CheckpointStore, digest

__all__ = ["plan_cells", "revert_ops"]


def _cell_from_blob(store: CheckpointStore, name: str) -> dict[str, Any]:
    cell = json.loads(store.load_blob(name))
    if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
        raise ValueError("a saved cell is damaged")
    return cell


def _place(order: list[str], entry: NotebookEntry, present: Sequence[str]) -> list[str]:
    """The cell order after revert: the current one, with the turn's
    inserted cells gone and its other cells back after the cell that
    preceded them before the turn."""
    touched = {m.id for m in entry.cells}
    wanted = [c for c in present if c not in touched]
    for cid in entry.order:
        mark = entry.mark(cid)
        if mark is None or mark.before is None:
            continue
        before = entry.order[: entry.order.index(cid)]
        anchor = next((p for p in reversed(before) if p in wanted), None)
        wanted.insert(wanted.index(anchor) + 1 if anchor is not None else 0, cid)
    return wanted


def revert_ops(
    entry: NotebookEntry, store: CheckpointStore, now: NotebookCells, *, force: bool
) -> tuple[list[CellOp], list[str], list[str]]:
    """The ops that revert ``entry`` on the cells as they are ``now``, the
    lines describing them (diffs included), and the cells changed since the
    turn (conflicts)."""
    by_id = {str(c.get("id")): c for c in now.cells}
    ops: list[CellOp] = []
    lines: list[str] = []
    conflicts: list[str] = []
    for mark in entry.cells:
        cell = by_id.get(mark.id)
        if mark.after is None:
            continue  # planned, never applied
        if mark.after == GONE:
            if cell is not None:
                conflicts.append(f"cell {mark.id} the turn deleted is back")
            continue
        if cell is None:
            if mark.before is None:
                continue  # inserted by the turn, deleted since: as before the turn
            conflicts.append(f"cell {mark.id} was deleted since the turn")
            continue
        if digest(cell_source(cell).encode()) != mark.after:
            conflicts.append(f"cell {mark.id} changed since the turn")
    present = now.order
    wanted = _place(present, entry, [c for c in present])
    sim = list(present)
    for mark in entry.cells:  # the turn's inserted cells go first
        cell = by_id.get(mark.id)
        if mark.before is None and cell is not None and mark.after not in (None, GONE):
            source = cell_source(cell)
            ops.append(CellOp(op="delete", id=mark.id, expect=None if force else source))
            lines.append(f"cell {mark.id}: delete (the turn inserted it)")
            sim.remove(mark.id)
    for mark in entry.cells:
        if mark.before is None or mark.after is None:
            continue
        old = _cell_from_blob(store, mark.before)
        cell = by_id.get(mark.id)
        if cell is None:
            continue  # put back below, in order
        source, old_source = cell_source(cell), cell_source(old)
        if source != old_source or cell.get("cell_type") != old.get("cell_type"):
            ops.append(
                CellOp(
                    op="replace", id=mark.id, source=old_source,
                    cell_type=str(old.get("cell_type")), expect=None if force else source,
                )
            )  # fmt: skip
            lines.append(
                f"cell {mark.id}: restore its source\n{_diff(mark.id, source, old_source)}"
            )
    for i, cid in enumerate(wanted):
        if i < len(sim) and sim[i] == cid:
            continue
        if cid in sim:
            ops.append(CellOp(op="move", id=cid, index=i))
            lines.append(f"cell {cid}: move back to {i}")
            sim.remove(cid)
        else:
            mark = entry.mark(cid)
            assert mark is not None and mark.before is not None
            old = _cell_from_blob(store, mark.before)
            ops.append(CellOp(op="insert", id=cid, index=i, cell=old, source=cell_source(old)))
            lines.append(f"cell {cid}: put back at {i} (the turn deleted it)\n"
                         + _diff(cid, "", cell_source(old)))  # fmt: skip
        sim.insert(i, cid)
    return ops, lines, conflicts


def _diff(cid: str, now: str, then: str) -> str:
    diff = difflib.unified_diff(
        now.splitlines(keepends=True),
        then.splitlines(keepends=True),
        fromfile=f"cell {cid} (now)",
        tofile=f"cell {cid} (reverted)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in diff)


async def plan_cells(
    entry: NotebookEntry, store: CheckpointStore, access: NotebookAccess, *, force: bool
) -> tuple[list[CellOp], str, list[str]]:
    """Read the notebook now and plan its revert: (ops, description, conflicts)."""
    from pathlib import Path

    now = await access.read(Path(entry.path), entry.shown, full=())
    ops, lines, conflicts = revert_ops(entry, store, now, force=force)
    return ops, "".join(x if x.endswith("\n") else x + "\n" for x in lines), conflicts
