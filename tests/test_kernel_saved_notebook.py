# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""What a live agent cell leaves in a saved notebook (real ``mewcode`` kernel,
outputs kept as JupyterLab keeps them): no widget views, which would read
"model not found" once the kernel is gone, but the transcript, the diff and
the decision as HTML and Markdown. The one widget that outlives the turn,
the "Revert" card, becomes plain text when the kernel shuts down."""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path
from typing import Any

import nbformat

from mewcode_kernel.testing.outputs import CellOutputs
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import Kernel, jupyter_path, kernel, project, script, server  # noqa: F401

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def is_card(msg: dict[str, Any]) -> bool:
    state = msg["content"].get("data", {}).get("state", {})
    return msg["msg_type"] == "comm_open" and "decided" in state


def test_a_saved_agent_cell_reads_without_a_kernel(
    kernel: Kernel, script: ScriptedServer, project: Path, tmp_path: Path
) -> None:
    script.add(
        reply(
            thinking="The user wants a haiku file.",
            text="I'll write it.",
            tool_calls=[("write_file", {"path": "haiku.txt", "content": "old pond\nfrog\n"})],
        ),
        reply(text="Wrote haiku.txt."),
    )
    outputs = CellOutputs()
    msg_id = kernel.execute("%%agent --new\nWrite a haiku to haiku.txt.", allow_stdin=True)
    seen = kernel.wait_for(msg_id, is_card)
    for msg in seen:
        outputs.feed(msg)
    decision = {"event": "decide", "choice": "allow", "note": "", "save": False}
    content = {
        "comm_id": seen[-1]["content"]["comm_id"],
        "data": {"method": "custom", "content": decision},
    }
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_msg", content))
    cell = kernel.collect(msg_id)
    assert cell.status == "ok", cell.text
    for msg in cell.messages:
        outputs.feed(msg)
    live = [o for o in outputs.outputs if WIDGET_VIEW in o.get("data", {})]
    assert len(live) == 1  # the "Revert 1 file" card, live while the kernel runs
    kernel.kc.shutdown()  # the person shuts the kernel down: the card settles
    deadline = time.monotonic() + 30
    while any(WIDGET_VIEW in o.get("data", {}) for o in outputs.outputs):
        assert time.monotonic() < deadline, "the revert card never settled"
        try:
            outputs.feed(kernel.kc.get_iopub_msg(timeout=1))
        except queue.Empty:
            continue

    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell("%%agent\nWrite a haiku to haiku.txt."))
    notebook.cells[0].outputs = [nbformat.from_dict(o) for o in outputs.outputs]
    path = tmp_path / "saved.ipynb"
    nbformat.write(notebook, path)
    saved = json.loads(path.read_text())["cells"][0]["outputs"]

    # nbformat stores multi-line strings as lists of lines
    bundles = [
        {k: "".join(v) if isinstance(v, list) else v for k, v in o["data"].items()}
        for o in saved
        if "data" in o
    ]
    assert not any(WIDGET_VIEW in b for b in bundles)  # nothing that needs the kernel
    html = "".join(b.get("text/html", "") for b in bundles)
    markdown = "".join(b.get("text/markdown", "") for b in bundles)
    plain = [b.get("text/plain", "") for b in bundles]
    assert "✓ allowed write_file haiku.txt" in plain  # the decided card, one line
    assert "mewcode-diff" in html and "old pond" in html  # its diff, on the card and the row
    assert "+old pond" in markdown and "```diff" in markdown  # GitHub / nbviewer colour these
    assert "Thought for" in html and "The user wants a haiku file." in html
    assert "I'll write it." in markdown and "Wrote haiku.txt." in markdown
    assert not any(p.startswith(("VBox(", "Accordion(", "CardWidget(")) for p in plain)
    [revert] = [p for p in plain if p.startswith("↶")]
    assert "changed 1 file (haiku.txt)" in revert and "/rewind " in revert
