"""What a first-time user meets in a real JupyterLab (Debian's chromium,
driven by Playwright the way a person does: clicks, keys).

A project that is not trusted yet, with an MCP server in its ``.mcp.json``
(the fixture server, over stdio) and the model the user's own:

1. the first agent cell after the kernel starts shows the trust card; while
   it waits the kernel (and the status bar) says Busy and no "starting… N s"
   counts on; a click on Trust answers it in one line and the cell's MCP
   call works at once (no "not trusted", no ``/mcp reconnect``);
2. a background helper's approval card waits on its board, and its row says
   "waiting for you", not "running"; answered, the row says "completed" and
   offers no Stop; ``/tasks`` shows the live board alone (no table beside it);
3. a cell that edits a file leaves its "Revert" card; after a kernel restart
   no card is left with "disconnected" icons; saved, the kernel shut down and
   the page reloaded, every agent cell reads (static HTML) with no "Error
   displaying widget" and no Python repr, and the file keeps no widget view.

Screenshots go to ``test-artifacts/``. Run only these: ``pytest -m browser``.
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
from tests._mcp import fixture_entry, provider_yaml

pytestmark = pytest.mark.browser

require_browser()

from playwright.sync_api import Locator, Page, expect  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
ALLOW = re.compile(r"^Allow$")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CELLS = [
    "%%agent\nSay hi through the fixture server.",
    "%%agent\nHave a helper write notes.txt in the background.",
    "%%agent\n/tasks",
    "%%agent\nChange hello to goodbye in notes.txt.",
]
HELPER = {
    "description": "write notes",
    "prompt": "Write notes.txt",
    "subagent_type": "general-purpose",
    "run_in_background": True,
    "name": "writer",
}


class Router:
    """The foreground's requests and the helper's, answered from two queues
    (the helper's run beside the foreground's)."""

    def __init__(self) -> None:
        self.parent = [
            reply(tool_calls=[("mcp__fx__echo", {"text": "hi"})]),
            reply(text="The server said hi."),
            reply(tool_calls=[("Agent", HELPER)]),
            reply(text="A helper is on it."),
            reply(
                tool_calls=[
                    (
                        "edit_file",
                        {"path": "notes.txt", "old_string": "hello", "new_string": "goodbye"},
                    )
                ]
            ),
            reply(text="Changed it."),
        ]
        self.child = [
            reply(tool_calls=[("write_file", {"path": "notes.txt", "content": "hello\n"})]),
            reply(text="Wrote notes.txt."),
        ]
        self.bodies: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> WireReply:
        with self.lock:
            if "as a subagent of MewCode" in json.dumps(body.get("system", "")):
                return self.child.pop(0)
            self.bodies.append(body)
            return self.parent.pop(0)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, Path, Router]]:
    root, state = tmp_path / "project", tmp_path / "lab"
    root.mkdir()
    router = Router()
    with ScriptedServer([router] * 8) as server:
        # the model is the user's own (~/.mewcode/config.yaml in the kernels'
        # home); the MCP server is the project's, so it waits for trust
        config = state / "home" / ".mewcode" / "config.yaml"
        config.parent.mkdir(parents=True)
        config.write_text(provider_yaml(server.base_url))
        (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"fx": fixture_entry()}}))
        (root / "first.ipynb").write_text(notebook_json(CELLS))
        yield root, state, router


@pytest.fixture
def page(project: tuple[Path, Path, Router], request: pytest.FixtureRequest) -> Iterator[Page]:
    root, state, _ = project
    failure = ARTIFACTS / "browser-first-use-failure.png"
    untrusted = {"MEWCODE_TRUST_PROJECT": ""}
    with notebook_page(root, "first.ipynb", state, len(CELLS), failure=failure, env=untrusted) as p:
        yield p
        report = getattr(request.node, "rep_call", None)
        if report is None or report.failed:
            ARTIFACTS.mkdir(exist_ok=True)
            p.screenshot(path=str(failure), full_page=True)


def kernel_status(page: Page) -> str:
    return page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
    )


def output(cell: Locator) -> Locator:
    return cell.locator(".jp-Cell-outputArea")


def tool_result(body: dict[str, Any]) -> str:
    [block] = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    content = block["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def test_a_first_time_user_in_jupyterlab(page: Page, project: tuple[Path, Path, Router]) -> None:
    root, _, router = project
    notes = root / "notes.txt"
    ARTIFACTS.mkdir(exist_ok=True)

    # 1. The first agent cell: the trust card waits, and everything says so.
    cell = run_cell(page, 0)
    card = output(cell).locator(".mewcode-trust")
    expect(card).to_contain_text("MCP server 'fx'", timeout=60_000)
    expect(card).not_to_contain_text("MCP server MCP server")
    trust = card.get_by_role("button", name="Trust")
    expect(trust).to_be_enabled()
    assert kernel_status(page) == "busy"
    expect(
        page.locator(".jp-StatusBar-Item").filter(has_text=re.compile("Busy"))
    ).not_to_have_count(0)
    expect(output(cell)).not_to_contain_text("starting…")  # the wait is not "starting"
    expect(card.get_by_role("button", name="Keep ignoring")).to_be_focused()  # keyboard ready
    card.screenshot(path=str(ARTIFACTS / "first-use-trust-card.png"))
    trust.click()
    expect(output(cell)).to_contain_text("✓ Trusted this project's settings")
    expect(output(cell).locator(".mewcode-trust")).to_have_count(0)  # answered: one line
    cell_completed(cell)
    expect(output(cell)).to_contain_text("The server said hi.")
    expect(output(cell).locator(".mewcode-tool")).to_contain_text("done")
    expect(output(cell)).to_contain_text("MCP server 'fx' started: the project is trusted.")
    expect(output(cell)).not_to_contain_text("is not trusted")
    expect(output(cell)).not_to_contain_text("/mcp reconnect")
    assert tool_result(router.bodies[1]) == "echo: hi"  # the very first call worked

    # 2. A background helper asks on its board: "waiting for you", not "running".
    cell = run_cell(page, 1)
    cell_completed(cell)
    board = output(cell).locator(".mewcode-taskboard")
    row = board.locator(".mewcode-task").filter(has_text="writer")
    asking = board.locator(".mewcode-approval")
    expect(asking.get_by_role("button", name=ALLOW)).to_be_enabled()
    expect(row).to_contain_text("waiting for you")
    expect(row).not_to_contain_text("running")
    expect(asking.locator(".mewcode-diff")).to_contain_text("hello")  # the diff, not JSON
    board.screenshot(path=str(ARTIFACTS / "first-use-board-waiting.png"))
    asking.get_by_role("button", name=ALLOW).click()
    expect(row).to_contain_text("completed", timeout=30_000)
    expect(row.get_by_role("button", name="Stop")).to_have_count(0)
    assert notes.read_text() == "hello\n"

    # /tasks: the live board alone
    cell = run_cell(page, 2)
    cell_completed(cell)
    expect(output(cell).locator(".mewcode-taskboard")).to_have_count(1)
    expect(output(cell).locator(".mewcode-task")).to_contain_text("completed")
    expect(output(cell).locator("table")).to_have_count(0)

    # 3. A cell that edits a file: its Revert card.
    cell = run_cell(page, 3)
    allow = output(cell).locator(".mewcode-approval").first.get_by_role("button", name=ALLOW)
    expect(allow).to_be_focused()  # the card takes the keyboard: y/a/n need no click
    page.keyboard.press("y")
    cell_completed(cell)
    assert notes.read_text() == "goodbye\n"
    expect(output(cell).locator(".mewcode-revert").get_by_role("button")).to_contain_text(
        "Revert 1 file"
    )

    # After a restart no card is left with "disconnected" icons.
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()"
    )
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
        timeout=60_000,
    )
    notebook = page.locator(".jp-Notebook")
    expect(notebook.locator(".jupyter-widgets-disconnected:visible")).to_have_count(0)
    # the Revert card offers no dead button: it says how to revert instead
    revert = output(cell).get_by_role("button", name="Revert 1 file")
    expect(revert).to_have_count(0, timeout=30_000)
    expect(output(cell)).to_contain_text("/rewind")
    expect(output(cell)).to_contain_text("Changed it.")
    page.screenshot(path=str(ARTIFACTS / "first-use-restarted.png"), full_page=True)

    # Saved, shut down, reloaded: every agent cell reads, no widget error.
    notebook.click()
    page.keyboard.press("Control+s")
    expect(page.locator(".jp-mod-dirty")).to_have_count(0)
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.shutdown()")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget?.sessionContext?.session", timeout=30_000
    )
    page.reload()
    outputs = page.locator(".jp-Notebook .jp-Cell-outputArea")
    expect(outputs.nth(3)).to_contain_text("Changed it.", timeout=90_000)
    expect(outputs.nth(0)).to_contain_text("✓ Trusted this project's settings")
    expect(outputs.nth(0)).to_contain_text("The server said hi.")
    expect(outputs.nth(1)).to_contain_text("writer")
    expect(outputs.nth(1)).to_contain_text("completed")
    expect(outputs.nth(2)).to_contain_text("writer")
    expect(outputs.nth(3)).to_contain_text("notes.txt")
    for bad in ("Error displaying widget", "model not found", "VBox(", "object at 0x"):
        expect(page.locator(".jp-Notebook")).not_to_contain_text(bad)
    page.screenshot(path=str(ARTIFACTS / "first-use-reloaded.png"), full_page=True)
    saved = json.loads((root / "first.ipynb").read_text())
    agent_cells = [c for c in saved["cells"] if "".join(c["source"]).startswith("%%agent")]
    assert len(agent_cells) == len(CELLS)
    for cell_json in agent_cells:
        data = [o.get("data", {}) for o in cell_json["outputs"]]
        source = "".join(cell_json["source"])
        assert data and all(WIDGET_VIEW not in d for d in data), source
        assert any("text/html" in d for d in data), source
