# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Live (``allow_stdin=True``) agent cells in a real ``mewcode`` kernel:
approvals answered by a widget click or over stdin, and Kernel › Interrupt
ending a turn that waits for an approval, a slow stream, or a plain await."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing.wire import ScriptedServer, WireReply, reply, stall_after
from tests._kernel import Kernel, jupyter_path, kernel, project, script, server  # noqa: F401

#: An interrupted cell must end promptly; this only bounds the wait (no timing assert).
BOUND = 10.0


def write_call(name: str) -> WireReply:
    return reply(tool_calls=[("write_file", {"path": name, "content": "written"})])


def is_card(msg: dict[str, Any]) -> bool:
    """The comm_open of an approval card (its state has the card's fields)."""
    state = msg["content"].get("data", {}).get("state", {})
    return msg["msg_type"] == "comm_open" and "decided" in state and "heading" in state


def click(kernel: Kernel, comm_id: str, choice: str = "allow") -> None:
    """What the card's view sends when a person clicks one of its buttons."""
    decision = {"event": "decide", "choice": choice, "note": "", "save": False}
    content = {"comm_id": comm_id, "data": {"method": "custom", "content": decision}}
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_msg", content))


@pytest.fixture
def text_renderer(kernel: Kernel) -> Iterator[None]:
    kernel.ok("import os; os.environ['MEWCODE_RENDERER'] = 'text'")
    yield
    kernel.ok("del os.environ['MEWCODE_RENDERER']")


def test_a_click_on_allow_runs_the_call(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(write_call("clicked.txt"), reply(text="Done."))
    msg_id = kernel.execute("%%agent --new\nWrite clicked.txt.", allow_stdin=True)
    seen = kernel.wait_for(msg_id, is_card)
    click(kernel, seen[-1]["content"]["comm_id"])
    cell = kernel.collect(msg_id)
    assert cell.status == "ok", cell.text
    assert (project / "clicked.txt").read_text() == "written"
    assert cell.provenance[-1]["tools_used"] == ["write_file"]


def test_interrupt_while_an_approval_card_waits(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(write_call("never.txt"), reply(text="Understood, I stopped."))
    msg_id = kernel.execute("%%agent --new\nWrite never.txt.", allow_stdin=True)
    kernel.wait_for(msg_id, is_card)
    kernel.km.interrupt_kernel()
    cell = kernel.collect(msg_id, timeout=BOUND)
    assert cell.status == "error"
    assert cell.errors[0]["ename"] == "AgentInterrupted"
    assert not (project / "never.txt").exists()
    # the conversation stayed valid: the next cell continues it, the call answered as cancelled
    assert kernel.ok("%agent Never mind.").markdown[-1] == "Understood, I stopped."
    answered = script.received[-1].body["messages"][-1]["content"]  # merged into one user turn
    assert answered[0]["type"] == "tool_result" and answered[0]["is_error"] is True


def test_stdin_answers_approvals_with_the_text_renderer(
    kernel: Kernel, script: ScriptedServer, project: Path, text_renderer: None
) -> None:
    script.add(
        write_call("yes.txt"),
        write_call("no.txt"),
        reply(text="Wrote one, skipped the other."),
    )
    msg_id = kernel.execute("%%agent --new\nWrite yes.txt and no.txt.", allow_stdin=True)
    for answer in ("y", "not that one, please"):
        request = kernel.stdin_request(timeout=BOUND * 3)
        assert request["content"]["prompt"].startswith("Allow write_file")
        kernel.kc.input(answer)
    cell = kernel.collect(msg_id)
    assert cell.status == "ok", cell.text
    assert (project / "yes.txt").exists() and not (project / "no.txt").exists()
    assert "✓ you allowed write_file yes.txt" in cell.stdout
    assert "✗ you denied write_file no.txt (not that one, please)" in cell.stdout
    denied = script.received[-1].body["messages"][-1]["content"][0]["content"]
    assert "not that one, please" in str(denied)


def test_interrupt_while_asking_over_stdin(
    kernel: Kernel, script: ScriptedServer, project: Path, text_renderer: None
) -> None:
    script.add(write_call("stdin.txt"))
    msg_id = kernel.execute("%%agent --new\nWrite stdin.txt.", allow_stdin=True)
    kernel.stdin_request(timeout=BOUND * 3)
    kernel.km.interrupt_kernel()
    cell = kernel.collect(msg_id, timeout=BOUND)
    assert cell.errors[0]["ename"] == "AgentInterrupted"
    assert not (project / "stdin.txt").exists()
    assert kernel.ok("1 + 1").status == "ok"


def test_interrupt_during_a_slow_stream(kernel: Kernel, script: ScriptedServer) -> None:
    arrived, release = threading.Event(), threading.Event()

    def slow(body: dict[str, Any]) -> WireReply:
        arrived.set()
        release.wait(timeout=60)
        return reply(text="Too late.")

    script.add(slow, reply(text="Fresh answer."))
    try:
        msg_id = kernel.execute("%%agent --new\nTake your time.", allow_stdin=True)
        assert arrived.wait(timeout=BOUND * 3)
        kernel.km.interrupt_kernel()
        cell = kernel.collect(msg_id, timeout=BOUND)
    finally:
        release.set()
    assert cell.errors[0]["ename"] == "AgentInterrupted"
    assert kernel.ok("%agent Again, quickly.").markdown[-1] == "Fresh answer."


def test_an_interrupted_turn_reports_what_it_spent(kernel: Kernel, script: ScriptedServer) -> None:
    spent = Usage(input_tokens=3700, output_tokens=800)
    answer, stall = stall_after(6, reply(text="A long explanation. " * 30, usage=spent))
    script.add(answer)
    try:
        msg_id = kernel.execute("%%agent --new\nExplain everything.", allow_stdin=True)
        assert stall.reached.wait(timeout=BOUND * 3)
        # the text before the pause is on screen: the response is mid-stream
        kernel.wait_for(msg_id, lambda m: "A long explanation" in json.dumps(m["content"]))
        kernel.km.interrupt_kernel()
        cell = kernel.collect(msg_id, timeout=BOUND)
    finally:
        stall.release()
    assert cell.errors[0]["ename"] == "AgentInterrupted"
    meta = cell.provenance[-1]
    assert meta["stop_reason"] == "cancelled"
    assert meta["tokens"]["input_tokens"] == 3700  # reported by message_start, before the cut
    assert 1 <= meta["tokens"]["output_tokens"] < 800
    assert meta["cost_usd"] > 0.011  # 3,700 input tokens of claude-sonnet-4-5 at $3/M
    shown = json.dumps(cell.messages, ensure_ascii=False, default=str)
    assert "■ interrupted · 3,700 in · 0 cached" in shown  # the cell's footer
    cost = kernel.ok("/cost").text  # the session's total counts it too
    assert "3,700" in cost, cost


def test_interrupt_of_a_plain_async_cell_is_prompt_too(kernel: Kernel) -> None:
    msg_id = kernel.execute(
        "import asyncio\nprint('waiting', flush=True)\nawait asyncio.sleep(120)"
    )
    kernel.wait_for(msg_id, lambda m: m["msg_type"] == "stream", timeout=BOUND)
    kernel.km.interrupt_kernel()
    cell = kernel.collect(msg_id, timeout=BOUND * 3)
    assert cell.status == "error"
    assert cell.elapsed < 60  # far below the sleep: the interrupt ended it
