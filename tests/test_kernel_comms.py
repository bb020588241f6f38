# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Widget messages while an async cell awaits, in a real ``mewcode`` kernel.

JupyterLab's widget models send one state update and hold back the next until
the kernel's idle status for the previous one arrives. This client does the
same: each keystroke is sent only once the previous one's idle status came, so
a kernel that stays silent about a comm message loses every keystroke after
the first (the bug this guards against). The cell's own busy state is restored
after each comm message, so the front end keeps showing the kernel as busy.
"""

from __future__ import annotations

import queue
import time
from typing import Any

from tests._kernel import Kernel, jupyter_path, kernel, project, server  # noqa: F401

# the cell waits on the widget's own change events (they may come on another
# thread: the kernel handles comm messages on a subshell)
WAITING_CELL = """
import asyncio, ipywidgets as w
box = w.Text()
print("model", box.model_id, flush=True)
loop, typed = asyncio.get_running_loop(), asyncio.Event()
def seen(change):
    if change["new"] == "never delete source files":
        loop.call_soon_threadsafe(typed.set)
box.observe(seen, "value")
await asyncio.wait_for(typed.wait(), 30)
print("got", repr(box.value))
"""


def _next(kernel: Kernel, deadline: float) -> dict[str, Any]:
    while time.monotonic() < deadline:
        try:
            return kernel.kc.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
    raise TimeoutError("no iopub message in time")


def _model_id(kernel: Kernel, deadline: float) -> str:
    """The widget's model id, as the waiting cell prints it."""
    while True:
        msg = _next(kernel, deadline)
        if msg["msg_type"] == "stream" and msg["content"]["text"].startswith("model "):
            return msg["content"]["text"].split()[1]


def _status(msg: dict[str, Any], state: str, parent: str) -> bool:
    return (
        msg["msg_type"] == "status"
        and msg["content"]["execution_state"] == state
        and msg["parent_header"].get("msg_id") == parent
    )


def test_every_keystroke_reaches_an_awaiting_cell(kernel: Kernel) -> None:
    cell_id = kernel.execute(WAITING_CELL, allow_stdin=True)
    deadline = time.monotonic() + 30
    model_id = _model_id(kernel, deadline)
    text = "never delete source files"
    statuses: list[tuple[str, str]] = []  # (state, parent msg type) after the first key
    for i in range(1, len(text) + 1):
        update = {
            "comm_id": model_id,
            "data": {"method": "update", "state": {"value": text[:i]}, "buffer_paths": []},
        }
        sent = kernel.kc.session.msg("comm_msg", update)
        kernel.kc.shell_channel.send(sent)
        # like the widget manager: the next update only after this one's idle status
        while True:
            msg = _next(kernel, deadline)
            if msg["msg_type"] == "status":
                statuses.append(
                    (msg["content"]["execution_state"], msg["parent_header"].get("msg_id"))
                )
            if _status(msg, "idle", sent["header"]["msg_id"]):
                break
    # after each comm message the running cell is busy again (the last one's is read below)
    busy_again = [s for s in statuses if s == ("busy", cell_id)]
    assert len(busy_again) == len(text) - 1, statuses
    done = kernel.collect(cell_id)
    assert done.status == "ok", done.text
    assert f"got {text!r}" in done.stdout
    assert any(_status(m, "busy", cell_id) for m in done.messages)


def test_a_subshells_idle_is_followed_by_the_running_cells_busy(kernel: Kernel) -> None:
    """JupyterLab 4.6 sends widget messages on a kernel subshell; its idle status
    must not leave the front end showing an idle kernel while a cell runs."""
    request = kernel.kc.session.msg("create_subshell_request", {})
    kernel.kc.control_channel.send(request)
    reply = kernel.kc.get_control_msg(timeout=10)
    subshell = reply["content"]["subshell_id"]
    cell_id = kernel.execute(WAITING_CELL.replace("never delete source files", "done"))
    deadline = time.monotonic() + 30
    model_id = _model_id(kernel, deadline)
    # Like JupyterLab: the first message reaches the main shell (the comm was made
    # there); the kernel's echo, sent under that message, ties the comm to the
    # subshell, so the second one is handled on the subshell's thread.
    seen: list[tuple[str, str]] = []
    idle_of: dict[str, int] = {}
    for value in ("o", "ok", "done"):  # the cell runs until "done"
        update = {"comm_id": model_id, "data": {"method": "update", "state": {"value": value}}}
        sent = kernel.kc.session.msg("comm_msg", update)
        sent["header"]["subshell_id"] = subshell
        kernel.kc.shell_channel.send(sent)
        while ("idle", sent["header"]["msg_id"]) not in seen:
            msg = _next(kernel, deadline)
            if msg["msg_type"] == "status":
                state = msg["content"]["execution_state"]
                seen.append((state, msg["parent_header"].get("msg_id")))
        idle_of[value] = len(seen) - 1
    while seen[-1] != ("idle", cell_id):
        msg = _next(kernel, deadline)
        if msg["msg_type"] == "status":
            seen.append((msg["content"]["execution_state"], msg["parent_header"].get("msg_id")))
    # "ok" was handled on the subshell while the cell still ran: its idle is followed
    # by the running cell's busy
    assert seen[idle_of["ok"] + 1] == ("busy", cell_id), seen


def _statuses_until_idle_of(
    kernel: Kernel, parent: str, seen: list[tuple[str, str]], deadline: float
) -> int:
    """Read statuses into ``seen`` until ``parent``'s idle; its index."""
    while ("idle", parent) not in seen:
        msg = _next(kernel, deadline)
        if msg["msg_type"] == "status":
            seen.append((msg["content"]["execution_state"], msg["parent_header"].get("msg_id")))
    return seen.index(("idle", parent))


def test_a_control_requests_idle_is_followed_by_the_running_cells_busy(kernel: Kernel) -> None:
    """JupyterLab creates the subshell its widgets talk on (a control request)
    when the first widget shows, in the middle of the first agent cell: that
    request's idle must not leave the status bar saying Idle. Any control
    request, not just that one; and once the cell has finished, no stale busy."""
    cell_id = kernel.execute(WAITING_CELL.replace("never delete source files", "done"))
    deadline = time.monotonic() + 30
    model_id = _model_id(kernel, deadline)
    seen: list[tuple[str, str]] = []
    for kind in ("create_subshell_request", "list_subshell_request", "kernel_info_request"):
        request = kernel.kc.session.msg(kind, {})
        kernel.kc.control_channel.send(request)
        at = _statuses_until_idle_of(kernel, request["header"]["msg_id"], seen, deadline)
        while len(seen) <= at + 1:
            msg = _next(kernel, deadline)
            if msg["msg_type"] == "status":
                seen.append((msg["content"]["execution_state"], msg["parent_header"].get("msg_id")))
        assert seen[at + 1] == ("busy", cell_id), (kind, seen)
    update = {"comm_id": model_id, "data": {"method": "update", "state": {"value": "done"}}}
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_msg", update))
    _statuses_until_idle_of(kernel, cell_id, seen, deadline)
    # the cell is over: a control request's idle is the last word
    after = len(seen)
    request = kernel.kc.session.msg("kernel_info_request", {})
    kernel.kc.control_channel.send(request)
    _statuses_until_idle_of(kernel, request["header"]["msg_id"], seen, deadline)
    probe = kernel.execute("1")  # a later request's statuses come after any stray busy
    _statuses_until_idle_of(kernel, probe, seen, deadline)
    assert ("busy", cell_id) not in seen[after:], seen[after:]
