"""Reverting a turn from its cell, in a real JupyterLab driven in Debian's
chromium: the cell's footer offers "Revert 2 files"; a click shows the diff
preview, Restore puts the edited file back and deletes the created one; the
next turn turns that card into plain text. A file changed since the turn is
shown as such and Restore is not offered; only "Overwrite changed files
too" overwrites it.

Run only these: ``pytest -m browser``. Skipped when chromium is missing
(``apt-get install -y chromium``); failed when JupyterLab or Playwright is
(the ``browser`` extra; ``.ci/run`` installs both).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._lab import notebook_json, notebook_page, require_browser

pytestmark = pytest.mark.browser

require_browser()

from playwright.sync_api import Locator, Page, expect  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
HELLO = 'def greet(name):\n    return "Helo, " + name\n'
CELLS = [
    "%%agent --mode acceptEdits\nFix the typo in hello.py and add a test.",
    "%%agent --mode acceptEdits\nMake notes.txt shout.",
]


def script() -> list:
    return [
        reply(
            tool_calls=[
                (
                    "edit_file",
                    {"path": "hello.py", "old_string": '"Helo, "', "new_string": '"Hello, "'},
                ),
                (
                    "write_file",
                    {"path": "test_hello.py", "content": "from hello import greet\n"},
                ),
            ]
        ),
        reply(text="Fixed the typo and added a test."),
        reply(tool_calls=[("write_file", {"path": "notes.txt", "content": "HELLO\n"})]),
        reply(text="Shouting now."),
    ]


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "project"
    root.mkdir()
    (root / "hello.py").write_text(HELLO)
    (root / "notes.txt").write_text("hello\n")
    with ScriptedServer(script()) as server:
        (root / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
            f"    model: test-model\n    base_url: {server.base_url}\n    api_key: sk-test\n"
        )
        (root / "revert.ipynb").write_text(notebook_json(CELLS))
        yield root
        assert server.remaining == 0 and not server.errors, server.errors


@pytest.fixture
def page(project: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    failure = ARTIFACTS / "browser-revert-failure.png"
    with notebook_page(project, "revert.ipynb", tmp_path / "lab", len(CELLS), failure=failure) as p:
        yield p
        report = getattr(request.node, "rep_call", None)
        if report is None or report.failed:
            ARTIFACTS.mkdir(exist_ok=True)
            p.screenshot(path=str(failure), full_page=True)


def run(page: Page, index: int) -> Locator:
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    expect(cell.locator(".jp-InputArea-prompt")).to_have_text(
        re.compile(r"\[\d+\]:"), timeout=30_000
    )
    return cell


def test_revert_a_turn_from_its_cell(page: Page, project: Path) -> None:
    hello, created, notes = project / "hello.py", project / "test_hello.py", project / "notes.txt"
    ARTIFACTS.mkdir(exist_ok=True)

    # 1. The turn edits one file and creates another; its footer offers the revert.
    cell = run(page, 0)
    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text("Fixed the typo")
    assert '"Hello, "' in hello.read_text() and created.exists()
    card = cell.locator(".mewcode-revert")
    button = card.get_by_role("button", name="Revert 2 files")
    expect(button).to_be_visible()

    # 2. A click shows what reverting would do, with the diff; nothing changed yet.
    button.click()
    expect(card).to_contain_text("Reverting would:")
    expect(card).to_contain_text("hello.py · restore")
    expect(card).to_contain_text("test_hello.py · delete (the turn created it)")
    expect(card.locator(".mewcode-diff").first).to_contain_text('"Helo, "')
    card.screenshot(path=str(ARTIFACTS / "revert-preview.png"))
    assert '"Hello, "' in hello.read_text()

    # 3. Restore: the edited file is back, the created one is gone, the card says so.
    card.get_by_role("button", name="Restore").click()
    expect(card).to_contain_text("Reverted 2 files", timeout=15_000)
    expect(card).to_contain_text("hello.py · restored")
    expect(card).to_contain_text("test_hello.py · deleted")
    expect(card.get_by_role("button")).to_have_count(0)  # done: nothing left to click
    assert hello.read_text() == HELLO
    assert not created.exists()
    card.screenshot(path=str(ARTIFACTS / "revert-done.png"))

    # 4. A file the person changed after the turn is shown, not silently overwritten.
    #    (The next turn settles the first card into text a saved notebook keeps.)
    first = cell
    cell = run(page, 1)
    expect(first.locator(".jp-Cell-outputArea")).to_contain_text("Reverted 2 files of this turn")
    expect(first.locator(".mewcode-revert")).to_have_count(0)
    card = cell.locator(".mewcode-revert")
    notes.write_text("HELLO\nmy own line\n")
    card.get_by_role("button", name="Revert 1 file").click()
    expect(card).to_contain_text("changed since the turn: left alone")
    expect(card.get_by_role("button", name="Restore")).to_be_hidden()
    page.keyboard.press("Escape")  # the focused card's Cancel: nothing happens
    expect(card.get_by_role("button", name="Revert 1 file")).to_be_visible()
    assert notes.read_text() == "HELLO\nmy own line\n"
    card.get_by_role("button", name="Revert 1 file").click()
    card.get_by_role("button", name="Overwrite changed files too").click()
    expect(card).to_contain_text("notes.txt · restored", timeout=15_000)
    assert notes.read_text() == "hello\n"
