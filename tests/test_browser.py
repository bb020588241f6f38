"""The real thing: JupyterLab in Debian's chromium, driven by Playwright.

A notebook in the ``mewcode`` kernel whose model (a local scripted server,
configured by the project's ``.mewcode.yaml``) asks to write a file: click
Allow and the file is written and the cell completes; in the next cell click
Deny (with a note) and nothing changes, and the note reaches the model;
press Interrupt while an approval waits and the cell ends within about a
second, and the next agent cell works. A screenshot of the approval card is
saved under ``test-artifacts/``.

Run only these: ``pytest -m browser``. Skipped when chromium, JupyterLab or
Playwright is missing (``.ci/run`` installs them).
"""

from __future__ import annotations

import importlib.util
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._lab import CHROMIUM, CHROMIUM_FLAGS, JupyterLab

pytestmark = pytest.mark.browser

_missing = [
    what
    for what, ok in (
        (f"chromium ({CHROMIUM})", Path(CHROMIUM).exists()),
        ("jupyterlab", importlib.util.find_spec("jupyterlab") is not None),
        ("playwright", importlib.util.find_spec("playwright") is not None),
    )
    if not ok
]
if _missing:
    pytest.skip(
        f"browser test needs {', '.join(_missing)}: apt-get install -y chromium; "
        'pip install -e ".[browser]"',
        allow_module_level=True,
    )

from playwright.sync_api import Locator, Page, expect, sync_playwright  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
GREETING = "hello from the agent\n"
NOTE = "keep the greeting as it is"
ALLOW = re.compile(r"Allow$")  # not "Always allow" (and the icon is part of the name)
CELLS = [
    "%%agent\nWrite a greeting to notes.txt.",
    "%%agent\nNow replace notes.txt with something else.",
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


def card_of(cell: Locator) -> Locator:
    card = cell.locator(".mewcode-approval")
    expect(card.get_by_role("button", name=ALLOW)).to_be_enabled(timeout=30_000)
    return card


def completed(cell: Locator, timeout: float = 30_000) -> None:
    expect(cell.locator(".jp-InputArea-prompt")).to_have_text(
        re.compile(r"\[\d+\]:"), timeout=timeout
    )


def test_allow_deny_and_interrupt_in_jupyterlab(
    page: Page, project: tuple[Path, ScriptedServer]
) -> None:
    root, server = project
    notes = root / "notes.txt"

    # 1. Allow: the file is written, the card is disabled and says so, the cell completes.
    cell = run(page, 0)
    card = card_of(cell)
    expect(card).to_contain_text("write_file")
    expect(card).to_contain_text("notes.txt")
    ARTIFACTS.mkdir(exist_ok=True)
    card.screenshot(path=str(ARTIFACTS / "approval-card.png"))
    assert not notes.exists()
    card.get_by_role("button", name=ALLOW).click()
    completed(cell)
    assert notes.read_text() == GREETING
    expect(card).to_contain_text("✓ Allowed by you")
    expect(card.get_by_role("button", name="Deny")).to_be_disabled()
    expect(cell.locator(".mewcode-tool")).to_contain_text("write_file notes.txt · done")
    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text("Wrote notes.txt.")
    expect(cell.locator(".mewcode-footer")).to_contain_text("✓ done")

    # 2. Deny with a note: nothing changes, and the model is told why.
    cell = run(page, 1)
    card = card_of(cell)
    card.get_by_placeholder("Optional note to the model").fill(NOTE)
    card.get_by_role("button", name="Deny").click()
    completed(cell)
    expect(card).to_contain_text(f"✗ Denied by you — note to the model: “{NOTE}”")
    expect(cell.locator(".mewcode-tool")).to_contain_text("write_file notes.txt · denied")
    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text("notes.txt is unchanged.")
    assert notes.read_text() == GREETING
    denied = server.requests[3]["messages"][-1]["content"][0]
    assert denied["type"] == "tool_result" and NOTE in json.dumps(denied)

    # 3. Interrupt while the card waits: the cell ends within about a second.
    cell = run(page, 2)
    card = card_of(cell)
    started = time.monotonic()
    page.locator('.jp-NotebookPanel-toolbar [data-command="notebook:interrupt-kernel"]').click()
    completed(cell, timeout=5_000)
    ended_after = time.monotonic() - started
    print(f"cell ended {ended_after:.2f} s after Interrupt")
    assert ended_after < 1.5, f"the cell took {ended_after:.2f} s to end after Interrupt"
    expect(card).to_contain_text("Interrupted before an answer.")
    expect(card.get_by_role("button", name=ALLOW)).to_be_disabled()
    expect(cell.locator(".jp-Cell-outputArea")).not_to_contain_text("Traceback")
    assert not (root / "interrupted.txt").exists()

    # 4. The next agent cell works and continues the same conversation.
    cell = run(page, 3)
    completed(cell)
    expect(cell.locator(".jp-Cell-outputArea")).to_contain_text("Still here.")
    server.assert_all_used()
    page.set_viewport_size({"width": 1280, "height": 2000})  # the whole notebook, for a look
    page.locator(".jp-Notebook .jp-CodeCell").first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "browser-notebook.png"))
