"""Background tasks in a real JupyterLab, driven in Debian's chromium: a cell
launches a background subagent and ends; the task board in its output keeps
updating; the subagent's approval card appears on the board and a click on
Allow lets it write; another task is stopped from its row.

Run only these: ``pytest -m browser``. Skipped when chromium is missing
(``apt-get install -y chromium``); failed when JupyterLab or Playwright is
(the ``browser`` extra; ``.ci/run`` installs both).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, WireReply, reply
from tests._lab import cell_completed, notebook_json, notebook_page, require_browser, run_cell

pytestmark = pytest.mark.browser

require_browser()

from playwright.sync_api import Page, expect  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
CELLS = [
    "%%agent\nHave a helper write notes.txt in the background.",
    "%%agent\nStart a slow helper.",
]


class Router:
    """Parent and subagent requests answered from two queues; a subagent asked
    to ``Sleep`` waits until ``release`` (or the test ends)."""

    def __init__(self) -> None:
        self.parent = [
            reply(tool_calls=[("Agent", {"description": "write notes", "prompt": "Write notes.txt", "subagent_type": "general-purpose", "run_in_background": True, "name": "writer"})]),
            reply(text="A helper is on it."),
            reply(tool_calls=[("Agent", {"description": "sleep", "prompt": "Sleep", "subagent_type": "general-purpose", "run_in_background": True, "name": "sleeper"})]),
            reply(text="The slow helper started."),
        ]  # fmt: skip
        self.child = [
            reply(
                tool_calls=[("write_file", {"path": "notes.txt", "content": "from the helper\n"})]
            ),
            reply(text="Wrote notes.txt."),
        ]
        self.release = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> WireReply:
        system = json.dumps(body.get("system", ""))
        if "as a subagent of MewCode" not in system:
            with self.lock:
                return self.parent.pop(0)
        if "Sleep" in json.dumps(body["messages"][-1]):
            self.release.wait(timeout=60)
            return reply(text="Woke up.")
        with self.lock:
            return self.child.pop(0)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, Router]]:
    root = tmp_path / "project"
    root.mkdir()
    router = Router()
    with ScriptedServer([router] * 8) as server:
        (root / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
            f"    model: test-model\n    base_url: {server.base_url}\n    api_key: sk-test\n"
        )
        (root / "tasks.ipynb").write_text(notebook_json(CELLS))
        try:
            yield root, router
        finally:
            router.release.set()


@pytest.fixture
def page(
    project: tuple[Path, Router], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Page]:
    root, _ = project
    failure = ARTIFACTS / "browser-tasks-failure.png"
    with notebook_page(root, "tasks.ipynb", tmp_path / "lab", len(CELLS), failure=failure) as p:
        yield p
        report = getattr(request.node, "rep_call", None)
        if report is None or report.failed:
            ARTIFACTS.mkdir(exist_ok=True)
            p.screenshot(path=str(failure), full_page=True)


def test_a_background_task_asks_on_its_board_and_can_be_stopped(
    page: Page, project: tuple[Path, Router]
) -> None:
    root, _ = project
    notes = root / "notes.txt"

    # 1. The cell launches a helper and ends; the board stays live in its output.
    cell = run_cell(page, 0)
    cell_completed(cell)
    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text("A helper is on it.")
    board = cell.locator(".mewcode-taskboard")
    expect(board).to_be_visible()
    row = board.locator(".mewcode-task").filter(has_text="writer")
    # 2. Its approval card appears on the board after the cell ended; Allow lets it write.
    card = board.locator(".mewcode-approval")
    expect(card).to_contain_text("background task writer")
    expect(card).to_contain_text("write_file")
    assert not notes.exists()
    ARTIFACTS.mkdir(exist_ok=True)
    board.screenshot(path=str(ARTIFACTS / "task-board-approval.png"))
    card.get_by_role("button", name=re.compile(r"Allow$")).click()
    expect(row).to_contain_text("completed", timeout=30_000)
    assert notes.read_text() == "from the helper\n"
    expect(card).to_contain_text("✓ allowed write_file notes.txt")
    expect(row.get_by_role("button", name="Stop")).to_have_count(0)  # finished: nothing to stop

    # 3. A slow helper is stopped from its row; it ends cancelled.
    cell = run_cell(page, 1)
    cell_completed(cell)
    slow = cell.locator(".mewcode-taskboard .mewcode-task").filter(has_text="sleeper")
    expect(slow).to_contain_text("running")
    slow.get_by_role("button", name="Stop").click()
    expect(slow).to_contain_text("cancelled", timeout=15_000)
    page.locator(".jp-Notebook .jp-CodeCell").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "task-boards.png"), full_page=True)
