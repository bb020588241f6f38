# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Front ends as they are: a terminal asks ``is_complete`` at every Enter and
shows no widgets; JupyterLab's widget manager asks for the kernel's widgets
when it connects. A live agent cell is drawn by widgets only for a client
that showed it can draw them, and asks over stdin everywhere else, without
``MEWCODE_RENDERER``; ``%%agent`` + Enter waits for the prompt the way any
cell magic does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.session import Session

from magics.frontends import FrontEnds
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


def write_call(name: str) -> WireReply:
    return reply(tool_calls=[("write_file", {"path": name, "content": "written"})])


def is_card(msg: dict[str, Any]) -> bool:
    state = msg["content"].get("data", {}).get("state", {})
    return msg["msg_type"] == "comm_open" and "decided" in state and "heading" in state


def shows_widget(cell_messages: list[dict[str, Any]]) -> bool:
    return any(
        "application/vnd.jupyter.widget-view+json" in m["content"].get("data", {})
        for m in cell_messages
        if m["msg_type"] == "display_data"
    )


@pytest.fixture(scope="module")
def console(
    tmp_path_factory: pytest.TempPathFactory, project: Path, jupyter_path: Path
) -> Iterator[Kernel]:
    """A kernel whose client is a terminal: no widget manager, ``is_complete`` at Enter."""
    env = kernel_env(tmp_path_factory.mktemp("home"))
    with running_kernel(project, env, widget_manager=False) as k:
        yield k


def another_client(kernel: Kernel) -> BlockingKernelClient:
    """A second front end on the kernel, with a session id of its own (as
    ``jupyter console --existing`` has; ``km.client()`` would share the first's)."""
    own = Session(key=kernel.km.session.key, signature_scheme=kernel.km.session.signature_scheme)
    client = kernel.km.client(session=own)
    client.start_channels()
    client.wait_for_ready(timeout=BOUND)
    return client


def is_complete(kc: BlockingKernelClient, code: str) -> str:
    sent = kc.is_complete(code)
    while True:  # a reply to an earlier request (startup's kernel_info) may come first
        msg = kc.get_shell_msg(timeout=BOUND)
        if msg["parent_header"].get("msg_id") == sent:
            return msg["content"]["status"]


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("%%agent", "incomplete"),
        ("%%agent --mode plan", "incomplete"),
        ("%%agent\nWrite notes.txt", "incomplete"),
        ("%%agent\nWrite notes.txt\nthen stop\n", "incomplete"),
        ("%%agent\nWrite notes.txt\n\n", "complete"),
        ("%agent /cost", "complete"),
        ("%agent", "complete"),
        ("/help", "complete"),
        ("/compact keep the (", "complete"),  # a slash command is one line, whatever it holds
    ],
)
def test_is_complete_judges_an_agent_cell_as_the_cell_magic_it_is(
    console: Kernel, code: str, status: str
) -> None:
    assert is_complete(console.kc, code) == status


def test_is_complete_agrees_with_a_stock_cell_magic(console: Kernel) -> None:
    for body in ("", "\nx", "\nx\n\n"):
        assert is_complete(console.kc, "%%agent" + body) == is_complete(
            console.kc, "%%bash" + body
        ), body


def test_a_terminal_is_asked_over_stdin_without_any_setting(
    console: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(write_call("console.txt"), reply(text="Written."))
    is_complete(console.kc, "%%agent --new\nWrite console.txt.\n\n")  # what Enter sends
    msg_id = console.execute("%%agent --new\nWrite console.txt.\n", allow_stdin=True)
    request = console.stdin_request(timeout=BOUND)
    assert request["content"]["prompt"].startswith("Allow write_file")
    console.kc.input("y")
    cell = console.collect(msg_id)
    assert cell.status == "ok", cell.text
    assert (project / "console.txt").read_text() == "written"
    assert not shows_widget(cell.messages)
    assert "CardWidget" not in cell.raw and "Widget object" not in cell.raw
    assert "✓ you allowed write_file console.txt" in cell.stdout


def test_a_client_that_never_spoke_about_widgets_is_asked_over_stdin(
    console: Kernel, script: ScriptedServer, project: Path
) -> None:
    # a second client on the same kernel, which sent neither is_complete nor widget comms
    quiet = another_client(console)
    try:
        script.add(write_call("quiet.txt"), reply(text="Written."))
        msg_id = quiet.execute("%%agent --new\nWrite quiet.txt.", allow_stdin=True)
        request = quiet.get_stdin_msg(timeout=BOUND)
        assert request["content"]["prompt"].startswith("Allow write_file")
        quiet.input("y")
        reply_msg = quiet.get_shell_msg(timeout=BOUND)
        while reply_msg["parent_header"].get("msg_id") != msg_id:
            reply_msg = quiet.get_shell_msg(timeout=BOUND)
        assert reply_msg["content"]["status"] == "ok"
    finally:
        quiet.stop_channels()
    assert (project / "quiet.txt").exists()


def test_a_widget_front_end_gets_the_card(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(write_call("lab.txt"), reply(text="Written."))
    msg_id = kernel.execute("%%agent --new\nWrite lab.txt.", allow_stdin=True)
    seen = kernel.wait_for(msg_id, is_card, timeout=BOUND)
    comm_id = seen[-1]["content"]["comm_id"]
    decision = {"event": "decide", "choice": "allow", "note": "", "save": False}
    content = {"comm_id": comm_id, "data": {"method": "custom", "content": decision}}
    kernel.kc.shell_channel.send(kernel.kc.session.msg("comm_msg", content))
    cell = kernel.collect(msg_id)
    assert cell.status == "ok", cell.text
    assert (project / "lab.txt").exists()


def test_two_front_ends_on_one_kernel_each_get_what_they_can_show(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    terminal = another_client(kernel)  # jupyter console --existing, beside the notebook
    try:
        is_complete(terminal, "%%agent\nWrite term.txt.\n\n")
        script.add(write_call("term.txt"), reply(text="Written."))
        msg_id = terminal.execute("%%agent --new\nWrite term.txt.", allow_stdin=True)
        request = terminal.get_stdin_msg(timeout=BOUND)
        assert request["content"]["prompt"].startswith("Allow write_file")
        terminal.input("y")
        while True:
            answer = terminal.get_shell_msg(timeout=BOUND)
            if answer["parent_header"].get("msg_id") == msg_id:
                break
        assert answer["content"]["status"] == "ok"
    finally:
        terminal.stop_channels()
    # the notebook's own cells still get cards
    script.add(write_call("lab2.txt"))
    msg_id = kernel.execute("%%agent --new\nWrite lab2.txt.", allow_stdin=True)
    kernel.wait_for(msg_id, is_card, timeout=BOUND)
    kernel.km.interrupt_kernel()
    kernel.collect(msg_id)
    assert (project / "term.txt").exists() and not (project / "lab2.txt").exists()
    script.add(reply(text="Fine."))
    kernel.ok("%agent Never mind.")


def test_widgets_can_be_forced_for_a_client_that_showed_none(
    console: Kernel, script: ScriptedServer
) -> None:
    console.ok("import os; os.environ['MEWCODE_RENDERER'] = 'widgets'")
    try:
        script.add(write_call("forced.txt"))
        msg_id = console.execute("%%agent --new\nWrite forced.txt.", allow_stdin=True)
        console.wait_for(msg_id, is_card, timeout=BOUND)
        console.km.interrupt_kernel()
        cell = console.collect(msg_id)
        assert cell.errors and cell.errors[0]["ename"] == "AgentInterrupted"
    finally:
        console.ok("del os.environ['MEWCODE_RENDERER']")
    script.add(reply(text="Fine."))
    console.ok("%agent Never mind.")


def test_a_stock_kernel_loaded_late_asks_a_terminal_over_stdin(
    tmp_path: Path, script: ScriptedServer, project: Path, jupyter_path: Path
) -> None:
    env = kernel_env(tmp_path)
    with running_kernel(project, env, kernel_name="python3", widget_manager=False) as k:
        k.ok("%load_ext magics")
        is_complete(k.kc, "%%agent --new\nWrite stock.txt.\n\n")
        script.add(write_call("stock-term.txt"), reply(text="Written."))
        msg_id = k.execute("%%agent --new\nWrite stock-term.txt.", allow_stdin=True)
        request = k.stdin_request(timeout=BOUND)
        assert request["content"]["prompt"].startswith("Allow write_file")
        k.kc.input("y")
        cell = k.collect(msg_id)
        assert cell.status == "ok", cell.text
        assert not shows_widget(cell.messages)
    assert (project / "stock-term.txt").exists()


# --- what counts as a widget manager -------------------------------------------------


def _msg(kind: str, session: str, **content: Any) -> dict[str, Any]:
    return {"header": {"msg_type": kind, "session": session}, "content": content}


@pytest.mark.parametrize(
    "msg",
    [
        _msg("comm_open", "lab", target_name="jupyter.widget.control", comm_id="c"),
        _msg("comm_info_request", "lab", target_name="jupyter.widget"),
        _msg("comm_open", "lab", target_name="jupyter.widget", comm_id="c"),
    ],
)
def test_a_widget_manager_is_known_by_what_it_asks(msg: dict[str, Any]) -> None:
    seen = FrontEnds(from_start=True)
    seen.note(msg)
    assert seen.shows_widgets("lab") and not seen.shows_widgets("console")


@pytest.mark.parametrize(
    "msg",
    [
        _msg("comm_open", "x", target_name="jupyter.widget.controls", comm_id="c"),
        _msg("comm_open", "x", target_name="Jupyter.Widget", comm_id="c"),
        _msg("comm_open", "x", target_name=" jupyter.widget", comm_id="c"),
        _msg("comm_open", "x", target_name=["jupyter.widget"], comm_id="c"),
        _msg("comm_info_request", "x"),  # every target: a generic client, not a widget manager
        _msg("comm_open", "", target_name="jupyter.widget.control", comm_id="c"),
        {"header": {"msg_type": "comm_open"}, "content": {"target_name": "jupyter.widget"}},
        _msg("execute_request", "x", code="import ipywidgets"),
    ],
)
def test_other_messages_do_not_make_a_client_a_widget_front_end(msg: dict[str, Any]) -> None:
    seen = FrontEnds(from_start=True)
    seen.note(msg)
    assert not seen.shows_widgets("x")
    assert not seen.shows_widgets("")


def test_a_comm_message_counts_only_for_a_widget_comm() -> None:
    seen = FrontEnds(from_start=True)
    seen.note(_msg("comm_msg", "a", comm_id="1"), comm_target="some.other.target")
    seen.note(_msg("comm_msg", "b", comm_id="2"), comm_target="jupyter.widget")
    assert not seen.shows_widgets("a") and seen.shows_widgets("b")


def test_a_late_watcher_trusts_the_old_default_until_a_client_shows_a_terminal() -> None:
    seen = FrontEnds(from_start=False)
    assert seen.shows_widgets("lab")
    seen.note(_msg("is_complete_request", "term", code="%%agent"))
    assert not seen.shows_widgets("term")
    seen.note(_msg("comm_open", "term", target_name="jupyter.widget.control", comm_id="c"))
    assert seen.shows_widgets("term")  # JupyterLab's console panel does both


def test_the_renderer_setting_is_checked(kernel: Kernel) -> None:
    cell = kernel.run(
        "import os; os.environ['MEWCODE_RENDERER'] = 'fancy'\n"
        "from magics.frontends import renderer_for\n"
        "try:\n    renderer_for(get_ipython().kernel)\n"
        "except ValueError as e:\n    print(e)\n"
        "finally:\n    del os.environ['MEWCODE_RENDERER']"
    )
    assert "MEWCODE_RENDERER must be 'auto', 'widgets' or 'text'" in cell.stdout
