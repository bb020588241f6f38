"""The notebook as the agent's workspace, in a real JupyterLab driven in
Debian's chromium, with MewCode's extension (``magics/labextension``).

A person types a cell key by key and does not save; the agent (a scripted
model) reads the open notebook and sees that typing; it inserts a chart cell
after it and replaces another cell's source, each after an Allow click on a
card showing the per-cell diff; meanwhile the person types into a third
cell, which is kept. The agent runs the new cell: its image output and
execution count appear in it. Ctrl+Z undoes the agent's last edit (and
Ctrl+Shift+Z redoes it); saved, the file holds the edits; the turn's Revert
card puts the cells back.

Run only these: ``pytest -m browser``. Skipped when chromium is missing
(``apt-get install -y chromium``); failed when JupyterLab or Playwright is
(the ``browser`` extra; ``.ci/run`` installs both).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._lab import HAS_RTC, cell_completed, notebook_page, require_browser
from tests._notebooks import png_b64

pytestmark = pytest.mark.browser

require_browser()

from playwright.sync_api import Locator, Page, expect  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
ALLOW = re.compile(r"^Allow$")
TYPED = "total = sum(rows)"
THIRD = "# my own notes"
FIXED = "print('fixed by the agent')"
CHART = (
    "import base64\nfrom IPython.display import Image, display\n"
    f"display(Image(data=base64.b64decode('{png_b64(40, 30)}')))"
)
PROMPT = "Read the cell I typed, add a chart below it and fix the old print."
CELLS = [
    ("data", "rows = [3, 5, 8]"),
    ("typed", ""),
    ("other", "print('old')"),
    ("third", ""),
    ("agent", f"%%agent\n{PROMPT}"),
]


def notebook() -> str:
    cells = [
        {"cell_type": "code", "execution_count": None, "id": cid, "metadata": {},
         "outputs": [], "source": source}
        for cid, source in CELLS
    ]  # fmt: skip
    kernelspec = {"display_name": "MewCode (Python 3)", "language": "python", "name": "mewcode"}
    data = {"cells": cells, "metadata": {"kernelspec": kernelspec}, "nbformat": 4,
            "nbformat_minor": 5}  # fmt: skip
    return json.dumps(data, indent=1)


def inserted_id(body: dict[str, Any]) -> str:
    """The id the agent's insert returned (the last tool result's text)."""
    content = body["messages"][-1]["content"]
    text = json.dumps(content)
    found = re.search(r"cell_id: ([A-Za-z0-9_-]+)", text)
    assert found, text
    return found.group(1)


def script() -> list[Any]:
    return [
        reply(tool_calls=[("notebook_read", {})]),
        reply(
            tool_calls=[
                ("notebook_edit", {"edit_mode": "insert", "cell_id": "typed", "new_source": CHART})
            ]
        ),
        lambda body: reply(tool_calls=[("notebook_read", {"cell_id": inserted_id(body)})]),
        reply(tool_calls=[("notebook_edit", {"cell_id": "other", "new_source": FIXED})]),
        lambda body: reply(tool_calls=[("notebook_run", {"cell_id": _new(body)})]),
        reply(text="Added the chart and fixed the print."),
    ]


_ids: list[str] = []


def _new(body: dict[str, Any]) -> str:
    return _ids[-1]


def _remember(body: dict[str, Any]) -> Any:
    _ids.append(inserted_id(body))
    return reply(tool_calls=[("notebook_read", {"cell_id": _ids[-1]})])


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ScriptedServer]]:
    root = tmp_path / "project"
    root.mkdir()
    steps = script()
    steps[2] = _remember
    with ScriptedServer(steps) as server:
        (root / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
            f"    model: test-model\n    base_url: {server.base_url}\n    api_key: sk-test\n"
        )
        (root / "work.ipynb").write_text(notebook())
        yield root, server


# With real-time collaboration too when jupyter-collaboration is installed
# (the "collaboration" extra): the document is then a shared Y document.
@pytest.fixture(params=[False, True] if HAS_RTC else [False], ids=["plain", "rtc"][: 1 + HAS_RTC])
def rtc(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def page(
    project: tuple[Path, ScriptedServer],
    tmp_path: Path,
    request: pytest.FixtureRequest,
    rtc: bool,
) -> Iterator[Page]:
    root, _ = project
    failure = ARTIFACTS / f"browser-notebook-failure{'-rtc' if rtc else ''}.png"
    with notebook_page(
        root, "work.ipynb", tmp_path / "lab", len(CELLS), failure=failure, rtc=rtc
    ) as p:
        yield p
        report = getattr(request.node, "rep_call", None)
        if report is None or report.failed:
            ARTIFACTS.mkdir(exist_ok=True)
            p.screenshot(path=str(failure), full_page=True)


def editor_text(cell: Locator) -> str:
    return cell.locator(".jp-InputArea-editor .cm-content").inner_text()


def allow(agent: Locator, nth: int) -> Locator:
    card = agent.locator(".mewcode-approval").nth(nth)
    expect(card.get_by_role("button", name=ALLOW)).to_be_enabled(timeout=30_000)
    return card


def test_the_agent_works_in_the_open_notebook(
    page: Page, project: tuple[Path, ScriptedServer], rtc: bool
) -> None:
    root, server = project
    ARTIFACTS.mkdir(exist_ok=True)
    shared = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.context.model.collaborative"
    )
    assert bool(shared) == rtc  # collaboration is on exactly when asked
    cells = page.locator(".jp-Notebook .jp-CodeCell")

    # The person types a cell key by key and does not save.
    cells.nth(1).locator(".jp-InputArea-editor").click()
    page.keyboard.type(TYPED, delay=15)
    assert TYPED not in (root / "work.ipynb").read_text()

    # They run the agent cell (found by its text: cells are inserted above it);
    # JupyterLab adds an empty cell below the last one run.
    agent = cells.filter(has=page.locator(".jp-InputArea-editor", has_text="%%agent"))
    agent.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    expect(cells).to_have_count(6)

    # The insert asks, with the new cell shown; the person types into a third cell first.
    card = allow(agent, 0)
    expect(card).to_contain_text("new code cell 2")
    expect(card.locator(".mewcode-diff")).to_contain_text("display(Image")
    read = server.requests[1]
    assert TYPED in json.dumps(read["messages"][-1]["content"])  # the unsaved typing was read
    cells.nth(3).locator(".jp-InputArea-editor").click()
    page.keyboard.type(THIRD, delay=15)
    card.get_by_role("button", name=ALLOW).click()

    # The inserted cell is there at once; the replace asks with the cell's diff.
    expect(cells).to_have_count(7, timeout=15_000)
    expect(cells.nth(2).locator(".jp-InputArea-editor")).to_contain_text("display(Image")
    card = allow(agent, 1)
    expect(card).to_contain_text("cell 3 · +1 −1")
    expect(card.locator(".mewcode-diff")).to_contain_text("print('old')")
    card.screenshot(path=str(ARTIFACTS / "notebook-edit-card.png"))
    card.get_by_role("button", name=ALLOW).click()
    expect(cells.nth(3).locator(".jp-InputArea-editor")).to_contain_text(FIXED)

    # The run asks like run_python; the chart appears in the new cell with a count.
    allow(agent, 2).get_by_role("button", name=ALLOW).click()
    cell_completed(agent, timeout=60_000)
    chart = cells.nth(2)
    expect(chart.locator(".jp-OutputArea-output img")).to_have_count(1, timeout=15_000)
    expect(chart.locator(".jp-InputArea-prompt")).to_have_text(re.compile(r"\[\d+\]:"))
    expect(agent.locator(".jp-Cell-outputArea")).to_contain_text("Added the chart")
    ran = server.requests[-1]["messages"][-1]["content"]
    assert any(
        part.get("type") == "image" for block in ran if block.get("type") == "tool_result"
        for part in (block["content"] if isinstance(block["content"], list) else [])
    )  # fmt: skip
    assert editor_text(cells.nth(4)) == THIRD  # the person's typing was kept
    page.screenshot(path=str(ARTIFACTS / "notebook-workspace.png"), full_page=True)

    # Ctrl+Z undoes the agent's last edit; Ctrl+Shift+Z brings it back.
    other = cells.nth(3)
    other.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Control+z")
    expect(other.locator(".jp-InputArea-editor")).to_contain_text("print('old')")
    assert editor_text(cells.nth(4)) == THIRD
    page.keyboard.press("Control+Shift+z")
    expect(other.locator(".jp-InputArea-editor")).to_contain_text(FIXED)

    # Saved, the file holds the edits.
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    expect(page.locator(".jp-mod-dirty")).to_have_count(0, timeout=15_000)
    saved = json.loads((root / "work.ipynb").read_text())["cells"]
    by_id = {c["id"]: "".join(c["source"]) for c in saved}
    assert by_id["typed"] == TYPED and by_id["other"] == FIXED and by_id["third"] == THIRD
    new = next(c for c in saved if c["id"] not in dict(CELLS))
    assert "".join(new["source"]) == CHART
    assert any("image/png" in o.get("data", {}) for o in new["outputs"])

    # The turn's Revert card puts the cells back, in the open notebook.
    revert = agent.locator(".mewcode-revert")
    revert.get_by_role("button", name="Revert 1 file").click()
    expect(revert).to_contain_text("work.ipynb · restore")
    revert.get_by_role("button", name="Restore").click()
    expect(revert).to_contain_text("work.ipynb · restored", timeout=15_000)
    expect(cells).to_have_count(6)
    expect(cells.nth(2).locator(".jp-InputArea-editor")).to_contain_text("print('old')")
    assert editor_text(cells.nth(1)) == TYPED and editor_text(cells.nth(3)) == THIRD
    revert.screenshot(path=str(ARTIFACTS / "notebook-revert.png"))
