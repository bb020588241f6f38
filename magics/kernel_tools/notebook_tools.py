"""``notebook_read``, ``notebook_edit`` and ``notebook_run``: the notebook as
the agent's workspace.

Without ``path`` they work on the notebook this kernel is attached to, as
the person sees it in the browser (``frontend``); with one, on that
notebook, open (the same way) or as its file. What the model last read of
each cell is kept (``Notebooks.seen``): an edit or a run of a cell whose
source differs from it is refused with the current source, so the
person's typing is never overwritten or run unseen. The code a run is
judged by (``RunPython(...)`` rules, the approval card) is the cell as the
model read it, and the run checks the cell still holds exactly that.

What the model reads has secrets masked as the other kernel tools mask
them; since an edit is matched against the real source, a masked value is
never written back in place of the secret.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.fs import Workspace
from mewcode_kernel.core.notebook import (
    CellOp,
    EditRefused,
    EditRequest,
    NotebookCells,
    NotebookError,
    StaleCell,
    cell_source,
    find_cell,
    plan_edit,
)
from mewcode_kernel.core.tools import RunContext
from mewcode_kernel.core.tools.base import FileChange

from .live import LiveNotebooks
from .masking import MASKED, mask_keys
from .secret_values import cell_secrets, found_secrets, notebook_redactor

if TYPE_CHECKING:
    from mewcode_kernel.core.redaction import Redactor

__all__ = ["NO_NOTEBOOK", "Notebooks"]

NO_NOTEBOOK = (
    "no notebook is open in a front end linked to this kernel (a headless run, or a front end "
    "without MewCode's extension): pass path, the .ipynb to work on"
)
_PLACEHOLDERS = (MASKED, "[REDACTED:")


@dataclass
class Notebooks:
    """What the notebook tools share: the shell, how notebooks are reached,
    and what the model last read (``seen``: (file, cell id) to source) and
    last saw of each notebook's layout (for the approval card's diff)."""

    shell: Any
    access: LiveNotebooks
    root: Path
    seen: dict[tuple[str, str], str] = field(default_factory=dict)
    layout: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    # --- which notebook ------------------------------------------------------------

    def attached_path(self) -> Path | None:
        link = self.access.links.attached()
        return link.file if link is not None else None

    def implied_path(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``path`` for a call that gives none: the attached notebook's."""
        if isinstance(args.get("path"), str) and args["path"].strip():
            return {}
        attached = self.attached_path()
        if attached is None:
            raise ToolError(NO_NOTEBOOK)
        try:  # as a person names it: relative to the project when inside
            return {"path": attached.relative_to(self.root).as_posix()}
        except ValueError:
            return {"path": os.fspath(attached)}

    def target(self, workspace: Workspace, path: str | None) -> tuple[Path, str]:
        """The notebook's resolved file and how to name it."""
        if path is None or not path.strip():
            attached = self.attached_path()
            if attached is None:
                raise ToolError(NO_NOTEBOOK)
            path = os.fspath(attached)
        resolved = workspace.resolve(path)
        if not resolved.path.lower().endswith(".ipynb"):
            raise ToolError(f"{path} is not a notebook: the notebook tools work on .ipynb files")
        shown = resolved.rel if resolved.rel is not None else resolved.path
        return Path(resolved.path), shown

    # --- what the model saw ----------------------------------------------------------

    def remember(self, nb: NotebookCells, ids: set[str] | None = None) -> None:
        key = os.fspath(nb.path)
        self.layout[key] = [
            {"id": c.get("id"), "cell_type": c.get("cell_type"), "source": cell_source(c)}
            for c in nb.cells
        ]
        for cell in nb.cells:
            cid = str(cell.get("id"))
            if ids is None or cid in ids:
                self.seen[(key, cid)] = cell_source(cell)

    def seen_in(self, path: Path) -> dict[str, str]:
        key = os.fspath(path)
        return {cid: src for (p, cid), src in self.seen.items() if p == key}

    # --- what the model reads ------------------------------------------------------

    def redactor(self, sources: list[str]) -> Redactor:
        extra = [pair for s in sources for pair in cell_secrets(s)]
        return notebook_redactor(self.shell, extra)

    def read_view(self, sources: list[str], others: list[str]) -> tuple[list[str], Redactor]:
        """Each of ``sources`` as the model sees it (credentials masked), and
        the redactor of the whole result, which also knows the secrets the
        ``others`` cells set (a cell read alone may print one). One scan of
        each source, not three: a 200-cell read stays within its budget."""
        found: list[str] = []
        shown = [mask_keys(s, unquoted=False, found=found) for s in sources]
        for other in others:
            mask_keys(other, unquoted=False, found=found)
        return shown, notebook_redactor(self.shell, found_secrets(found))

    def shown_source(self, source: str) -> str:
        return mask_keys(source, unquoted=False)

    def stale_message(self, exc: StaleCell, redact: Redactor) -> str:
        current = redact.redact(self.shown_source(exc.current))
        return (
            f"{exc} (so the person's text is kept). Its current source:\n<source>\n{current}\n"
            "</source>\nIf your change still applies, call again: it is matched against this."
        )

    def refuse_masked(self, current: str, new_source: str, old_string: str | None) -> None:
        """A whole new source carrying a mask where the cell holds a secret
        would write the mask in place of the secret: refused."""
        if old_string:
            return
        if self.shown_source(current) != current and any(p in new_source for p in _PLACEHOLDERS):
            raise ToolError(
                "this cell holds values masked for you (secrets); a whole new source would "
                "replace them with the mask. Change it with old_string/new_source around them"
            )

    # --- previews for the approval card -----------------------------------------------

    def preview(self, ctx: RunContext, args: dict[str, Any]) -> FileChange | None:
        try:
            path, shown = self.target(ctx.workspace, args.get("path"))
        except ToolError:
            return None
        cells = self.layout.get(os.fspath(path))
        if cells is None:
            if self.access.is_live(path):
                return None
            try:
                cells = self.access.disk.read_now(path, shown).cells
            except NotebookError:
                return None
        try:
            planned = plan_edit(cells, _request(args), self.seen_in(path), shown=shown)
        except EditRefused:
            return None
        change = planned.change
        syntax = "cell.md" if change.cell_type == "markdown" else "cell.py"
        return FileChange(
            path=shown,
            before=change.before if change.kind != "insert" else None,
            after=change.after or "",
            whole_file=False,
            label=change.label,
            syntax=syntax,
        )

    def implied_code(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``path`` and the ``code`` ``notebook_run`` would run (the cell as
        the model last read it, as IPython transforms it)."""
        implied = self.implied_path(args)
        raw = implied.get("path") or args.get("path")
        cid = args.get("cell_id")
        if not isinstance(cid, str) or not isinstance(raw, str):
            raise ToolError("notebook_run needs a cell_id")
        path = Workspace(self.root).resolve(raw).path
        source = self.seen.get((path, cid))
        if source is None:
            raise ToolError(
                f"read cell {cid} of {raw} with notebook_read first: a cell is run as you read it"
            )
        return {**implied, "code": self.transform(source)}

    def transform(self, source: str) -> str:
        transform = getattr(self.shell, "transform_cell", None)
        try:
            return transform(source) if transform is not None else source
        except Exception:  # a cell IPython cannot read runs as written, and fails there
            return source

    # --- checkpoints -----------------------------------------------------------------

    def checkpoint_before(self, ctx: RunContext, ops: tuple[CellOp, ...], shown: str) -> Any:
        def before(nb: NotebookCells) -> None:
            if ctx.checkpoints is None:
                return
            cells: dict[str, tuple[int, dict[str, Any]] | None] = {}
            for op in ops:
                try:
                    n = find_cell(nb.cells, op.id, shown)
                except EditRefused:
                    cells[op.id] = None
                    continue
                cells[op.id] = (n, nb.cells[n])
            ctx.checkpoints.before_cells(nb.path, shown, nb.order, cells)

        return before


def _request(args: Mapping[str, Any]) -> EditRequest:
    mode = args.get("edit_mode") or "replace"
    index = args.get("index")
    return EditRequest(
        edit_mode=mode if mode in ("replace", "insert", "delete", "move") else "replace",
        cell_id=args.get("cell_id") if isinstance(args.get("cell_id"), str) else None,
        new_source=args.get("new_source") if isinstance(args.get("new_source"), str) else None,
        old_string=args.get("old_string") if isinstance(args.get("old_string"), str) else None,
        cell_type=args.get("cell_type") if isinstance(args.get("cell_type"), str) else None,
        index=index if isinstance(index, int) and not isinstance(index, bool) else None,
    )


edit_request = _request
