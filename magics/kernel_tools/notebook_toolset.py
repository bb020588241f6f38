"""The three notebook tools as ``Tool``s (see ``notebook_tools`` for what
they share): ``notebook_read`` (read-only; rules ``Read``/``NotebookRead``),
``notebook_edit`` (an edit; rules ``NotebookEdit`` and the file edit rules
covering the ``.ipynb``; Claude Code's hooks see it as ``NotebookEdit``),
``notebook_run`` (runs a cell's code as ``run_python`` does: rules
``RunPython(...)``, the same sandbox for child processes, interruptible).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.messages import ImageBlock, TextBlock
from mewcode_kernel.core.notebook import (
    CellOp,
    EditRefused,
    NotebookError,
    StaleCell,
    cell_source,
    describe_cells,
    describe_outputs,
    find_cell,
    plan_edit,
)
from mewcode_kernel.core.notebook.summary import Summary
from mewcode_kernel.core.permission.targets import is_protected
from mewcode_kernel.core.tools import RunContext, Tool, ToolOutput, tool

from .execution import run_code
from .masking import mask_keys
from .notebook_tools import Notebooks, edit_request

__all__ = ["notebook_tools"]

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
PathArg = Annotated[
    str | None,
    Field(description="The .ipynb (relative to the project root). Default: the open notebook."),
]


def notebook_tools(nb: Notebooks, *, on_interrupt: Callable[[], object]) -> list[Tool]:
    return [_read(nb), _edit(nb), _run(nb, on_interrupt)]


def _read(nb: Notebooks) -> Tool:
    @tool(
        read_only=True, kind="read", family="read", path_args=("path",),
        rule_names=frozenset({"Read", "NotebookRead"}), aliases=frozenset({"NotebookRead"}),
        display_key="path", implied=nb.implied_path,
    )  # fmt: skip
    async def notebook_read(
        ctx: RunContext,
        path: PathArg = None,
        cell_id: Annotated[str | None, Field(description="Read only this cell.")] = None,
    ) -> ToolOutput:
        """Read the cells of a notebook: each with its id, index, type, source,
        execution count and outputs (text bounded, errors with a short
        traceback, images as images).

        - Without path: the notebook this kernel runs, as the user sees it in
          the browser now (unsaved typing included), with the cell they have
          selected marked. With path: that .ipynb.
        - Use the ids with notebook_edit and notebook_run. Read a cell before
          you edit or run it: a cell changed since you read it is not touched.
        """
        path_, shown = nb.target(ctx.workspace, path)
        try:
            cells = await nb.access.read(path_, shown, full="all" if cell_id is None else {cell_id})
            listed, start = cells.cells, 0
            if cell_id is not None:
                start = find_cell(cells.cells, cell_id, shown)
                listed = [cells.cells[start]]
        except (NotebookError, EditRefused) as exc:
            raise ToolError(str(exc)) from None
        nb.remember(cells, None if cell_id is None else {cell_id})
        chosen = {id(c) for c in listed}
        others = [cell_source(c) for c in cells.cells if id(c) not in chosen]
        masked, redact = nb.read_view([cell_source(c) for c in listed], others)
        shown_sources = {id(c): text for c, text in zip(listed, masked, strict=True)}
        state = cells.where + (", with unsaved changes" if cells.dirty else "")
        heading = f"{shown}: {len(cells.cells)} cells ({state})"
        if cells.selected:
            heading += f"; the user has selected cell {cells.selected}"
        parts = describe_cells(
            listed,
            heading=heading,
            redact=lambda t: redact.redact(mask_keys(t, unquoted=False)),
            selected=cells.selected,
            source=lambda c: shown_sources[id(c)],
            start=start,
        )
        return ToolOutput(content=parts)

    return notebook_read


def _edit(nb: Notebooks) -> Tool:
    @tool(
        read_only=False, kind="edit", family="edit", path_args=("path",), reads_paths=True,
        rule_names=frozenset({"NotebookEdit", "Edit", "Write", "MultiEdit"}),
        aliases=frozenset({"NotebookEdit"}), display_key="path", preview=nb.preview,
        implied=nb.implied_path,
    )  # fmt: skip
    async def notebook_edit(
        ctx: RunContext,
        path: PathArg = None,
        cell_id: Annotated[
            str | None, Field(description="The cell (insert: the new cell goes after it).")
        ] = None,
        new_source: Annotated[
            str | None, Field(description="The new source, or what replaces old_string.")
        ] = None,
        old_string: Annotated[
            str | None, Field(description="Exact text in the cell to replace (once).")
        ] = None,
        cell_type: Annotated[
            Literal["code", "markdown", "raw"] | None,
            Field(description="For insert, or to change it."),
        ] = None,
        edit_mode: Annotated[
            Literal["replace", "insert", "delete", "move"], Field(description="What to do.")
        ] = "replace",
        index: Annotated[
            int | None, Field(description="insert: the new cell's index; move: where it goes.")
        ] = None,
    ) -> str:
        """Change a notebook's cells; returns the cell's id.

        - replace (default): the cell's whole new_source, or old_string ->
          new_source inside it (old_string must match exactly once).
        - insert: a new cell after cell_id, or at index, or at the top.
        - delete: the cell. move: the cell to index.
        - In the open notebook the change shows at once and is one undo step.
        - A cell whose source changed since you read it is not edited: the
          result gives its current source.
        """
        path_, shown = nb.target(ctx.workspace, path)
        request = edit_request(
            {"edit_mode": edit_mode, "cell_id": cell_id, "new_source": new_source,
             "old_string": old_string, "cell_type": cell_type, "index": index}
        )  # fmt: skip
        redact = nb.redactor([new_source or ""])
        try:
            cells = await nb.access.read(path_, shown, full=())
            if request.edit_mode == "replace" and cell_id is not None:
                current = cells.cells[find_cell(cells.cells, cell_id, shown)]
                nb.refuse_masked(cell_source(current), new_source or "", old_string)
            planned = plan_edit(cells.cells, request, nb.seen_in(path_), shown=shown)
            roots = _roots(ctx, path_)
            after = await nb.access.apply(
                path_, shown, planned.ops, roots=roots,
                before=nb.checkpoint_before(ctx, planned.ops, shown),
            )  # fmt: skip
        except StaleCell as exc:
            nb.seen[(os.fspath(path_), exc.cell_id)] = exc.current
            raise ToolError(nb.stale_message(exc, redact)) from None
        except (NotebookError, EditRefused, OSError) as exc:
            raise ToolError(str(exc)) from None
        by_id = {str(c.get("id")): c for c in after.cells}
        sources = {
            cid: cell_source(by_id[cid]) if cid in by_id else None for cid in planned.touched
        }
        if ctx.checkpoints is not None:
            ctx.checkpoints.after_cells(path_, sources)
        nb.remember(after, {cid for cid, s in sources.items() if s is not None})
        for cid, source in sources.items():
            if source is None:
                nb.seen.pop((os.fspath(path_), cid), None)
        where = "the open notebook" if after.live else shown
        change = planned.change
        what = {
            "replace": f"Replaced the source of cell {change.index_before}",
            "insert": f"Inserted a {change.cell_type} cell at index {change.index_after}",
            "delete": f"Deleted cell {change.index_before}",
            "move": f"Moved the cell from {change.index_before} to {change.index_after}",
        }[change.kind]
        return f"{what} in {where} ({shown}). cell_id: {planned.cell_id}"

    return notebook_edit


def _roots(ctx: RunContext, path: Any) -> list[str]:
    """Where a write of the notebook's file is reached from (no link followed)."""
    _, roots = ctx.workspace.write_destination(os.fspath(path))
    return list(roots)


def _run(nb: Notebooks, on_interrupt: Callable[[], object]) -> Tool:
    @tool(
        read_only=False, kind="exec", family="python", rule_names=frozenset({"RunPython"}),
        subject_arg="code", display_key="cell_id", implied=nb.implied_code,
    )  # fmt: skip
    async def notebook_run(
        ctx: RunContext,
        cell_id: Annotated[str, Field(description="The code cell to run.")],
        path: PathArg = None,
        timeout: Annotated[  # noqa: ASYNC109 - the model-facing argument
            float | None, Field(gt=0, description="Seconds (default 60, max 600).")
        ] = None,
    ) -> ToolOutput:
        """Run a code cell of the notebook in this kernel now, as if the user ran it.

        Its outputs appear in that cell with an execution count and come back
        to you (images as images). It runs as you last read it: a cell changed
        since is not run (read it again). Asks like run_python. Blocks the
        notebook while it runs; the user can interrupt it.
        """
        path_, shown = nb.target(ctx.workspace, path)
        key = os.fspath(path_)
        try:
            now = await nb.access.read(path_, shown, full=())
            cell = now.cells[find_cell(now.cells, cell_id, shown)]
        except (NotebookError, EditRefused) as exc:
            raise ToolError(str(exc)) from None
        source = cell_source(cell)
        redact = nb.redactor([source])
        seen = nb.seen.get((key, cell_id))
        if seen is None or seen != source:
            nb.seen[(key, cell_id)] = source
            stale = StaleCell(cell_id, source, read=seen is not None)
            raise ToolError(nb.stale_message(stale, redact).replace("edited", "run"))
        if cell.get("cell_type") != "code":
            raise ToolError(
                f"cell {cell_id} is a {cell.get('cell_type')} cell: only code cells run"
            )
        shell = nb.shell
        count = int(getattr(shell, "execution_count", 0) or 0)
        shell.execution_count = count + 1
        code = nb.transform(source)
        _history(shell, count, code, source)
        limit = min(timeout or DEFAULT_TIMEOUT, MAX_TIMEOUT)
        sandbox = ctx.services.sandbox if ctx.services is not None else None
        result = run_code(
            shell, code, timeout=limit, sandbox=sandbox, env=ctx.child_env(), count=count,
            name=f"cell-{cell_id}",
        )  # fmt: skip
        outputs = list(result.outputs)
        note = await _store_outputs(nb, ctx, path_, shown, cell_id, outputs, count)
        text_redact = notebook_redactor_with(nb, source, result.secrets)
        summary = Summary(redact=lambda t: text_redact(mask_keys(t, unquoted=True)))
        summary.add(f"Ran cell {cell_id} of {shown} as In [{count}].{note}")
        if not outputs:
            summary.add("(no output)")
        describe_outputs(summary, outputs, f"cell {cell_id}", agent=False)
        if result.timed_out:
            summary.add(f"[stopped after {limit:g} s: the time limit]")
        if result.interrupted:
            summary.add("[interrupted by the user (Kernel › Interrupt)]")
        parts = summary.done()
        shown_text = "\n".join(p.text for p in parts if isinstance(p, TextBlock))
        ctx.progress(output=shown_text[:20_000] + "\n")
        if result.interrupted:
            on_interrupt()
        failed = bool(result.error or result.timed_out or result.interrupted)
        return ToolOutput(content=[p for p in parts if isinstance(p, TextBlock | ImageBlock)],
                          is_error=failed)  # fmt: skip

    return notebook_run


def notebook_redactor_with(nb: Notebooks, source: str, secrets: Any) -> Callable[[str], str]:
    from .secret_values import cell_secrets, notebook_redactor

    redactor = notebook_redactor(nb.shell, [*cell_secrets(source), *secrets])
    return redactor.redact


def _history(shell: Any, count: int, code: str, source: str) -> None:
    """The run is in IPython's history as ``In [count]``, as a cell the user ran."""
    manager = getattr(shell, "history_manager", None)
    if manager is None:
        return
    try:
        manager.store_inputs(count, code, source)
    except Exception:  # history is a convenience: a run goes on without it
        pass


async def _store_outputs(
    nb: Notebooks, ctx: RunContext, path: Any, shown: str, cid: str, outputs: list[Any], count: int
) -> str:
    """Put the outputs in the cell (the open notebook, or the file inside the
    project); what became of them, as a note for the model."""
    op = CellOp(op="outputs", id=cid, outputs=outputs, execution_count=count)
    live = nb.access.is_live(path)
    if not live:
        resolved = ctx.workspace.resolve(os.fspath(path))
        if not resolved.inside or is_protected(resolved):
            return f" Its outputs were not written to {shown}: it is outside the project."
    try:
        await nb.access.apply(path, shown, (op,), roots=[] if live else _roots(ctx, path))
    except (NotebookError, EditRefused, OSError) as exc:
        return f" Its outputs could not be put in the notebook: {exc}"
    return "" if live else f" Its outputs are saved in {shown}."
