"""The headless text renderer and the turn driver, in-process: a real
``AgentSession`` on a scripted model, outputs captured instead of displayed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from magics.render_text import TextRenderer, parse_answer, tool_summary
from magics.turn import approval_handler_for, drive_turn
from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.pricing import estimate_cost, price_of
from mewcode_kernel.core.sandbox import Sandbox
from mewcode_kernel.core.usage import Usage
from mewcode_kernel.testing import ScriptedModel, reply, tool_call


class Captured:
    """What a renderer printed: ('line', text) and ('md', text, metadata)."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []

    def write(self, text: str) -> None:
        for line in text.splitlines():
            self.items.append(("line", line))

    def display(self, bundle: dict[str, str], *, raw: bool, metadata: dict[str, Any]) -> None:
        assert raw and bundle["text/plain"] == bundle["text/markdown"]
        self.items.append(("md", bundle["text/markdown"], metadata))

    @property
    def lines(self) -> list[str]:
        return [i[1] for i in self.items if i[0] == "line"]

    @property
    def markdown(self) -> list[str]:
        return [i[1] for i in self.items if i[0] == "md"]


def renderer(out: Captured, **kwargs: Any) -> TextRenderer:
    return TextRenderer(display=out.display, write=out.write, **kwargs)


def session(tmp_path: Path, model: ScriptedModel) -> AgentSession:
    (tmp_path / "a.txt").write_text("alpha\n")
    config = load_config(tmp_path, env={}, home=tmp_path / "home")
    # the transcript is the same on machines with and without bubblewrap
    return AgentSession(
        tmp_path,
        config=config,
        provider=model,
        home=tmp_path / "home",
        sandbox=Sandbox.off(tmp_path),
    )


async def test_a_headless_turn_reads_as_a_transcript(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply("Reading first.", tool_call("read_file", {"path": "a.txt"})),
            reply("Now writing.", tool_call("write_file", {"path": "b.txt", "content": "b"})),
            reply("It says **alpha**; I could not write b.txt."),
        ]
    )
    s = session(tmp_path, model)
    out = Captured()
    outcome = await drive_turn(s, "Look.", renderer(out, policy="deny"), foreground=False)
    assert outcome.done is not None and outcome.done.reason == "end_turn"
    assert out.lines == [
        "✓ read_file a.txt",
        "✗ denied write_file b.txt: write_file changes files (default mode) "
        "(nobody to ask: MEWCODE_HEADLESS_APPROVAL=deny)",
    ]
    assert out.markdown == [
        "Reading first.",
        "Now writing.",
        "It says **alpha**; I could not write b.txt.",
    ]
    meta = out.items[-1][2]["mewcode"]
    assert meta["tools_used"] == ["read_file"] and meta["session_id"] == s.session_id
    assert meta["provider"] == model.name and meta["stop_reason"] == "end_turn"
    assert not (tmp_path / "b.txt").exists()
    model.assert_all_used()


async def test_an_interactive_answer_comes_from_ask_line(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            reply(tool_call("write_file", {"path": "b.txt", "content": "b"})),
            reply("Written."),
        ]
    )
    prompts: list[str] = []

    async def ask_line(prompt: str) -> str:
        prompts.append(prompt)
        return "always"

    s = session(tmp_path, model)
    out = Captured()
    r = renderer(out, interactive=True, ask_line=ask_line)
    s.approval_handler = approval_handler_for(r)
    await drive_turn(s, "Write.", r, foreground=False)
    assert prompts == [
        "Allow write_file b.txt? [y]es / [a]lways / [N]o (or a note for the model): "
    ]
    assert out.lines[0].startswith("? write_file b.txt needs approval")
    assert out.lines[1].startswith("✓ you allowed write_file b.txt (always: ")
    assert (tmp_path / "b.txt").read_text() == "b"


async def test_a_cancelled_turn_finishes_the_renderer_and_keeps_the_session(tmp_path: Path) -> None:
    asked = asyncio.Event()

    async def ask_line(prompt: str) -> str:
        asked.set()
        await asyncio.Event().wait()  # nobody answers
        raise AssertionError("unreachable")

    model = ScriptedModel([reply(tool_call("write_file", {"path": "b.txt", "content": "b"}))])
    s = session(tmp_path, model)
    out = Captured()
    r = renderer(out, interactive=True, ask_line=ask_line)
    s.approval_handler = approval_handler_for(r)
    task = asyncio.ensure_future(drive_turn(s, "Write.", r))
    await asyncio.wait_for(asked.wait(), 10)
    task.cancel()
    outcome = await asyncio.wait_for(task, 10)
    assert outcome.cancelled and not task.cancelled()
    assert out.markdown[-1] == "*(no answer: cancelled)*"
    assert out.items[-1][2]["mewcode"]["stop_reason"] == "cancelled"
    last = s.conversation.messages[-1]
    assert last.role == "user" and last.content[0].is_error  # the call was answered


def test_error_notices_are_not_repeated_when_the_cell_raises_them(tmp_path: Path) -> None:
    from mewcode_kernel.core.events import Notice, TurnDone

    out = Captured()
    r = renderer(out)
    r.on_event(Notice(level="warning", message="careful"))
    r.on_event(Notice(level="error", message="boom"))
    r.on_event(Notice(level="error", message="other"))
    done = TurnDone(
        reason="error", text="", usage=Usage(), session_usage=Usage(), model_turns=1, error="boom"
    )
    r.finish(done, metadata={"x": 1})
    assert out.lines == ["⚠ careful", "✗ other", "■ stopped: error"]
    assert out.items[-1] == ("md", "*(no answer: error)*", {"mewcode": {"x": 1}})


@pytest.mark.parametrize(
    ("reply_", "answer"),
    [
        ("y", ApprovalAnswer(allow=True)),
        (" YES ", ApprovalAnswer(allow=True)),
        ("a", ApprovalAnswer(allow=True, always=True)),
        ("", ApprovalAnswer(allow=False)),
        ("no", ApprovalAnswer(allow=False)),
        ("use b2.txt", ApprovalAnswer(allow=False, note="use b2.txt")),
    ],
)
def test_parse_answer(reply_: str, answer: ApprovalAnswer) -> None:
    assert parse_answer(reply_) == answer


def test_tool_summary_picks_the_key_argument() -> None:
    call = ToolUseBlock(id="1", name="bash", input={"timeout": 5, "command": "pytest   -q\n-x"})
    assert tool_summary(call) == "bash pytest -q -x"
    long = ToolUseBlock(id="2", name="write_file", input={"path": "p" * 100, "content": "x"})
    assert tool_summary(long).endswith("…") and len(tool_summary(long)) == len("write_file ") + 70
    assert tool_summary(ToolUseBlock(id="3", name="TaskList", input={})) == "TaskList"


def test_renderer_without_ask_line_is_headless() -> None:
    r = TextRenderer(interactive=True, display=lambda *a, **k: None)
    assert r.interactive is False
    with pytest.raises(RuntimeError):
        asyncio.run(
            r.ask(ApprovalRequest(call=ToolUseBlock(id="1", name="x"), tool=None, reason=""))
        )  # type: ignore[arg-type]


def test_prices_are_known_by_prefix_and_unknown_models_have_none() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert estimate_cost("claude-sonnet-4-5-20250929", usage) == pytest.approx(3 + 15 + 0.3)
    assert price_of("anthropic/claude-opus-4-5") == price_of("claude-opus-4-5")
    assert price_of("claude-opus-4-5").input == 5  # type: ignore[union-attr]
    assert estimate_cost("qwen2.5-coder", usage) is None


class FakeKernel:
    _allow_stdin = True


class FakeShell:
    kernel = FakeKernel()


def test_headless_without_a_kernel() -> None:
    from magics.turn import pick_renderer

    r, warning = pick_renderer(object(), background=False, policy="deny")
    assert isinstance(r, TextRenderer) and not r.interactive and warning is None


def test_old_ipykernel_falls_back_to_the_headless_policy_with_one_warning() -> None:
    from magics.turn import pick_renderer

    r, warning = pick_renderer(
        FakeShell(), background=False, policy="allow", kernel_version=(7, 3, 2)
    )
    assert not r.interactive
    assert warning == (
        "ipykernel 7.3.2 cannot deliver approval clicks while a cell runs (7.4 or newer can): "
        "approvals use MEWCODE_HEADLESS_APPROVAL=allow."
    )


def test_the_text_renderer_can_be_chosen_for_live_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    from magics.errors import AgentCellError
    from magics.turn import pick_renderer

    monkeypatch.setenv("MEWCODE_RENDERER", "text")
    live, _ = pick_renderer(FakeShell(), background=False, policy="deny", kernel_version=(7, 4))
    assert isinstance(live, TextRenderer) and live.interactive
    background, _ = pick_renderer(
        FakeShell(), background=True, policy="deny", kernel_version=(7, 4)
    )
    assert not background.interactive  # stdin belongs to the running cell
    monkeypatch.setenv("MEWCODE_RENDERER", "fancy")
    with pytest.raises(AgentCellError, match="MEWCODE_RENDERER must be"):
        pick_renderer(FakeShell(), background=False, policy="deny", kernel_version=(7, 4))


def _finished(call: ToolUseBlock, text: str = "ok") -> Any:
    from mewcode_kernel.core.events import ToolFinished
    from mewcode_kernel.core.messages import ToolResultBlock

    return ToolFinished(
        call=call, result=ToolResultBlock(tool_use_id=call.id, content=text), duration=0.1
    )


@pytest.mark.parametrize("finishing", [(0, 1, 2), (2, 1, 0), (1, 2, 0), (2, 0, 1)])
def test_concurrent_tools_print_in_the_order_they_were_called(finishing: tuple[int, ...]) -> None:
    """A round's tools finish in any order; the transcript lists them in call order,
    with what each call's subagent did under it, so a saved notebook compares."""
    from mewcode_kernel.core.events import ToolProgress, ToolStarted

    out = Captured()
    r = renderer(out)
    calls = [
        ToolUseBlock(id=f"c{i}", name="read_file", input={"path": f"{i}.txt"}) for i in range(3)
    ]
    for call in calls:
        r.on_event(ToolStarted(call=call))
    inner = ToolUseBlock(id="n1", name="grep", input={"pattern": "x"})
    r.on_event(ToolProgress(call=calls[1], output="", nested=_finished(inner)))
    for i in finishing:
        r.on_event(_finished(calls[i]))
    r.finish(None)
    assert out.lines == [
        "✓ read_file 0.txt",
        "  ↳ ✓ grep x",
        "✓ read_file 1.txt",
        "✓ read_file 2.txt",
    ]


def test_a_cancelled_round_still_prints_what_finished() -> None:
    from mewcode_kernel.core.events import ToolStarted

    out = Captured()
    r = renderer(out)
    calls = [
        ToolUseBlock(id=f"c{i}", name="read_file", input={"path": f"{i}.txt"}) for i in range(2)
    ]
    for call in calls:
        r.on_event(ToolStarted(call=call))
    r.on_event(_finished(calls[1]))
    assert out.lines == []
    r.finish(None, cancelled=True)
    assert out.lines[0] == "✓ read_file 1.txt"
