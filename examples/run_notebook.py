"""Execute a notebook headless in the ``mewcode`` kernel and print it as text.

    python examples/run_notebook.py notebooks/quickstart.ipynb

The notebook runs in its own folder, as ``jupyter execute`` would run it (no
one can click, so approvals follow ``MEWCODE_HEADLESS_APPROVAL``). Each cell
is printed with its outputs: stream text as is, Markdown as Markdown, errors
as their one-line message. The saved notebook is not changed. Exit status 1
if a cell failed. Needs the kernelspec: ``python -m mewcode_kernel install``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def render_output(output: dict[str, Any]) -> str:
    kind = output["output_type"]
    if kind == "stream":
        return output["text"].rstrip("\n")
    if kind in {"display_data", "execute_result"}:
        data = output.get("data", {})
        return str(data.get("text/markdown") or data.get("text/plain") or "").rstrip("\n")
    if kind == "error":
        return _ANSI.sub("", "\n".join(output.get("traceback") or [output.get("evalue", "")]))
    return ""


def render_cell(cell: dict[str, Any]) -> str:
    if cell["cell_type"] == "markdown":
        return cell["source"]
    lines = [f"In [{cell.get('execution_count') or ' '}]:"]
    lines += [f"    {line}" for line in cell["source"].splitlines()]
    for output in cell.get("outputs", []):
        text = render_output(output)
        if text:
            lines += ["", text]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args(argv)
    path: Path = args.notebook.resolve()
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=args.timeout, resources={"metadata": {"path": str(path.parent)}}
    )
    failed: CellExecutionError | None = None
    try:
        client.execute()
    except CellExecutionError as exc:
        failed = exc
    print("\n\n".join(render_cell(cell) for cell in nb.cells if cell.get("source")))
    if failed is not None:
        print(f"\n{path.name}: a cell failed:\n{_ANSI.sub('', str(failed))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
