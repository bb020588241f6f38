"""Approval cards in the widget renderer: clicks delivered the way a browser
sends them resolve ``ask``; the card is disabled and shows the decision; the
note and the save-to-project choice reach the answer; an interrupt while
waiting ends the wait at once. Then a real agent session in-process, asking
through the renderer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from magics.render_widgets import WidgetRenderer
from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.events import ApprovalResolved, TurnDone
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.tools import builtin_tools
from mewcode_kernel.testing import ScriptedModel, reply, tool_call
from tests._frontend import CommLog, FakeCell, card_parts, click, type_into

pytestmark = pytest.mark.usefixtures("comm_log")

WRITE = ToolUseBlock(id="w1", name="write_file", input={"path": "notes.txt", "content": "hi\n"})


def request(call: ToolUseBlock = WRITE) -> ApprovalRequest:
    tool = next(t for t in builtin_tools() if t.name == call.name)
    return ApprovalRequest(call=call, tool=tool, reason=f"{call.name} changes files")


async def asking(cell: FakeCell) -> tuple[WidgetRenderer, asyncio.Task[ApprovalAnswer], dict]:
    r = WidgetRenderer(surface=cell)
    r.start(prompt="", provider_label="scripted", session_id=None)
    task = asyncio.create_task(r.ask(request()))
    card = await cell.wait_for(lambda c: c.cards() and c.cards()[-1])
    return r, task, card_parts(card)


async def test_allow_resolves_the_question_and_disables_the_card(comm_log: CommLog) -> None:
    cell = FakeCell()
    _, task, card = await asking(cell)
    assert "write_file" in card["header"].value and "notes.txt" in card["header"].value
    assert not task.done()
    click(card["allow"])
    answer = await asyncio.wait_for(task, 1)
    assert answer == ApprovalAnswer(allow=True)
    assert all(card[k].disabled for k in ("allow", "always", "deny", "note", "save"))
    assert card["allow"].button_style == "success" and card["deny"].button_style == ""
    assert "✓ Allowed by you" in card["status"].value
    # the front end was told: the buttons' disabled state went out over the comm
    assert {"disabled": True, "button_style": ""} in comm_log.updates_of(card["deny"])
    click(card["deny"])  # a second click (another view of the card) changes nothing
    assert "Allowed" in card["status"].value


async def test_deny_passes_the_note_to_the_model() -> None:
    cell = FakeCell()
    _, task, card = await asking(cell)
    type_into(card["note"], "  write it under docs/ instead ")
    click(card["deny"])
    answer = await asyncio.wait_for(task, 1)
    assert answer == ApprovalAnswer(allow=False, note="write it under docs/ instead")
    assert "✗ Denied by you — note to the model: “write it under docs/ instead”" in (
        card["status"].value
    )


async def test_always_allow_can_save_the_rule_to_the_project() -> None:
    cell = FakeCell()
    r, task, card = await asking(cell)
    type_into(card["save"], True)
    click(card["always"])
    answer = await asyncio.wait_for(task, 1)
    assert answer == ApprovalAnswer(allow=True, always=True, save=True)
    assert "Always allowed for this session, saved to the project" in card["status"].value
    r.on_event(ApprovalResolved(call=WRITE, allowed=True, by="user", rules_added=("write_file",)))
    assert "rule added: <code>write_file</code>" in card["status"].value


async def test_an_interrupt_while_waiting_ends_the_wait_at_once() -> None:
    cell = FakeCell()
    r, task, card = await asking(cell)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 1)
    assert card["allow"].disabled and "Interrupted before an answer." in card["status"].value
    click(card["allow"])  # too late: nothing happens
    assert "Interrupted" in card["status"].value
    r.finish(None, cancelled=True)
    assert cell.plain_lines()[-1].startswith("■ interrupted")


async def test_a_real_session_asks_through_the_card(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(
                "I'll write the file.", tool_call("write_file", {"path": "a.txt", "content": "A"})
            ),
            reply(tool_call("write_file", {"path": "b.txt", "content": "B"})),
            reply("Wrote a.txt; b.txt was refused."),
        ]
    )
    cell = FakeCell()
    r = WidgetRenderer(surface=cell)
    session = AgentSession(
        tmp_path,
        config=load_config(tmp_path, home=tmp_path / "home", env={}),
        provider=model,
        approval_handler=r.ask,
    )
    r.start(prompt="write", provider_label="scripted", session_id=session.session_id)

    async def person() -> None:
        first = card_parts(await cell.wait_for(lambda c: c.cards() and c.cards()[0]))
        click(first["allow"])
        second = card_parts(await cell.wait_for(lambda c: len(c.cards()) > 1 and c.cards()[1]))
        type_into(second["note"], "only a.txt please")
        click(second["deny"])

    clicks = asyncio.create_task(person())
    last = None
    async for event in session.run("Write a.txt and b.txt"):
        r.on_event(event)
        last = event
    await asyncio.wait_for(clicks, 1)
    assert isinstance(last, TurnDone)
    r.finish(last, metadata={"session_id": session.session_id})
    await session.aclose()
    model.assert_all_used()

    assert (tmp_path / "a.txt").read_text() == "A" and not (tmp_path / "b.txt").exists()
    assert cell.rows()[0].startswith("✓ write_file a.txt · done")
    assert cell.rows()[1] == "⊘ write_file b.txt · denied"
    assert "only a.txt please" in cell.row_html(1)
    denied = model.requests[-1].messages[-1].tool_results[0]
    assert denied.is_error and "only a.txt please" in denied.content
    assert cell.markdown == "I'll write the file.Wrote a.txt; b.txt was refused."
    assert all(card_parts(c)["allow"].disabled for c in cell.cards())
