"""The elicitation card in the widget renderer: the form drawn from the
server's fields (its texts never as HTML), Submit / Decline / Cancel sent the
way a browser sends a click, a wrong value said on the card and taken again,
an interrupt ends the wait; then a real session in-process with the offerings
fixture server, its form answered through the card."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from magics.render_widgets import WidgetRenderer
from magics.turn import form_handler_for
from mewcode_kernel.core import open_session
from mewcode_kernel.core.events import ToolFinished
from mewcode_kernel.core.mcp.elicitation import ElicitationAnswer, ElicitationRequest, parse_schema
from mewcode_kernel.testing import collect
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._frontend import FakeCell
from tests._mcp import TESTS, provider_yaml, servers_yaml

pytestmark = pytest.mark.usefixtures("comm_log", "trusted_projects")

HOSTILE_TITLE = '<img src=x onerror="alert(1)">'
REQUEST = ElicitationRequest(
    server="notes",
    message="Who are you? <script>alert(1)</script>",
    fields=parse_schema(
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": HOSTILE_TITLE},
                "age": {"type": "integer", "minimum": 0},
                "pet": {"type": "string", "enum": ["cat", "dog"]},
            },
            "required": ["name", "age"],
        }
    ),
)


def forms(cell: FakeCell) -> list[Any]:
    from magics._live.elicit_card import ElicitWidget

    return cell.widgets(ElicitWidget)


def send(card: Any, action: str, values: dict[str, Any] | None = None) -> None:
    """The message the card's view sends on a click."""
    content = {"event": "decide", "action": action, "values": values or {}}
    card._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


async def showing(cell: FakeCell) -> tuple[asyncio.Task[ElicitationAnswer], Any]:
    r = WidgetRenderer(surface=cell)
    r.start(prompt="", provider_label="scripted", session_id=None, root=None, tools=None)
    task = asyncio.create_task(r.elicit(REQUEST))
    card = await cell.wait_for(lambda c: forms(c) and forms(c)[-1])
    return task, card


async def test_the_form_is_drawn_from_the_fields_with_nothing_as_html() -> None:
    task, card = await showing(FakeCell())
    assert "&lt;script&gt;" in card.heading and "<script>" not in card.heading
    fields = json.loads(card.fields)
    assert [f["name"] for f in fields] == ["name", "age", "pet"]
    assert fields[0]["title"] == HOSTILE_TITLE  # text for the view, which sets it as text
    js = (Path(__file__).parents[1] / "magics/_live/static/elicit.js").read_text()
    assert 'innerHTML = model.get("heading")' in js
    assert js.count("innerHTML") == 2  # the escaped heading and the kernel's verdict only
    task.cancel()


async def test_submit_checks_the_values_and_takes_them_again_when_wrong() -> None:
    task, card = await showing(FakeCell())
    send(card, "accept", {"name": "Ada", "age": "-3"})
    assert "at least 0" in card.problem and not task.done()
    send(card, "accept", {"name": "Ada", "age": "3", "admin": "yes"})
    assert "unknown field" in card.problem
    send(card, "accept", {"name": "Ada", "age": "3", "pet": "dog"})
    answer = await asyncio.wait_for(task, 5)
    assert answer == ElicitationAnswer(
        action="accept", content={"name": "Ada", "age": 3, "pet": "dog"}
    )
    assert "answered" in card.decided
    send(card, "decline")  # a second click changes nothing
    assert "answered" in card.decided


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_send_no_values(action: str) -> None:
    task, card = await showing(FakeCell())
    send(card, action, {"name": "typed but not sent"})
    answer = await asyncio.wait_for(task, 5)
    assert answer == ElicitationAnswer(action=action)  # type: ignore[arg-type]


async def test_an_interrupt_ends_the_wait() -> None:
    task, card = await showing(FakeCell())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "not answered" in card.decided
    send(card, "accept", {"name": "late", "age": 1})
    assert "not answered" in card.decided


async def test_a_session_answers_a_servers_form_through_the_card(tmp_path: Path) -> None:
    server = {"command": sys.executable, "args": [str(TESTS / "mcp_offerings_server.py")]}
    script = [reply(tool_calls=[("mcp__notes__ask_person", {}, "c1")]), reply(text="ok")]
    cell = FakeCell()
    renderer = WidgetRenderer(surface=cell)
    renderer.start(prompt="", provider_label="scripted", session_id=None, root=None, tools=None)
    with ScriptedServer(script) as model:
        (tmp_path / ".mewcode.yaml").write_text(
            provider_yaml(model.base_url) + servers_yaml({"notes": server}, allow=["mcp__*"])
        )
        async with open_session(tmp_path, home=tmp_path / "home") as s:
            async with s.for_cell(elicitation_handler=form_handler_for(renderer)):
                turn = asyncio.create_task(collect(s.run("Ask me.")))
                card = await cell.wait_for(lambda c: forms(c) and forms(c)[-1], within=30)
                send(card, "accept", {"name": "Ada", "age": "36", "subscribe": True})
                events = await asyncio.wait_for(turn, 30)
    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert "accept: {'name': 'Ada', 'age': 36, 'subscribe': True}" in str(finished.result.content)
