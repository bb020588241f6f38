# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Sessions across kernels, background turns, and the kernelspec itself."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, WireReply, reply
from tests._kernel import (  # noqa: F401
    Kernel,
    jupyter_path,
    kernel,
    kernel_env,
    project,
    running_kernel,
    script,
    server,
)

BOUND = 30.0


def test_two_kernels_on_one_session(
    kernel: Kernel,
    script: ScriptedServer,
    project: Path,
    tmp_path: Path,
    jupyter_path: Path,
) -> None:
    """One writer per session: a second kernel resuming a session in use is
    told so and can fork it; once the first lets go, it resumes it. Nothing
    the second kernel does lands in the first one's log meanwhile."""
    script.add(
        reply(text="Noted: the answer is 7."),
        reply(text="It was 7 (in the copy)."),
        reply(text="It was 7."),
    )
    session_id = kernel.ok("%%agent --new\nRemember that the answer is 7.").provenance[0][
        "session_id"
    ]
    with running_kernel(project, kernel_env(tmp_path)) as fresh:
        fresh.ok(f"sid = {session_id!r}")
        refused = fresh.run("%%agent --resume {sid}\nWhat was the answer?")
        assert refused.status == "error"
        assert "in use by another kernel" in refused.text and "--fork" in refused.text
        forked = fresh.ok("%%agent --resume {sid} --fork\nWhat was the answer?")
        assert f"forked session {session_id} into" in forked.stdout
        fork_id = forked.provenance[0]["session_id"]
        assert fork_id != session_id
        assert "the answer is 7" in json.dumps(script.received[-1].body["messages"][0])
        kernel.ok("%agent /clear")  # the first kernel lets go of the session
        cell = fresh.ok("%%agent --resume {sid}\nWhat was the answer?")
    assert f"resumed session {session_id}" in cell.stdout
    assert cell.provenance[0]["session_id"] == session_id
    messages = script.received[-1].body["messages"]
    assert "the answer is 7" in json.dumps(messages[0])
    assert "What was the answer?" in json.dumps(messages[-1])
    assert "in the copy" not in json.dumps(messages)  # the fork's turn stayed in the fork
    log = project / ".mewcode" / "sessions" / session_id / "conversation.jsonl"
    assert "in the copy" not in log.read_text()


def _held(arrived: threading.Event, release: threading.Event, text: str) -> Any:
    def step(body: dict[str, Any]) -> WireReply:
        arrived.set()
        release.wait(timeout=60)
        return reply(text=text)

    return step


def test_background_returns_at_once_and_finishes_later(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    arrived, release = threading.Event(), threading.Event()
    script.add(_held(arrived, release, "Background done."), reply(text="Foreground meanwhile."))
    try:
        bg_id = kernel.execute("%%agent --background --out bg\nA long task.")
        started = kernel.collect(bg_id)  # the cell ends while its model request is held
        assert started.status == "ok"
        assert "started in the background" in started.stdout
        assert arrived.wait(timeout=BOUND)
        assert kernel.ok("%%agent --new\nMeanwhile?").markdown == ["Foreground meanwhile."]
    finally:
        release.set()
    kernel.ok("import magics\nawait magics.wait_background()", timeout=BOUND)
    assert kernel.ok("print(bg)").stdout == "Background done.\n"
    later = [
        m["content"]
        for m in kernel.others
        if m["parent_header"].get("msg_id") == bg_id and m["msg_type"] == "display_data"
    ]
    assert later and later[-1]["data"]["text/markdown"] == "Background done."
    assert later[-1]["metadata"]["mewcode"]["stop_reason"] == "end_turn"
    # recorded where it was launched, though /clear (--new) moved the session on meanwhile
    tables = list((project / ".mewcode" / "sessions").glob("*/tasks.jsonl"))
    holding = [t for t in tables if "A long task." in t.read_text()]
    assert len(holding) == 1  # the session of the cell that launched it
    records = [json.loads(line) for line in holding[0].read_text().splitlines()]
    mine = [r for r in records if r["name"] == "A long task."]
    assert mine and mine[-1]["state"] == "completed"


def test_a_background_turn_is_recorded_in_the_task_table(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(reply(text="Recorded."))
    assert "started in the background" in kernel.ok("%%agent --background\nA task.").stdout
    kernel.ok("import magics\nawait magics.wait_background()", timeout=BOUND)
    tables = list((project / ".mewcode" / "sessions").glob("*/tasks.jsonl"))
    records = [json.loads(line) for table in tables for line in table.read_text().splitlines()]
    turns = [r for r in records if r["kind"] == "turn" and r["name"] == "A task."]
    assert turns and turns[-1]["state"] == "completed" and turns[-1]["result"] == "Recorded."
    assert {r["state"] for r in turns} >= {"running", "completed"}


def test_background_turns_past_the_cap_wait_their_turn(
    kernel: Kernel, script: ScriptedServer
) -> None:
    from magics.controller import MAX_BACKGROUND

    release = threading.Event()
    arrivals = [threading.Event() for _ in range(MAX_BACKGROUND + 1)]
    script.add(*(_held(a, release, f"Done {n}.") for n, a in enumerate(arrivals)))
    try:
        for _ in range(MAX_BACKGROUND):
            assert "started in the background" in kernel.ok("%%agent --background\nWork.").stdout
        for arrived in arrivals[:MAX_BACKGROUND]:
            assert arrived.wait(timeout=BOUND)
        queued = kernel.ok("%%agent --background\nOne more.")
        assert f"the limit is {MAX_BACKGROUND}" in queued.stdout and "queued" in queued.stdout
        assert not arrivals[-1].wait(timeout=1.0)  # it waits while the others hold their places
    finally:
        release.set()
    assert arrivals[-1].wait(timeout=BOUND)  # and starts when one finishes
    kernel.ok("import magics\nawait magics.wait_background()", timeout=BOUND)
    peak = kernel.ok(
        "from magics.controller import controller_for\n"
        "print(controller_for(get_ipython()).tasks.peak_running)"
    ).stdout
    assert peak.strip() == str(MAX_BACKGROUND)


def test_install_and_uninstall_the_kernelspec(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mewcode_kernel", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert cli("install", "--prefix", str(tmp_path)).returncode == 0
    spec = json.loads((tmp_path / "share/jupyter/kernels/mewcode/kernel.json").read_text())
    assert spec["display_name"] == "MewCode (Python 3)"
    assert spec["argv"][:3] == [sys.executable, "-m", "mewcode_kernel"]
    assert cli("uninstall", "--prefix", str(tmp_path)).returncode == 0
    assert not (tmp_path / "share/jupyter/kernels/mewcode").exists()
    again = cli("uninstall", "--prefix", str(tmp_path))
    assert again.returncode == 1 and "No kernelspec named mewcode" in again.stderr


def test_kernel_info_names_the_mewcode_implementation(kernel: Kernel) -> None:
    reply_ = kernel.kc.kernel_info(reply=True, timeout=BOUND)
    assert reply_["content"]["implementation"] == "mewcode"
    assert reply_["content"]["language_info"]["name"] == "python"


@pytest.fixture
def stock_kernel(project: Path, tmp_path: Path) -> Any:
    with running_kernel(project, kernel_env(tmp_path), kernel_name="python3") as k:
        yield k


def test_load_ext_in_a_stock_ipykernel(
    stock_kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(
        reply(tool_calls=[("write_file", {"path": "stock.txt", "content": "x"})]),
        reply(text="Stopped as asked."),
    )
    stock_kernel.ok("%load_ext magics")
    msg_id = stock_kernel.execute("%%agent --new\nWrite stock.txt.", allow_stdin=True)
    stock_kernel.wait_for(
        msg_id,
        lambda m: (
            m["msg_type"] == "comm_open" and "decided" in m["content"]["data"].get("state", {})
        ),
    )
    stock_kernel.km.interrupt_kernel()  # stock SIGINT handling, honoured within a slice
    cell = stock_kernel.collect(msg_id, timeout=BOUND)
    assert cell.errors[0]["ename"] == "AgentInterrupted"
    assert not (project / "stock.txt").exists()
    assert stock_kernel.ok("%agent Fine.").markdown[-1] == "Stopped as asked."
