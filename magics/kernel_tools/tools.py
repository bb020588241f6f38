"""The kernel toolset: what only an agent living in the kernel can do.

``notebook_variables``, ``inspect_variable`` and ``last_error`` read the
user's namespace and the last exception (secret values masked by name in
``namespace``, and by value, wherever they appear, in what every kernel
tool returns: ``secret_values``); ``run_python`` runs code there (it
asks like ``bash``; rules ``RunPython(...)``, see
``core.permission.python_code``); ``propose_cell`` puts a new cell below the
agent cell (IPython's ``set_next_input`` payload, which JupyterLab and
Notebook turn into a cell when the agent cell's reply arrives; headless, the
proposal is printed). The tools hold the shell; the core sees only ``Tool``
objects in a ``Toolset``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.messages import ImageBlock, TextBlock
from mewcode_kernel.core.notebook.summary import Summary
from mewcode_kernel.core.tools import FunctionToolset, RunContext, Tool, ToolOutput, tool

from .errors import ErrorTracker, cell_namer
from .execution import MAX_OUTPUT, run_code
from .frontend import FrontendLinks
from .live import LiveNotebooks
from .namespace import describe, describe_in_depth, find_variable, mask_keys, user_variables
from .notebook_tools import Notebooks
from .notebook_toolset import notebook_tools
from .secret_values import notebook_redactor

__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "TOOL_NAMES", "KernelTools", "kernel_toolset"]

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
MAX_VARIABLES = 60
TOOL_NAMES = (
    "notebook_variables",
    "inspect_variable",
    "last_error",
    "run_python",
    "propose_cell",
    "notebook_read",
    "notebook_edit",
    "notebook_run",
)


class KernelTools:
    """The shell the tools work on, its error tracker, and whether a person
    sees the cell (``interactive``, set by the controller for each turn)."""

    def __init__(
        self,
        shell: Any,
        errors: ErrorTracker,
        *,
        root: Path | None = None,
        links: FrontendLinks | None = None,
    ) -> None:
        self.shell = shell
        self.errors = errors
        self.interactive: Callable[[], bool] = lambda: False
        #: called when Kernel › Interrupt stopped run_python: ends the turn too
        self.on_interrupt: Callable[[], object] = lambda: None
        start = Path.cwd()
        self.links = links or FrontendLinks(start)
        #: the notebooks the tools (and revert) reach: open ones through the front end
        self.notebooks = Notebooks(
            shell=shell,
            access=LiveNotebooks(self.links),
            root=Path(os.environ.get("MEWCODE_ROOT") or root or start).resolve(),
        )

    def tools(self) -> list[Tool]:
        return [
            self._notebook_variables(),
            self._inspect_variable(),
            self._last_error(),
            self._run_python(),
            self._propose_cell(),
            *notebook_tools(self.notebooks, on_interrupt=lambda: self.on_interrupt()),
        ]

    # --- read-only -------------------------------------------------------------------

    def _notebook_variables(self) -> Tool:
        shell = self.shell

        @tool(read_only=True, kind="read")
        async def notebook_variables(ctx: RunContext) -> str:
            """List the variables defined in the user's notebook (the live kernel).

            Each with its type, shape or length, memory size and a short repr;
            pandas DataFrames with their columns, dtypes, missing values and
            first rows. Modules and names starting with `_` are left out;
            values of names that look secret are masked. Use inspect_variable
            for one variable in depth.
            """
            found = list(user_variables(shell))
            if not found:
                return "The notebook defines no variables yet."
            shown = [describe(name, value) for name, value in found[:MAX_VARIABLES]]
            more = len(found) - len(shown)
            if more > 0:
                shown.append(f"… and {more} more (ask inspect_variable for one by name)")
            return notebook_redactor(shell).redact("\n".join(shown))

        return notebook_variables

    def _inspect_variable(self) -> Tool:
        shell = self.shell

        @tool(read_only=True, kind="read", display_key="name")
        async def inspect_variable(
            ctx: RunContext,
            name: Annotated[
                str, Field(description="A variable of the notebook, or a dotted path: df.columns")
            ],
        ) -> str:
            """Describe one variable of the user's notebook in depth.

            A longer repr, its public attributes; for a DataFrame its
            statistics and first rows; for a function or class defined in a
            notebook cell, its source. Attributes are read, nothing is called.
            """
            try:
                value = find_variable(shell, name)
            except KeyError as exc:
                raise ToolError(notebook_redactor(shell).redact(str(exc.args[0]))) from None
            return notebook_redactor(shell).redact(describe_in_depth(name.strip(), value))

        return inspect_variable

    def _last_error(self) -> Tool:
        errors = self.errors
        shell = self.shell
        names = cell_namer(self.shell)

        @tool(read_only=True, kind="read")
        async def last_error(ctx: RunContext) -> str:
            """The last exception a notebook cell raised: its traceback and the
            cell's source. Agent cells' own failures are not counted."""
            record = errors.last
            if record is None:
                return "No cell has raised an exception in this kernel."
            redactor = notebook_redactor(shell, record.secrets())
            return record.report(root=ctx.root, cell_name=names, redact=redactor.redact)

        return last_error

    # --- acting ----------------------------------------------------------------------

    def _run_python(self) -> Tool:
        shell = self.shell
        owner = self

        @tool(
            read_only=False,
            kind="exec",
            family="python",
            rule_names=frozenset({"RunPython"}),
            subject_arg="code",
            display_key="code",
        )
        async def run_python(
            ctx: RunContext,
            code: Annotated[str, Field(description="Python code to run in the notebook's kernel.")],
            timeout: Annotated[  # noqa: ASYNC109 - the model-facing argument
                float | None,
                Field(
                    gt=0,
                    description=f"Seconds before the code is stopped (default {DEFAULT_TIMEOUT:g}, max {MAX_TIMEOUT:g}).",
                ),
            ] = None,
        ) -> str | ToolOutput:
            """Run Python code in the user's notebook kernel, in its namespace.

            - Sees and changes the user's variables: what it defines stays for
              the next cell. Prefer the read-only tools (notebook_variables,
              inspect_variable, last_error) to look at state.
            - Output (print, stderr) comes back, then the value of a last bare
              expression, then the traceback if it raised; images it displays
              (a figure, IPython.display.Image) come back as images.
            - Runs on the kernel's thread: it blocks the notebook while it runs.
              Default timeout 60 s, at most 600 s; the user can interrupt it.
            - No top-level `await`; keep long jobs out (ask the user to run them).
            - To give the user code to keep, use propose_cell instead.
            """
            if not code.strip():
                raise ToolError("code is empty")
            limit = min(timeout or DEFAULT_TIMEOUT, MAX_TIMEOUT)
            sandbox = ctx.services.sandbox if ctx.services is not None else None
            result = run_code(shell, code, timeout=limit, sandbox=sandbox, env=ctx.child_env())
            parts: list[str] = []
            if result.output:
                parts.append(result.output.rstrip("\n"))
            if result.dropped:
                parts.append(f"[{result.dropped} more characters of output were cut]")
            if result.value is not None:
                parts.append(f"Out: {result.value}")
            if result.error:
                parts.append(result.error)
            if result.timed_out:
                parts.append(f"[stopped after {limit:g} s: the time limit]")
            if result.interrupted:
                parts.append("[interrupted by the user (Kernel › Interrupt)]")
            # what the code printed may hold a secret value of the namespace (or
            # of the frames of its error) without its name: df.values, an encoding
            redactor = notebook_redactor(shell, result.secrets)
            text = redactor.redact(mask_keys("\n".join(parts))) or "(no output)"
            ctx.progress(output=text[:MAX_OUTPUT] + "\n")
            images = _images(result.outputs, redactor.redact)
            if result.interrupted:
                owner.on_interrupt()  # the person stopped it: the turn ends here too
            failed = bool(result.error or result.timed_out or result.interrupted)
            if images:
                return ToolOutput(content=[TextBlock(text=text), *images], is_error=failed)
            if failed:
                raise ToolError(text)
            return text

        return run_python

    def _propose_cell(self) -> Tool:
        owner = self

        @tool(read_only=False, kind="other", default_allow=True, display_key="source")
        async def propose_cell(
            ctx: RunContext,
            source: Annotated[str, Field(description="The new cell's content.")],
            cell_type: Annotated[
                Literal["code", "markdown"], Field(description="code (default) or markdown")
            ] = "code",
        ) -> str:
            """Propose a new notebook cell, inserted below the agent cell.

            The user reads it and runs it or not; nothing runs now. Use it for
            code the user should keep in the notebook (a fix, the next
            analysis step). A markdown cell is proposed as a `%%markdown` code
            cell, which renders it when run.
            """
            if not source.strip():
                raise ToolError("source is empty")
            text = source if cell_type == "code" else f"%%markdown\n{source}"
            owner.shell.payload_manager.write_payload(
                {"source": "set_next_input", "text": text, "replace": False}, single=False
            )
            if owner.interactive():
                return "Proposed: the new cell appears below the agent cell when this turn ends."
            fence = "```" + ("python" if cell_type == "code" else "markdown")
            print(f"✎ proposed cell:\n{fence}\n{source.rstrip()}\n```")
            return "Proposed: nobody is at a notebook front end, so the cell was printed instead."

        return propose_cell


def _images(outputs: Any, redact: Callable[[str], str]) -> list[TextBlock | ImageBlock]:
    """The images ``run_python``'s code displayed (a figure, ``display(Image)``),
    for the model, at most ``MAX_IMAGES``."""
    summary = Summary(redact=redact)
    for n, output in enumerate(outputs):
        data = output.get("data") if isinstance(output, dict) else None
        if isinstance(data, dict):
            for mime in ("image/png", "image/jpeg"):
                if mime in data:
                    summary.image(mime, data[mime], f"run_python output {n}")
    return [p for p in summary.done() if isinstance(p, ImageBlock) or "not shown" in p.text]


def kernel_toolset(kernel_tools: KernelTools) -> FunctionToolset:
    """The kernel tools as one toolset for ``open_session(toolsets=...)``."""
    return FunctionToolset(kernel_tools.tools(), name="kernel")
