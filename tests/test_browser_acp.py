"""MewCode in JupyterLab's chat, for real: JupyterLab with Jupyter AI's ACP
client and the ``jupyter-ai`` extra installed (the ``browser`` extra brings
both), in Debian's chromium driven by Playwright. The chat lists the
"MewCode" persona, a message typed key by key is answered by the scripted
model through ``python -m mewcode_kernel acp``, and the conversation is a
MewCode session in the project's ``.mewcode/sessions/``. Screenshots go to
``test-artifacts/`` when it fails. Skipped when chromium is missing
(``apt-get install -y chromium``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.core.session import list_sessions
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._lab import CHROMIUM, CHROMIUM_FLAGS, JupyterLab, require_browser

pytestmark = pytest.mark.browser
require_browser()

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
ANSWER = "Hello from MewCode in the chat."
QUESTION = "Who is answering in this chat?"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ScriptedServer]]:
    root = tmp_path / "project"
    root.mkdir()
    with ScriptedServer([reply(text=ANSWER)]) as server:
        (root / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
            f"    model: test-model\n    base_url: {server.base_url}\n    api_key: sk-test\n"
        )
        (root / "talk.chat").write_text("")
        yield root, server


@pytest.fixture
def page(
    project: tuple[Path, ScriptedServer], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Page]:
    root, _ = project
    with JupyterLab(root, tmp_path / "lab") as lab, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(30_000)
        try:
            page.goto(lab.url("lab/tree/talk.chat"))
            yield page
        finally:
            report = getattr(request.node, "rep_call", None)
            if report is None or report.failed:
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "browser-acp-failure.png"), full_page=True)
                (ARTIFACTS / "browser-acp-failure-jupyterlab.log").write_text(lab.log())
            browser.close()


def test_the_mewcode_persona_answers_in_jupyterlab_chat(
    page: Page, project: tuple[Path, ScriptedServer]
) -> None:
    root, server = project
    # the persona picker of the chat's input lists MewCode
    expect(page.get_by_text("MewCode", exact=True).first).to_be_visible(timeout=90_000)
    box = page.locator(".jp-chat-input-container textarea, textarea").first
    box.click()
    page.keyboard.type(QUESTION, delay=10)
    page.keyboard.press("Enter")
    expect(page.get_by_text(QUESTION)).to_be_visible()
    expect(page.get_by_text(ANSWER)).to_be_visible(timeout=90_000)
    assert server.remaining == 0 and not server.errors, server.errors
    assert QUESTION in json.dumps(server.received[-1].body["messages"])
    [stored] = list_sessions(root)
    assert QUESTION in stored.first_prompt
