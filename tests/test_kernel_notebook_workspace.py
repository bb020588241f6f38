# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""The notebook as the agent's workspace in a real ``mewcode`` kernel, headless
(no front end is linked, as under nbclient): ``notebook_read``,
``notebook_edit`` and ``notebook_run`` work on the ``.ipynb`` file, images
reach the model as image blocks, edits leave untouched cells byte for byte,
a stale edit is refused, plan mode refuses edits, and ``/rewind`` puts the
cells back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import Kernel, jupyter_path, kernel, project, script, server  # noqa: F401
from tests._notebooks import (
    cells_of,
    code,
    image_output,
    markdown,
    notebook,
    png_b64,
    result_images,
    result_text,
    source,
)

NB = "analysis.ipynb"


@pytest.fixture
def analysis(project: Path) -> Path:
    path = project / NB
    path.write_text(
        notebook(
            [
                markdown("intro", "# Sales"),
                code("load", "rows = [3, 5, 8]\n", [image_output(png_b64(2000, 1000))]),
                code("total", "total = sum(rows)\ntotal\n"),
                code("plot", "print('plot')\n"),
            ]
        )
    )
    return path


def test_read_sends_the_image_output_as_an_image_block(
    kernel: Kernel, script: ScriptedServer, analysis: Path
) -> None:
    script.add(
        reply(tool_calls=[("notebook_read", {"path": NB})]),
        reply(text="It has a chart."),
    )
    kernel.ok("%%agent --new\nWhat is in analysis.ipynb?")
    request = script.received[-1]
    text = result_text(request)
    assert '<cell index="1" id="load" type="code">' in text
    assert "rows = [3, 5, 8]" in text
    images = result_images(request)
    assert len(images) == 1 and images[0]["source"]["media_type"] == "image/png"
    import base64
    import io

    from PIL import Image

    shown = Image.open(io.BytesIO(base64.b64decode(images[0]["source"]["data"])))
    assert max(shown.size) == 1568  # scaled down: the long side at most 1568 px


def _new_id(request_text: str) -> str:
    found = re.search(r"cell_id: ([A-Za-z0-9_-]+)", request_text)
    assert found, request_text
    return found.group(1)


def test_insert_replace_delete_move_change_only_those_cells(
    kernel: Kernel, script: ScriptedServer, analysis: Path
) -> None:
    before = analysis.read_text()
    untouched = before[
        before.index('  {\n   "cell_type": "markdown"') : before.index(
            '  {\n   "cell_type": "code"'
        )
    ]
    script.add(
        reply(tool_calls=[("notebook_read", {"path": NB})]),
        reply(tool_calls=[("notebook_edit", {"path": NB, "edit_mode": "insert", "cell_id": "total", "new_source": "avg = total / len(rows)"})]),
        reply(tool_calls=[("notebook_edit", {"path": NB, "cell_id": "total", "old_string": "sum(rows)", "new_source": "sum(rows) + 1"})]),
        reply(tool_calls=[("notebook_edit", {"path": NB, "edit_mode": "delete", "cell_id": "plot"})]),
        reply(tool_calls=[("notebook_edit", {"path": NB, "edit_mode": "move", "cell_id": "intro", "index": 2})]),
        reply(text="Done."),
    )  # fmt: skip
    base = len(script.received)
    kernel.ok("%%agent --new --mode acceptEdits\nAdd an average, fix the total, drop the plot.")
    inserted = _new_id(result_text(script.received[base + 2]))
    cells = cells_of(analysis)
    assert [c["id"] for c in cells] == ["load", "total", "intro", inserted]
    assert source(cells[1]) == "total = sum(rows) + 1\ntotal\n"
    assert source(cells[3]) == "avg = total / len(rows)"
    assert cells[3]["cell_type"] == "code" and cells[3]["outputs"] == []
    after = analysis.read_text()
    assert untouched in after  # the markdown cell's text, byte for byte
    assert after.count("image/png") == 1  # the chart cell kept its output untouched


def test_a_stale_old_string_and_a_cell_changed_since_reading_are_refused(
    kernel: Kernel, script: ScriptedServer, analysis: Path
) -> None:
    script.add(
        reply(tool_calls=[("notebook_read", {"path": NB, "cell_id": "total"})]),
        reply(tool_calls=[("notebook_edit", {"path": NB, "cell_id": "total", "old_string": "max(rows)", "new_source": "min(rows)"})]),
        reply(text="Reading again."),
    )  # fmt: skip
    kernel.ok("%%agent --new --mode acceptEdits\nChange the total.")
    assert "old_string was not found in cell total" in result_text(script.received[-1])
    # the person changes the cell on disk after the model read it: not overwritten
    text = analysis.read_text().replace("total = sum(rows)", "total = sum(rows)  # mine")
    analysis.write_text(text)
    script.add(
        reply(tool_calls=[("notebook_edit", {"path": NB, "cell_id": "total", "new_source": "total = 0\n"})]),
        reply(text="It changed."),
    )  # fmt: skip
    kernel.ok("%%agent --mode acceptEdits\nNow set it to zero.")
    refused = result_text(script.received[-1])
    assert "changed since you last read it" in refused and "# mine" in refused
    assert analysis.read_text() == text


def test_plan_mode_refuses_an_edit(kernel: Kernel, script: ScriptedServer, analysis: Path) -> None:
    before = analysis.read_text()
    script.add(
        reply(tool_calls=[("notebook_edit", {"path": NB, "edit_mode": "insert", "new_source": "x = 1"})]),
        reply(text="Plan only."),
    )  # fmt: skip
    kernel.ok("%%agent --new --mode plan\nAdd a cell.")
    assert "Unknown tool" in result_text(script.received[-1]) or "plan" in result_text(
        script.received[-1]
    )
    assert analysis.read_text() == before


def test_run_writes_outputs_and_rewind_restores_the_cells(
    kernel: Kernel, script: ScriptedServer, analysis: Path
) -> None:
    before = analysis.read_text()
    kernel.ok("import os; os.environ['MEWCODE_HEADLESS_APPROVAL'] = 'allow'")
    chart = (
        "import base64\nfrom IPython.display import Image, display\n"
        f"display(Image(data=base64.b64decode('{png_b64(8, 6)}')))\nprint('drawn')"
    )
    try:
        script.add(
            reply(tool_calls=[("notebook_read", {"path": NB})]),
            reply(tool_calls=[("notebook_edit", {"path": NB, "cell_id": "plot", "new_source": chart})]),
            reply(tool_calls=[("notebook_run", {"path": NB, "cell_id": "plot"})]),
            reply(tool_calls=[("notebook_edit", {"path": NB, "edit_mode": "delete", "cell_id": "intro"})]),
            reply(text="Drawn."),
        )  # fmt: skip
        base = len(script.received)
        kernel.ok("%%agent --new --mode acceptEdits\nDraw the chart.")
    finally:
        kernel.ok("del os.environ['MEWCODE_HEADLESS_APPROVAL']")
    ran = script.received[base + 3]
    assert "Ran cell plot of analysis.ipynb as In [" in result_text(ran)
    assert "drawn" in result_text(ran) and len(result_images(ran)) == 1
    plot = next(c for c in cells_of(analysis) if c["id"] == "plot")
    assert isinstance(plot["execution_count"], int)
    assert [o["output_type"] for o in plot["outputs"]] == ["display_data", "stream"]
    done = kernel.ok("%agent /rewind")
    assert "analysis.ipynb" in done.text
    cells = cells_of(analysis)
    assert [c["id"] for c in cells] == ["intro", "load", "total", "plot"]
    assert source(cells[3]) == "print('plot')\n"
    load = before[before.index('  {\n   "cell_type": "code"') : before.index('"id": "total"')]
    assert load in analysis.read_text()  # the untouched chart cell, byte for byte
    assert source(cells[0]) == "# Sales" and "outputs" not in cells[0]


def test_without_a_front_end_and_without_path_the_model_is_told_to_pass_one(
    kernel: Kernel, script: ScriptedServer, analysis: Path
) -> None:
    script.add(reply(tool_calls=[("notebook_read", {})]), reply(text="I need a path."))
    kernel.ok("%%agent --new\nRead my notebook.")
    assert "pass path" in result_text(script.received[-1])
