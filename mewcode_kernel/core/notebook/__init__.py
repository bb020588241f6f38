"""Notebooks as the agent's workspace, UI-free: an ``.ipynb`` read and
written back byte for byte where untouched (``document``), one edit planned
as ops that refuse to overwrite what changed since the model read it
(``edits``), the cells and outputs summarised for the model with images as
image blocks (``summary``, ``images``), and where cells are read and changed
(``access``: the file on disk here; the open document through a front end).
"""

from __future__ import annotations

from .access import DiskNotebooks, Full, NotebookAccess, NotebookCells
from .document import (
    MAX_NOTEBOOK_BYTES,
    NotebookError,
    NotebookFile,
    cell_source,
    disk_output,
    new_cell_id,
)
from .edits import (
    CellChange,
    CellOp,
    EditMode,
    EditRefused,
    EditRequest,
    PlannedEdit,
    StaleCell,
    apply_ops,
    find_cell,
    plan_edit,
)
from .images import MAX_SIDE, image_for_model
from .summary import describe_cells, describe_outputs, is_agent_cell

__all__ = [
    "MAX_NOTEBOOK_BYTES",
    "MAX_SIDE",
    "CellChange",
    "CellOp",
    "DiskNotebooks",
    "EditMode",
    "EditRefused",
    "EditRequest",
    "Full",
    "NotebookAccess",
    "NotebookCells",
    "NotebookError",
    "NotebookFile",
    "PlannedEdit",
    "StaleCell",
    "apply_ops",
    "cell_source",
    "describe_cells",
    "describe_outputs",
    "disk_output",
    "find_cell",
    "image_for_model",
    "is_agent_cell",
    "new_cell_id",
    "plan_edit",
]
