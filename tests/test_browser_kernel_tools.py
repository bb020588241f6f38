"""The kernel tools in a real JupyterLab, driven in Debian's chromium: a
person types an agent cell key by key and runs it; the agent (a scripted
model) looks at the notebook's DataFrame and proposes a cell, which appears
right below the agent cell, not yet run.

Run only these: ``pytest -m browser``. Skipped when chromium is missing
(``apt-get install -y chromium``); failed when JupyterLab or Playwright is
(the ``browser`` extra; ``.ci/run`` installs both).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._lab import cell_completed, notebook_json, notebook_page, require_browser, run_cell

pytestmark = pytest.mark.browser

require_browser()

from playwright.sync_api import Page, expect  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
PROPOSAL = "sales = sales.dropna(subset=['units'])"
PROMPT = "Look at @sales and propose a fix."
CELLS = ["import pandas as pd\nsales = pd.DataFrame({'units': [3, None, 7]})", ""]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ScriptedServer]]:
    root = tmp_path / "project"
    root.mkdir()
    steps = [
        reply(tool_calls=[("notebook_variables", {})]),
        reply(tool_calls=[("propose_cell", {"source": PROPOSAL})]),
        reply(text="Run the cell below to drop the row without units."),
    ]
    with ScriptedServer(steps) as server:
        (root / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
            f"    model: test-model\n    base_url: {server.base_url}\n    api_key: sk-test\n"
        )
        (root / "analysis.ipynb").write_text(notebook_json(CELLS))
        yield root, server


@pytest.fixture
def page(
    project: tuple[Path, ScriptedServer], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Page]:
    root, _ = project
    failure = ARTIFACTS / "browser-kernel-tools-failure.png"
    with notebook_page(root, "analysis.ipynb", tmp_path / "lab", len(CELLS), failure=failure) as p:
        yield p
        report = getattr(request.node, "rep_call", None)
        if report is None or report.failed:
            ARTIFACTS.mkdir(exist_ok=True)
            p.screenshot(path=str(failure), full_page=True)


def test_a_proposed_cell_appears_below_the_agent_cell(
    page: Page, project: tuple[Path, ScriptedServer]
) -> None:
    _, server = project
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    cell_completed(run_cell(page, 0))  # the data is loaded

    # The person types the agent cell into the empty cell, key by key, and runs it.
    agent = cells.nth(1)
    agent.locator(".jp-InputArea-editor").click()
    page.keyboard.type("%%agent", delay=20)
    page.keyboard.press("Enter")
    page.keyboard.type(PROMPT, delay=20)
    page.keyboard.press("Shift+Enter")
    cell_completed(agent)
    expect(agent.locator(".jp-Cell-outputArea")).to_contain_text("drop the row without units")

    # The proposal is the next cell, right below the agent cell, not run yet.
    proposed = cells.nth(2)
    expect(proposed.locator(".jp-InputArea-editor")).to_contain_text(PROPOSAL)
    expect(proposed.locator(".jp-InputArea-prompt")).to_have_text("[ ]:")
    expect(cells).to_have_count(4)  # and the empty cell Shift+Enter made comes after it
    # @sales reached the model with the frame's summary
    first = server.received[0].body["messages"][-1]["content"]
    assert any("sales: pandas.DataFrame, shape 3×1" in c.get("text", "") for c in first)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "proposed-cell.png"), full_page=True)
