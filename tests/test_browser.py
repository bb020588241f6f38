"""The real thing: JupyterLab in Debian's chromium, driven by Playwright, used
the way a person does (keys typed one by one, clicks, the keyboard).

A notebook in the ``mewcode`` kernel whose model (a local scripted server,
configured by the project's ``.mewcode.yaml``) asks to write, edit and run
things: the cards show diffs and commands; Allow writes the file; a note typed
key by key reaches the model in full with Deny, or with Enter in the note;
ticking then unticking "save" saves nothing, while a card answered with the
``a`` shortcut and the box ticked saves its rule; the kernel stays busy while
the cell runs; Interrupt ends a waiting cell within about a second; and the
saved notebook, reopened after the kernel was shut down, still shows the
transcript, diffs and decisions. Screenshots go to ``test-artifacts/``.

Run only these: ``pytest -m browser``. Skipped when chromium is missing
(``apt-get install -y chromium``); failed when JupyterLab or Playwright is
(the ``browser`` extra; ``.ci/run`` installs both).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._lab import CHROMIUM, CHROMIUM_FLAGS, JupyterLab, require_browser

pytestmark = pytest.mark.browser

require_browser()

from playwright.sync_api import Locator, Page, expect, sync_playwright  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
GREETING = "hello from the agent\n"
NOTE = "never delete source files"
ENTER_NOTE = "keep hello"
ALLOW = re.compile(r"^Allow$")  # not "Always allow"
CELLS = [
    "%%agent\nWrite a greeting to notes.txt.",
    "%%agent\nNow replace notes.txt with something else.",
    "%%agent\nList the files, then count the lines of notes.txt.",
    "%%agent\nSay goodbye in notes.txt.",
    "%%agent\nRun the build.",
    "%%agent\nAre you still there?",
]


def script() -> list:
    return [
        reply(
            text="I'll write the greeting.",
            tool_calls=[("write_file", {"path": "notes.txt", "content": GREETING})],
        ),
        reply(text="Wrote notes.txt."),
        reply(tool_calls=[("write_file", {"path": "notes.txt", "content": "overwritten\n"})]),
        reply(text="Understood: notes.txt is unchanged."),
        reply(tool_calls=[("bash", {"command": "ls"})]),
        reply(tool_calls=[("bash", {"command": "wc -l notes.txt"})]),
        reply(text="Listed and counted."),
        reply(
            tool_calls=[
                (
                    "edit_file",
                    {"path": "notes.txt", "old_string": "hello", "new_string": "goodbye"},
                )
            ]
        ),
        reply(text="Left it alone."),
        reply(tool_calls=[("bash", {"command": "touch interrupted.txt"})]),
        reply(text="Still here."),
    ]


def notebook() -> dict:
    return {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": {},
                "outputs": [],
                "source": src,
            }
            for src in CELLS
        ],
        "metadata": {
            "kernelspec": {
                "display_name": "MewCode (Python 3)",
                "language": "python",
                "name": "mewcode",
            }
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ScriptedServer]]:
    root = tmp_path / "project"
    root.mkdir()
    with ScriptedServer(script()) as server:
        (root / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
            f"    model: test-model\n    base_url: {server.base_url}\n    api_key: sk-test\n"
        )
        (root / "agent.ipynb").write_text(json.dumps(notebook()))
        yield root, server


@pytest.fixture
def page(
    project: tuple[Path, ScriptedServer], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Page]:
    """The notebook open in JupyterLab, its kernel idle. If the test fails, a
    screenshot and JupyterLab's log are saved under test-artifacts/."""
    root, _ = project
    with JupyterLab(root, tmp_path / "lab") as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.set_default_timeout(30_000)
        try:
            page.goto(lab.url("lab/tree/agent.ipynb"))
            expect(page.locator(".jp-Notebook .jp-CodeCell")).to_have_count(
                len(CELLS), timeout=90_000
            )
            page.wait_for_function(
                "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel"
                "?.status === 'idle'",
                timeout=90_000,
            )
            yield page
        finally:
            report = getattr(request.node, "rep_call", None)
            if report is None or report.failed:
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "browser-failure.png"), full_page=True)
                (ARTIFACTS / "browser-failure-jupyterlab.log").write_text(lab.log())
            browser.close()


def run(page: Page, index: int) -> Locator:
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    return cell


def card_of(cell: Locator, nth: int = 0) -> Locator:
    card = cell.locator(".mewcode-approval").nth(nth)
    expect(card.get_by_role("button", name=ALLOW)).to_be_enabled(timeout=30_000)
    return card


def completed(cell: Locator, timeout: float = 30_000) -> None:
    expect(cell.locator(".jp-InputArea-prompt")).to_have_text(
        re.compile(r"\[\d+\]:"), timeout=timeout
    )


def kernel_status(page: Page) -> str:
    return page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
    )


def local_rules(root: Path) -> str:
    path = root / ".mewcode" / "settings.local.yaml"
    return path.read_text() if path.exists() else ""


def test_approvals_in_jupyterlab(page: Page, project: tuple[Path, ScriptedServer]) -> None:
    root, server = project
    notes = root / "notes.txt"
    ARTIFACTS.mkdir(exist_ok=True)

    # 1. Allow: the card shows what will be written, then collapses to one line.
    cell = run(page, 0)
    card = card_of(cell)
    expect(card).to_be_in_viewport()  # a new card scrolls into view
    expect(card).to_contain_text("write_file")
    expect(card).to_contain_text("new file · 1 line")
    expect(card.locator(".mewcode-diff")).to_contain_text("hello from the agent")
    card.screenshot(path=str(ARTIFACTS / "approval-card.png"))
    assert not notes.exists()
    card.get_by_role("button", name=ALLOW).click()
    completed(cell)
    assert notes.read_text() == GREETING
    expect(card).to_contain_text("✓ allowed write_file notes.txt")
    expect(card.get_by_role("button", name="Deny")).to_have_count(0)
    expect(cell.locator(".mewcode-tool")).to_contain_text("write_file notes.txt · done")
    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text("Wrote notes.txt.")
    expect(cell.locator(".mewcode-footer")).to_contain_text("✓ done")

    # 2. Deny with a note typed key by key: the model gets every keystroke.
    cell = run(page, 1)
    card = card_of(cell)
    expect(card).to_contain_text("overwrite 1 line · +1 −1")
    card.get_by_placeholder("Optional note to the model").press_sequentially(NOTE, delay=25)
    card.get_by_role("button", name="Deny").click()
    completed(cell)
    expect(card).to_contain_text(f"✗ denied write_file notes.txt · note to the model: “{NOTE}”")
    expect(cell.locator(".mewcode-tool")).to_contain_text("write_file notes.txt · denied")
    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text("notes.txt is unchanged.")
    assert notes.read_text() == GREETING
    denied = server.requests[3]["messages"][-1]["content"][0]
    assert denied["type"] == "tool_result" and NOTE in json.dumps(denied)

    # 3. Tick then untick "save", Always allow: a session rule, nothing saved. The
    #    next card is answered from the keyboard with the box ticked: saved.
    cell = run(page, 2)
    card = card_of(cell)
    expect(card.locator(".mewcode-command")).to_contain_text("ls")
    expect(card).to_contain_text(f"runs in {root}")
    save = card.get_by_label("Save “Always allow” to this project")
    save.click()
    save.click()
    expect(save).not_to_be_checked()
    card.get_by_role("button", name="Always allow").click()
    card = card_of(cell, 1)
    card.screenshot(path=str(ARTIFACTS / "approval-card-bash.png"))
    assert kernel_status(page) == "busy"  # the cell still runs after the first answer
    save = card.get_by_label("Save “Always allow” to this project")
    save.click()
    expect(save).to_be_checked()
    page.keyboard.press("a")  # the focused card's shortcut for Always allow
    completed(cell)
    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text("Listed and counted.")
    expect(cell.locator(".mewcode-approval").nth(0)).to_contain_text("✓ always allowed bash ls")
    expect(cell.locator(".mewcode-approval").nth(1)).to_contain_text(
        "✓ always allowed bash wc -l notes.txt · saved to the project"
    )
    saved = local_rules(root)
    assert "wc -l notes.txt" in saved and "Bash(ls" not in saved, saved

    # 4. Enter in the note denies with the note (typed key by key).
    cell = run(page, 3)
    card = card_of(cell)
    expect(card).to_contain_text("+1 −1")
    note = card.get_by_placeholder("Optional note to the model")
    note.press_sequentially(ENTER_NOTE, delay=25)
    note.press("Enter")
    completed(cell)
    expect(card).to_contain_text(f"note to the model: “{ENTER_NOTE}”")
    assert notes.read_text() == GREETING
    denied = server.requests[8]["messages"][-1]["content"][0]
    assert ENTER_NOTE in json.dumps(denied)

    # 5. Interrupt while the card waits: the cell ends within about a second.
    cell = run(page, 4)
    card = card_of(cell)
    started = time.monotonic()
    page.locator('.jp-NotebookPanel-toolbar [data-command="notebook:interrupt-kernel"]').click()
    completed(cell, timeout=5_000)
    ended_after = time.monotonic() - started
    print(f"cell ended {ended_after:.2f} s after Interrupt")
    assert ended_after < 1.5, f"the cell took {ended_after:.2f} s to end after Interrupt"
    expect(card).to_contain_text("not answered: Interrupted before an answer.")
    expect(cell.locator(".jp-Cell-outputArea")).not_to_contain_text("Traceback")
    assert not (root / "interrupted.txt").exists()

    # 6. The next agent cell works and continues the same conversation.
    cell = run(page, 5)
    completed(cell)
    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text("Still here.")
    server.assert_all_used()
    page.set_viewport_size({"width": 1280, "height": 2400})  # the whole notebook, for a look
    page.locator(".jp-Notebook .jp-CodeCell").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "browser-notebook.png"))

    # 7. Saved, kernel shut down, reloaded: the transcript, diffs and decisions
    #    still read (static HTML), with no "model not found".
    page.locator(".jp-Notebook").click()
    page.keyboard.press("Control+s")
    expect(page.locator(".jp-mod-dirty")).to_have_count(0)
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.shutdown()")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget?.sessionContext?.session", timeout=30_000
    )
    page.reload()
    # (running the last cell added an empty one below it, as JupyterLab does)
    expect(page.locator(".jp-Notebook .jp-CodeCell").nth(len(CELLS) - 1)).to_contain_text(
        "Still here.", timeout=90_000
    )
    outputs = page.locator(".jp-Notebook .jp-Cell-outputArea")
    expect(outputs.nth(0)).to_contain_text("✓ allowed write_file notes.txt")
    expect(outputs.nth(0)).to_contain_text("Wrote notes.txt.")
    expect(outputs.nth(1)).to_contain_text(f"note to the model: “{NOTE}”")
    expect(outputs.nth(2)).to_contain_text("saved to the project")
    expect(page.locator(".jp-Notebook")).not_to_contain_text("model not found")
    expect(page.locator(".jp-Notebook")).not_to_contain_text("VBox(")
    decided = outputs.nth(1).locator(".mewcode-approval")
    decided.locator("summary").click()  # a decided card expands to what was asked
    expect(decided).to_contain_text("overwrite 1 line · +1 −1")
    row = outputs.nth(1).locator(".mewcode-tool")
    row.locator("summary").click()  # the tool row keeps the diff
    expect(row.locator(".mewcode-diff")).to_contain_text("overwritten")
    page.screenshot(path=str(ARTIFACTS / "browser-reloaded.png"), full_page=True)
    saved = json.loads((root / "agent.ipynb").read_text())
    kinds = {k for c in saved["cells"] for o in c["outputs"] for k in o.get("data", {})}
    assert "application/vnd.jupyter.widget-view+json" not in kinds
    assert {"text/html", "text/markdown"} <= kinds
