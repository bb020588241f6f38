"""The live widget renderer, driven with real widgets (recording comms) and a
stand-in front end: what a person sees for text, thinking, tool rows,
notices, errors and the footer, and how often it is repainted."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import ipywidgets as w
import pytest

from magics._live.surface import BoxSurface
from magics.render_widgets import WidgetRenderer
from mewcode_kernel.core.commands import CommandResult
from mewcode_kernel.core.events import (
    AssistantMessage,
    HookRan,
    ModelRequestStarted,
    Notice,
    PermissionDecided,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallStarted,
    ToolFinished,
    ToolStarted,
    TurnDone,
)
from mewcode_kernel.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from mewcode_kernel.core.tools import builtin_tools
from mewcode_kernel.core.usage import Usage
from tests._frontend import CommLog, FakeCell

pytestmark = pytest.mark.usefixtures("comm_log")

CALL = ToolUseBlock(id="t1", name="read_file", input={"path": "src/app.py"})

BUILTINS = {t.name: t for t in builtin_tools()}  # the tools a session would offer


def renderer(cell: FakeCell) -> WidgetRenderer:
    r = WidgetRenderer(surface=cell)
    r.start(prompt="hi", provider_label="anthropic · claude-test", session_id="0123456789ab")
    return r


def done(text: str = "", reason: str = "end_turn", turns: int = 1) -> TurnDone:
    usage = Usage(input_tokens=1200, output_tokens=345, cache_read_tokens=800)
    return TurnDone(
        reason=reason, text=text, usage=usage, session_usage=usage + usage, model_turns=turns
    )


def tool_round(r: WidgetRenderer, call: ToolUseBlock, result: str, *, error: bool = False) -> None:
    r.on_event(ToolCallStarted(id=call.id, name=call.name))
    r.on_event(
        AssistantMessage(
            message=Message(role="assistant", content=[call]), stop_reason="tool_use", usage=Usage()
        )
    )
    r.on_event(PermissionDecided(call=call, outcome="allow", reason="read-only", decided_by="mode"))
    r.on_event(ToolStarted(call=call))
    r.on_event(
        ToolFinished(
            call=call,
            result=ToolResultBlock(tool_use_id=call.id, content=result, is_error=error),
            duration=0.012,
        )
    )


async def test_answer_is_streamed_as_markdown_and_finished_blocks_are_sent_once() -> None:
    cell = FakeCell()
    r = renderer(cell)
    paragraphs = [f"Paragraph {i}: " + "word " * 200 + "\n\n" for i in range(5)]
    text = "".join(paragraphs) + "The **end**."
    for i in range(0, len(text), 7):
        r.on_event(TextDelta(text=text[i : i + 7]))
        if i % 70 == 0:
            await asyncio.sleep(0.002)
    r.finish(done(text))
    assert cell.markdown == text
    blocks = [o for o in cell.outputs if "text/markdown" in o.content]
    assert len(blocks) == 6  # five finished paragraphs (~1 kB each) and the tail
    assert all(o.content["text/plain"] == o.content["text/markdown"] for o in blocks)
    # only the block being written is ever repainted; finished text is not resent
    sent = sum(len(o.content["text/markdown"]) * (1 + o.updates) for o in blocks)
    assert sent < 4 * len(text)


async def test_two_thousand_deltas_are_coalesced_to_about_twenty_paints_a_second() -> None:
    cell = FakeCell()
    r = renderer(cell)
    words = [f"w{i} " for i in range(2000)]  # one paragraph: a single growing output
    start = time.monotonic()
    for i, word in enumerate(words):
        r.on_event(TextDelta(text=word))
        if i % 4 == 3:
            await asyncio.sleep(0.002)  # the stream arrives over about a second
    elapsed = time.monotonic() - start
    r.finish(done())
    assert cell.markdown == "".join(words)
    text_outputs = [o for o in cell.outputs if "text/markdown" in o.content]
    assert len(text_outputs) == 1
    paints = 1 + text_outputs[0].updates
    assert paints <= elapsed * 20 + 2, (paints, elapsed)
    assert paints >= 3  # it did stream, not just appear at the end


async def test_tool_rows_show_state_key_argument_and_duration_and_expand(
    comm_log: CommLog,
) -> None:
    cell = FakeCell()
    r = renderer(cell)
    r.on_event(ModelRequestStarted(turn=1))
    r.on_event(TextDelta(text="Let me look."))
    r.on_event(ToolCallStarted(id=CALL.id, name=CALL.name))
    r.painter.flush()
    assert cell.rows() == ["○ read_file · preparing"]
    tool_round(r, CALL, "def main():\n    return 1\n")
    r.painter.flush()
    assert cell.rows() == ["✓ read_file src/app.py · done · 12 ms"]
    html = cell.row_html(0)
    assert "<details" in html and "src/app.py" in html and "def main():" in html
    assert "allow — read-only (mode)" in html
    failing = ToolUseBlock(id="t2", name="bash", input={"command": "pytest -q"})
    tool_round(r, failing, "exit status 1", error=True)
    r.finish(done())
    assert cell.rows()[1] == "✗ bash pytest -q · failed · 12 ms"
    # the "starting…" line gave way (blank) to the text; then the rows in order
    assert next(line for line in cell.plain_lines() if line) == "Let me look."
    assert comm_log.messages == []  # rows and text are plain outputs, not widgets


async def test_denied_by_a_rule_and_interrupted_rows() -> None:
    cell = FakeCell()
    r = renderer(cell)
    call = ToolUseBlock(id="t3", name="write_file", input={"path": "/etc/passwd", "content": ""})
    r.on_event(
        PermissionDecided(call=call, outcome="deny", reason="outside root", decided_by="sandbox")
    )
    r.on_event(
        ToolFinished(
            call=call,
            result=ToolResultBlock(tool_use_id="t3", content="Permission denied", is_error=True),
            duration=0.0,
        )
    )
    slow = ToolUseBlock(id="t4", name="bash", input={"command": "sleep 100"})
    r.on_event(ToolStarted(call=slow))
    r.finish(None, cancelled=True)
    assert cell.rows() == [
        "⊘ write_file /etc/passwd · blocked",
        "■ bash sleep 100 · cancelled",
    ]
    assert cell.plain_lines()[-1].startswith("■ interrupted")


async def test_thinking_is_collapsed_and_streams_into_the_accordion(comm_log: CommLog) -> None:
    cell = FakeCell()
    r = renderer(cell)
    thought = "".join(f"step {i}: consider the options carefully\n" for i in range(100))
    for i in range(0, len(thought), 40):
        r.on_event(ThinkingDelta(text=thought[i : i + 40]))
    r.painter.flush()
    (acc,) = cell.widgets(w.Accordion)
    assert acc.selected_index is None and acc.titles == ("Thinking…",)
    r.on_event(TextDelta(text="Answer."))
    r.finish(done("Answer."))
    assert acc.selected_index is None and acc.titles[0].startswith("Thought for ")
    shown = "".join(h.value for h in acc.children[0].children if isinstance(h, w.HTML))
    assert shown.count("consider the options") == 100
    assert len(acc.children[0].children) > 1  # finished blocks were appended, not resent
    assert cell.markdown == "Answer."
    opened = sum(1 for _, kind, _, _ in comm_log.messages if kind == "comm_open")
    updates = sum(1 for _, kind, _, _ in comm_log.messages if kind == "comm_msg")
    assert opened < 20 and updates < 10


async def test_notices_retries_errors_and_commands_read_as_text() -> None:
    cell = FakeCell()
    r = renderer(cell)
    r.on_event(ModelRequestStarted(turn=1))
    r.on_event(TextDelta(text="partial answer that will be retried"))
    r.on_event(RetryScheduled(attempt=1, max_attempts=3, delay=2.0, reason="overloaded (529)"))
    r.on_event(TextDelta(text="Fresh answer."))
    r.on_event(Notice(level="warning", message="config: unknown key 'foo' (.mewcode.yaml:3)"))
    r.show_error("provider 'claude': no API key; set ANTHROPIC_API_KEY")
    r.show_command(CommandResult(markdown="**Sessions**\n\n- abc"))
    r.show_command(CommandResult(markdown="Unknown command `/nope`.", error=True))
    r.finish(None)
    lines = cell.plain_lines()
    assert "partial answer" not in cell.markdown and "Fresh answer." in cell.markdown
    assert "↻ Retrying in 2.0 s (attempt 1 of 3): overloaded (529)" in lines
    assert "⚠ config: unknown key 'foo' (.mewcode.yaml:3)" in lines
    assert "Error: provider 'claude': no API key; set ANTHROPIC_API_KEY" in lines
    assert "**Sessions**\n\n- abc" in lines and "Error: Unknown command `/nope`." in lines
    assert not any("Traceback" in line for line in lines)


async def test_footer_shows_tokens_turns_cost_and_carries_the_provenance() -> None:
    cell = FakeCell()
    r = renderer(cell)
    r.on_event(
        AssistantMessage(
            message=Message(role="assistant", content=[TextBlock(text="Not streamed.")]),
            stop_reason="end_turn",
            usage=Usage(),
        )
    )
    meta = {"session_id": "0123456789ab", "model": "claude-test", "cost_usd": 0.0123}
    r.finish(done("Not streamed.", turns=3), metadata=meta)
    assert cell.markdown == "Not streamed."  # a provider that does not stream still shows text
    footer = cell.outputs[-1]
    assert footer.plain.startswith("✓ done · 2,000 in · 800 cached · 345 out · 3 model turns · ")
    assert "$0.0123" in footer.plain and "session 0123456789ab" in footer.plain
    assert footer.metadata == {"mewcode": meta}
    r.on_event(TextDelta(text="late"))  # after finish: ignored
    assert cell.markdown == "Not streamed."


async def test_an_interrupted_turn_footer_counts_what_it_spent() -> None:
    cell = FakeCell()
    r = renderer(cell)
    r.on_event(TextDelta(text="Half an ans"))
    r.finish(done(reason="cancelled"), cancelled=True, metadata={"cost_usd": 0.0051})
    footer = cell.outputs[-1].plain
    assert footer.startswith("■ interrupted · 2,000 in · 800 cached · 345 out · 1 model turn · ")
    assert "$0.0051" in footer


async def test_a_background_turn_draws_inside_one_box_that_outlives_the_cell(
    comm_log: CommLog,
) -> None:
    cell = FakeCell()
    surface = BoxSurface(cell)
    (box,) = cell.widgets(w.VBox)  # shown at once, while the cell still runs
    assert "background turn" in cell.outputs[0].static["text/plain"]  # its static form
    r = WidgetRenderer(surface=surface)
    r.start(prompt="", provider_label="scripted", session_id=None)
    r.on_event(TextDelta(text="Working on it"))
    r.painter.flush()
    r.on_event(TextDelta(text=" in the background."))
    tool_round(r, CALL, "ok")
    r.painter.flush()
    answer = box.children[2]  # after the style carrier and "starting…"
    repaints = comm_log.updates_of(answer)  # (read while its comm is open)
    r.finish(done("Working on it in the background."))
    assert len(cell.outputs) == 1  # nothing else went to the (finished) cell
    texts = [c.outputs[0]["data"]["text/plain"] for c in box.children if hasattr(c, "outputs")]
    assert texts[0] == ""  # "starting…", blanked at the first output
    texts = texts[1:]
    assert texts[0] == "Working on it in the background."
    assert texts[1] == "✓ read_file src/app.py · done · 12 ms"
    assert texts[2].startswith("✓ done")
    assert repaints and repaints[-1]["outputs"][0]["data"]["text/markdown"] == texts[0]
    # the turn over, the box gives way to its transcript as one static output
    settled = cell.outputs[0].content
    assert isinstance(settled, dict) and cell.widgets(w.VBox) == []
    assert "Working on it in the background." in settled["text/html"]
    assert "read_file" in settled["text/plain"] and "✓ done" in settled["text/plain"]


async def test_file_change_rows_show_the_diff_read_before_the_call_ran(tmp_path: Path) -> None:
    (tmp_path / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    cell = FakeCell()
    r = WidgetRenderer(surface=cell)
    r.start(
        prompt="fix", provider_label="scripted", session_id=None, root=tmp_path, tools=BUILTINS.get
    )
    edit = ToolUseBlock(
        id="e1",
        name="edit_file",
        input={
            "path": "stats.py",
            "old_string": "    return sum",
            "new_string": "    return 0.0 if not xs else sum",
        },
    )
    r.on_event(ToolCallStarted(id=edit.id, name=edit.name))
    r.on_event(
        AssistantMessage(
            message=Message(role="assistant", content=[edit]), stop_reason="tool_use", usage=Usage()
        )
    )
    # the tool then changes the file; the row keeps the diff it read before
    (tmp_path / "stats.py").write_text(
        "def mean(xs):\n    return 0.0 if not xs else sum(xs) / len(xs)\n"
    )
    r.on_event(ToolStarted(call=edit))
    r.on_event(
        ToolFinished(
            call=edit, result=ToolResultBlock(tool_use_id="e1", content="ok"), duration=0.01
        )
    )
    r.finish(done())
    assert cell.rows() == ["✓ edit_file stats.py · done · 10 ms · +1 −1"]
    html = cell.row_html(0)
    assert "mewcode-diff" in html and "if" in html and "not" in html
    (row,) = [o for o in cell.outputs if 'class="mewcode-tool"' in o.content.get("text/html", "")]
    assert "```diff" in row.content["text/markdown"]
    assert "+    return 0.0 if not xs else sum(xs) / len(xs)" in row.content["text/markdown"]


async def test_a_running_tool_shows_its_elapsed_time() -> None:
    now = [100.0]
    cell = FakeCell()
    r = WidgetRenderer(surface=cell, clock=lambda: now[0])
    r.start(prompt="", provider_label="scripted", session_id=None)
    call = ToolUseBlock(id="b1", name="bash", input={"command": "sleep 30"})
    r.on_event(ToolCallStarted(id=call.id, name=call.name))
    r.on_event(ToolStarted(call=call))
    r.painter.flush()
    assert cell.rows() == ["◐ bash sleep 30 · running · 0 s"]
    now[0] += 12.4
    r._tick()  # what the loop's timer calls every TICK seconds
    r.painter.flush()
    assert cell.rows() == ["◐ bash sleep 30 · running · 12 s"]
    r.finish(None, cancelled=True)


async def test_a_hook_run_is_a_collapsed_row_that_expands_to_its_output() -> None:
    cell = FakeCell()
    r = renderer(cell)
    r.on_event(
        HookRan(
            event="PreToolUse",
            name="guard",
            outcome="blocked",
            seconds=0.12,
            detail="no rm -rf here",
            output="checked: rm -rf build/\nno rm -rf here",
        )
    )
    r.on_event(HookRan(event="Stop", name="notify", outcome="started", seconds=0.0))
    r.finish(None)
    blocked, started = cell.statics("mewcode-hook")
    html = blocked["text/html"]
    assert "<details" in html and "<summary" in html
    assert "⚓ PreToolUse · guard · blocked · 0.1 s" in html
    assert "no rm -rf here" in html and "checked: rm -rf build/" in html
    assert blocked["text/plain"] == "⚓ PreToolUse · guard · blocked · 0.1 s: no rm -rf here"
    assert started["text/plain"] == "⚓ Stop · notify · started"  # async: no duration
