# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""The first agent cell of a fresh ``mewcode`` kernel, as a person at JupyterLab
meets it: something shows at once, the provider SDK was imported in the
background after the kernel became ready, and the footer's time is the cell's
wall time."""

from __future__ import annotations

import queue
import re
import time
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import jupyter_path, kernel_env, running_kernel, server  # noqa: F401

CONFIG = (
    "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
    "    model: test-model\n    base_url: {url}\n    api_key: sk-test\n"
)


@pytest.fixture
def root(tmp_path: Path, server: ScriptedServer) -> Path:
    """A project whose default provider is the scripted server."""
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mewcode.yaml").write_text(CONFIG.format(url=server.base_url))
    return project


def _plain(msg: dict[str, Any]) -> str:
    return msg["content"].get("data", {}).get("text/plain", "")


def test_the_first_cell_shows_starting_at_once_and_reports_its_wall_time(
    root: Path, tmp_path: Path, jupyter_path: Path, server: ScriptedServer
) -> None:
    server.add(reply(text="Hello there."))
    with running_kernel(root, kernel_env(tmp_path / "home")) as kernel:
        msg_id = kernel.execute("%%agent\nSay hello.", allow_stdin=True)
        seen: list[tuple[float, dict[str, Any]]] = []
        requests_at_first_output = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                msg = kernel.kc.get_iopub_msg(timeout=1)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind in ("display_data", "stream") and requests_at_first_output is None:
                requests_at_first_output = len(server.received)
            if kind == "status" and msg["content"]["execution_state"] == "idle":
                break
            seen.append((time.monotonic(), msg))
        outputs = [(t, m) for t, m in seen if m["msg_type"] in ("display_data", "stream")]
        first_at, first = outputs[0]
        # 1. the first output is the starting line, shown before the model was even asked
        assert first["msg_type"] == "display_data" and _plain(first).startswith("◌ starting…")
        assert requests_at_first_output == 0
        # it ticks while the session opens, and gives way to the answer
        updates = [m for _, m in seen if m["msg_type"] == "update_display_data"]
        starting_id = first["content"]["transient"]["display_id"]
        mine = [m for m in updates if m["content"]["transient"]["display_id"] == starting_id]
        assert mine and _plain(mine[-1]) == ""
        # 2. the footer reports the cell's wall time: at least the span between the
        #    first output and the footer as this client saw them (rounded to 0.1 s)
        footer_at, footer = next(
            (t, m) for t, m in reversed(seen) if "mewcode" in m["content"].get("metadata", {})
        )
        seconds = re.search(r"· (\d+(?:\.\d+)?) (s|ms) ·", _plain(footer))
        assert seconds, _plain(footer)
        reported = float(seconds[1]) / (1000 if seconds[2] == "ms" else 1)
        assert reported + 0.1 >= footer_at - first_at, (reported, footer_at - first_at)


def test_the_provider_sdk_in_use_is_imported_in_the_background_once_ready(
    root: Path, tmp_path: Path, jupyter_path: Path, server: ScriptedServer
) -> None:
    with running_kernel(root, kernel_env(tmp_path / "home")) as kernel:
        check = kernel.ok(  # no agent cell has run
            "import sys\nfrom IPython import get_ipython\n"
            "warming = get_ipython().kernel._warming\n"
            "warming.join(60)\n"
            "print(warming.name, not warming.is_alive(), sorted(m for m in sys.modules if m in "
            "('anthropic', 'openai', 'mewcode_kernel.core', 'magics.render_widgets')))"
        )
        assert check.stdout.split(" ", 2) == [
            "mewcode-warm-up",
            "True",
            "['anthropic', 'magics.render_widgets', 'mewcode_kernel.core']\n",
        ]  # only the provider in use: no openai


def test_after_a_restart_the_first_turn_names_the_session_left_behind(
    root: Path, tmp_path: Path, jupyter_path: Path, server: ScriptedServer
) -> None:
    server.add(reply(text="First."), reply(text="Second."), reply(text="Third."))
    with running_kernel(root, kernel_env(tmp_path / "home")) as kernel:
        cell = kernel.ok("%%agent\nOne.", allow_stdin=True)
        before = cell.provenance[0]["session_id"]
        assert "new session (previous" not in cell.raw  # nothing was left behind
    with running_kernel(root, kernel_env(tmp_path / "home")) as kernel:  # the "restart"
        cell = kernel.ok("%%agent\nTwo.", allow_stdin=True)
        assert f"new session (previous: {before}, /resume to continue)" in cell.raw
        assert cell.provenance[0]["session_id"] != before
        again = kernel.ok("%%agent\nThree.", allow_stdin=True)
        assert "new session (previous" not in again.raw  # said once
