"""Planning one ``notebook_edit`` on a notebook's cells: pure, no I/O.

``plan_edit(cells, request, seen)`` checks the request against the cells
as they are now and what the model last read of them (``seen``: cell id to
source), and returns the ``CellOp``s that carry it out, each holding the
source its cell must still have when applied (so text typed in the open
notebook after the plan is never overwritten), and the ``CellChange`` a
person is shown. A cell whose source differs from what the model read
raises ``StaleCell`` carrying the current source.

``apply_ops(cells, ops)`` applies ops to a list of cells (the file on disk
uses it; the open notebook's front end does the same in the browser).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .document import CELL_TYPES, cell_source, new_cell, new_cell_id

__all__ = [
    "CellChange",
    "CellOp",
    "EditMode",
    "EditRefused",
    "EditRequest",
    "PlannedEdit",
    "StaleCell",
    "apply_ops",
    "find_cell",
    "plan_edit",
]

EditMode = Literal["replace", "insert", "delete", "move"]
OpKind = Literal["replace", "insert", "delete", "move", "outputs"]


class EditRefused(ValueError):
    """The edit cannot be made as asked; the message says why (for the model)."""


class StaleCell(EditRefused):
    """The cell's source is not what the model read (or it never read it)."""

    def __init__(self, cell_id: str, current: str, *, read: bool) -> None:
        self.cell_id = cell_id
        self.current = current
        self.read = read
        why = "changed since you last read it" if read else "not been read by you yet"
        super().__init__(f"cell {cell_id} has {why}; it was not edited")


@dataclass(frozen=True, kw_only=True, slots=True)
class CellOp:
    """One change to one cell. ``expect``: the source the cell must hold for
    the op to apply (``None``: no check); ``cell``: an inserted cell's JSON."""

    op: OpKind
    id: str
    source: str | None = None
    cell_type: str | None = None
    index: int | None = None
    expect: str | None = None
    cell: dict[str, Any] | None = None
    outputs: list[dict[str, Any]] | None = None
    execution_count: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) is not None}


@dataclass(frozen=True, kw_only=True, slots=True)
class CellChange:
    """What an edit does to one cell, for the approval card and the result."""

    kind: EditMode
    id: str
    cell_type: str
    before: str | None
    after: str | None
    index_before: int | None
    index_after: int | None

    @property
    def label(self) -> str:
        if self.kind == "insert":
            return f"new {self.cell_type} cell {self.index_after}"
        if self.kind == "delete":
            return f"deleted cell {self.index_before}"
        if self.kind == "move":
            return f"moved cell from {self.index_before} to {self.index_after}"
        return f"cell {self.index_before}"


@dataclass(frozen=True, kw_only=True, slots=True)
class EditRequest:
    edit_mode: EditMode = "replace"
    cell_id: str | None = None
    new_source: str | None = None
    old_string: str | None = None
    cell_type: str | None = None
    index: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PlannedEdit:
    ops: tuple[CellOp, ...]
    change: CellChange
    cell_id: str
    touched: tuple[str, ...] = field(default=())


def find_cell(cells: Sequence[dict[str, Any]], cid: str, shown: str) -> int:
    """The index of the cell with id ``cid``; ``EditRefused`` naming some ids if none."""
    for n, cell in enumerate(cells):
        if cell.get("id") == cid:
            return n
    some = ", ".join(str(c.get("id")) for c in cells[:8])
    more = f" (and {len(cells) - 8} more)" if len(cells) > 8 else ""
    raise EditRefused(
        f"{shown} has no cell with id {cid!r}; its cells are: {some or '(none)'}{more}. "
        "Ids are per notebook: read this notebook with notebook_read to get them"
    )


def _check_seen(cell: dict[str, Any], cid: str, seen: Mapping[str, str]) -> str:
    current = cell_source(cell)
    if cid not in seen:
        raise StaleCell(cid, current, read=False)
    if seen[cid] != current:
        raise StaleCell(cid, current, read=True)
    return current


def plan_edit(
    cells: Sequence[dict[str, Any]], req: EditRequest, seen: Mapping[str, str], *, shown: str
) -> PlannedEdit:
    """The ops for ``req`` on ``cells`` (each with an ``id``); see the module docstring."""
    if req.cell_type is not None and req.cell_type not in CELL_TYPES:
        raise EditRefused(f"cell_type must be one of {', '.join(CELL_TYPES)}")
    if req.edit_mode == "insert":
        return _insert(cells, req, shown)
    if not req.cell_id:
        raise EditRefused(f"edit_mode {req.edit_mode} needs a cell_id")
    n = find_cell(cells, req.cell_id, shown)
    cell, cid = cells[n], req.cell_id
    kind = str(cell.get("cell_type"))
    if req.edit_mode == "move":
        if req.index is None or not 0 <= req.index < len(cells):
            raise EditRefused(f"move needs an index from 0 to {len(cells) - 1}")
        if req.index == n:
            raise EditRefused(f"cell {cid} is already at index {n}")
        source = cell_source(cell)
        change = CellChange(
            kind="move", id=cid, cell_type=kind, before=source, after=source,
            index_before=n, index_after=req.index,
        )  # fmt: skip
        return PlannedEdit(
            ops=(CellOp(op="move", id=cid, index=req.index),), change=change, cell_id=cid,
            touched=(cid,),
        )  # fmt: skip
    current = _check_seen(cell, cid, seen)
    if req.edit_mode == "delete":
        change = CellChange(
            kind="delete", id=cid, cell_type=kind, before=current, after=None,
            index_before=n, index_after=None,
        )  # fmt: skip
        op = CellOp(op="delete", id=cid, expect=current)
        return PlannedEdit(ops=(op,), change=change, cell_id=cid, touched=(cid,))
    if req.new_source is None:
        raise EditRefused("replace needs new_source (the whole new source, or with old_string)")
    after = current
    if req.old_string is not None and req.old_string != "":
        count = current.count(req.old_string)
        if count == 0:
            raise EditRefused(
                f"old_string was not found in cell {cid}: it must match the cell's source "
                "exactly (whitespace included) as notebook_read shows it"
            )
        if count > 1:
            raise EditRefused(
                f"old_string occurs {count} times in cell {cid}: add surrounding text so it "
                "matches once"
            )
        after = current.replace(req.old_string, req.new_source, 1)
    else:
        after = req.new_source
    new_type = req.cell_type or kind
    if after == current and new_type == kind:
        raise EditRefused(f"the edit would change nothing in cell {cid}")
    change = CellChange(
        kind="replace", id=cid, cell_type=new_type, before=current, after=after,
        index_before=n, index_after=n,
    )  # fmt: skip
    op = CellOp(
        op="replace", id=cid, source=after, expect=current,
        cell_type=new_type if new_type != kind else None,
    )  # fmt: skip
    return PlannedEdit(ops=(op,), change=change, cell_id=cid, touched=(cid,))


def _insert(cells: Sequence[dict[str, Any]], req: EditRequest, shown: str) -> PlannedEdit:
    if req.new_source is None:
        raise EditRefused("insert needs new_source (the new cell's content)")
    if req.cell_id:
        at = find_cell(cells, req.cell_id, shown) + 1
    elif req.index is not None:
        if not 0 <= req.index <= len(cells):
            raise EditRefused(f"index must be from 0 to {len(cells)} to insert")
        at = req.index
    else:
        at = 0
    kind = req.cell_type or "code"
    taken = [str(c.get("id")) for c in cells]
    cid = new_cell_id(taken, f"{shown}:{at}:{kind}:{req.new_source}")
    cell = new_cell(kind, req.new_source, cid)
    change = CellChange(
        kind="insert", id=cid, cell_type=kind, before=None, after=req.new_source,
        index_before=None, index_after=at,
    )  # fmt: skip
    op = CellOp(op="insert", id=cid, index=at, cell=cell, source=req.new_source, cell_type=kind)
    return PlannedEdit(ops=(op,), change=change, cell_id=cid, touched=(cid,))


def apply_ops(
    cells: Sequence[dict[str, Any]], ops: Sequence[CellOp], *, shown: str
) -> tuple[list[dict[str, Any]], set[str]]:
    """``cells`` after ``ops`` (all or nothing: a failed ``expect`` raises
    ``StaleCell`` before anything changes), and the ids of the cells written
    anew. The given cell dicts are not changed; untouched ones are reused."""
    out = list(cells)
    fresh: set[str] = set()
    for op in ops:
        if op.op == "insert":
            if op.cell is None or any(c.get("id") == op.id for c in out):
                raise EditRefused(f"cannot insert cell {op.id}: it exists already")
            at = max(0, min(op.index if op.index is not None else len(out), len(out)))
            out.insert(at, dict(op.cell))
            fresh.add(op.id)
            continue
        n = find_cell(out, op.id, shown)
        cell = out[n]
        if op.expect is not None and cell_source(cell) != op.expect:
            raise StaleCell(op.id, cell_source(cell), read=True)
        if op.op == "delete":
            del out[n]
            fresh.discard(op.id)
        elif op.op == "move":
            del out[n]
            out.insert(max(0, min(op.index or 0, len(out))), cell)
        elif op.op == "replace":
            updated = dict(cell)
            if op.source is not None:
                updated["source"] = op.source
            if op.cell_type and op.cell_type != cell.get("cell_type"):
                updated = _retype(updated, op.cell_type)
            out[n] = updated
            fresh.add(op.id)
        elif op.op == "outputs":
            updated = dict(cell)
            updated["outputs"] = list(op.outputs or [])
            updated["execution_count"] = op.execution_count
            out[n] = updated
            fresh.add(op.id)
    return out, fresh


def _retype(cell: dict[str, Any], kind: str) -> dict[str, Any]:
    """``cell`` as a ``kind`` cell: a code cell has outputs and a count, others not."""
    out = {k: v for k, v in cell.items() if k not in ("outputs", "execution_count")}
    out["cell_type"] = kind
    if kind == "code":
        out["execution_count"] = None
        out["outputs"] = []
    return dict(sorted(out.items()))
