"""Approval cards in the widget renderer: clicks delivered the way a browser
sends them resolve ``ask``; the card is disabled and shows the decision; the
note and the save-to-project choice reach the answer; an interrupt while
waiting ends the wait at once. Then a real agent session in-process, asking
through the renderer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from magics.render_widgets import WidgetRenderer
from mewcode_kernel.core.agent_session import AgentSession
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.events import ApprovalResolved, TurnDone
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.tools import builtin_tools
from mewcode_kernel.testing import ScriptedModel, reply, tool_call
from tests._frontend import CommLog, FakeCell, decide, type_into

pytestmark = pytest.mark.usefixtures("comm_log")

WRITE = ToolUseBlock(id="w1", name="write_file", input={"path": "notes.txt", "content": "hi\n"})

BUILTINS = {t.name: t for t in builtin_tools()}  # the tools a session would offer


def request(call: ToolUseBlock = WRITE) -> ApprovalRequest:
    tool = next(t for t in builtin_tools() if t.name == call.name)
    return ApprovalRequest(call=call, tool=tool, reason=f"{call.name} changes files")


async def asking(
    cell: FakeCell, call: ToolUseBlock = WRITE, root: Path | None = None
) -> tuple[WidgetRenderer, asyncio.Task[ApprovalAnswer], Any]:
    r = WidgetRenderer(surface=cell)
    r.start(prompt="", provider_label="scripted", session_id=None, root=root, tools=BUILTINS.get)
    task = asyncio.create_task(r.ask(request(call)))
    card = await cell.wait_for(lambda c: c.cards() and c.cards()[-1])
    return r, task, card


async def test_allow_resolves_the_question_and_collapses_the_card(comm_log: CommLog) -> None:
    cell = FakeCell()
    r, task, card = await asking(cell)
    assert "write_file" in card.heading and "notes.txt" in card.heading
    assert "write_file changes files" in card.detail
    assert not task.done() and card.decided == ""
    decide(card, "allow")
    answer = await asyncio.wait_for(task, 1)
    assert answer == ApprovalAnswer(allow=True)
    assert "✓ allowed write_file notes.txt" in card.decided
    # the front end was told: the one-line verdict went out over the comm
    assert any("decided" in u for u in comm_log.updates_of(card))
    decide(card, "deny")  # a second click (another view of the card) changes nothing
    assert "allowed" in card.decided
    r.finish(None, cancelled=True)
    # finished: the card is replaced by its static form, readable without a kernel
    assert not cell.cards()
    (static,) = cell.statics("mewcode-approval")
    assert static["text/plain"] == "✓ allowed write_file notes.txt"
    assert "✓ allowed write_file notes.txt" in static["text/markdown"]
    assert "<details" in static["text/html"] and "notes.txt" in static["text/html"]


async def test_deny_passes_the_note_sent_with_the_click() -> None:
    """The click carries the note as typed, even if the last keystrokes' state
    update has not reached the kernel (the front end throttles them)."""
    cell = FakeCell()
    _, task, card = await asking(cell)
    type_into(card, "n", trait="note")  # only the first keystroke arrived as a state update
    decide(card, "deny", note="  write it under docs/ instead ")
    answer = await asyncio.wait_for(task, 1)
    assert answer == ApprovalAnswer(allow=False, note="write it under docs/ instead")
    assert "✗ denied write_file notes.txt · note to the model: “write it under docs/ instead”" in (
        card.decided
    )


async def test_always_allow_saves_only_what_the_box_says_at_the_click() -> None:
    cell = FakeCell()
    _r, task, card = await asking(cell)
    card._handle_msg(
        {"content": {"data": {"method": "update", "state": {"save": True}}}, "buffers": []}
    )
    decide(card, "always", save=False)  # ticked, then unticked before the click
    answer = await asyncio.wait_for(task, 1)
    assert answer == ApprovalAnswer(allow=True, always=True, save=False)
    assert not card.save


async def test_always_allow_can_save_the_rule_to_the_project() -> None:
    cell = FakeCell()
    r, task, card = await asking(cell)
    decide(card, "always", save=True)
    answer = await asyncio.wait_for(task, 1)
    assert answer == ApprovalAnswer(allow=True, always=True, save=True)
    assert "always allowed write_file notes.txt · saved to the project" in card.decided
    r.on_event(ApprovalResolved(call=WRITE, allowed=True, by="user", rules_added=("write_file",)))
    assert "rule added write_file" in card.decided


async def test_an_interrupt_while_waiting_ends_the_wait_at_once() -> None:
    cell = FakeCell()
    r, task, card = await asking(cell)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 1)
    assert "not answered: Interrupted before an answer." in card.decided
    decide(card, "allow")  # too late: nothing happens
    assert "Interrupted" in card.decided
    r.finish(None, cancelled=True)
    assert cell.plain_lines()[-1].startswith("■ interrupted")


async def test_edit_and_write_cards_show_the_diff(tmp_path: Path) -> None:
    (tmp_path / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    edit = ToolUseBlock(
        id="e1",
        name="edit_file",
        input={
            "path": "stats.py",
            "old_string": "    return sum",
            "new_string": "    if not xs:\n        return 0.0\n    return sum",
        },
    )
    _, _, card = await asking(FakeCell(), edit, root=tmp_path)
    assert "+2 −0" in card.detail and "mewcode-diff" in card.detail
    assert "0.0" in card.detail and "\\n" not in card.detail  # no raw JSON escapes
    new = ToolUseBlock(id="w2", name="write_file", input={"path": "new.txt", "content": "a\nb\n"})
    _, _, card = await asking(FakeCell(), new, root=tmp_path)
    assert "new file · 2 lines" in card.detail
    over = ToolUseBlock(
        id="w3", name="write_file", input={"path": "stats.py", "content": "x = 1\n"}
    )
    _, _, card = await asking(FakeCell(), over, root=tmp_path)
    assert "overwrite 2 lines · +1 −2" in card.detail


async def test_bash_card_shows_command_folder_and_reason(tmp_path: Path) -> None:
    call = ToolUseBlock(id="b1", name="bash", input={"command": 'rm -rf build && echo "done"'})
    _, _, card = await asking(FakeCell(), call, root=tmp_path)
    assert "mewcode-command" in card.detail and f"runs in {tmp_path}" in card.detail
    assert "bash changes files" in card.detail  # the permission engine's reason
    assert "<span" in card.detail  # highlighted


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
        first = await cell.wait_for(lambda c: c.cards() and c.cards()[0])
        decide(first, "allow")
        second = await cell.wait_for(lambda c: len(c.cards()) > 1 and c.cards()[1])
        decide(second, "deny", note="only a.txt please")

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
    assert not cell.cards()  # finished: replaced by their static form
    lines = [b["text/plain"] for b in cell.statics("mewcode-approval")]
    assert lines == [
        "✓ allowed write_file a.txt",
        "✗ denied write_file b.txt · note to the model: “only a.txt please”",
    ]


async def test_a_run_python_card_shows_the_code_and_where_it_runs() -> None:
    from magics.kernel_tools.errors import ErrorTracker
    from magics.kernel_tools.tools import KernelTools

    tools = {t.name: t for t in KernelTools(shell=object(), errors=ErrorTracker()).tools()}
    code = "sales = sales.dropna()\nsales.shape"
    call = ToolUseBlock(id="p1", name="run_python", input={"code": code})
    cell = FakeCell()
    r = WidgetRenderer(surface=cell)
    r.start(prompt="", provider_label="scripted", session_id=None, root=None, tools=tools.get)
    asked = ApprovalRequest(call=call, tool=tools["run_python"], reason="run_python runs code")
    task = asyncio.create_task(r.ask(asked))
    card = await cell.wait_for(lambda c: c.cards() and c.cards()[-1])
    assert (
        "in the notebook&#x27;s kernel" in card.detail or "in the notebook's kernel" in card.detail
    )
    assert "dropna" in card.detail and "mewcode-command" in card.detail
    decide(card, "deny")
    assert (await asyncio.wait_for(task, 1)).allow is False
    r.finish(None, cancelled=True)
    (static,) = cell.statics("mewcode-approval")
    assert f"```python\n{code}\n```" in static["text/markdown"]
