# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""The ``mewcode`` kernel running ``%%agent`` cells against a local scripted
server speaking the Anthropic and OpenAI wire formats (one kernel for the
module; each test starts from ``--new`` or says what it continues)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply, status
from tests._kernel import Kernel, jupyter_path, kernel, project, script, server  # noqa: F401


def last_request(server: ScriptedServer) -> dict:
    return server.received[-1].body


def tool_names(body: dict) -> set[str]:
    return {t.get("name") or t.get("function", {}).get("name") for t in body.get("tools", [])}


# --- turns ----------------------------------------------------------------------------


def test_a_cell_runs_a_turn_with_tools_and_carries_provenance(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(
        reply(text="Let me look.", tool_calls=[("read_file", {"path": "notes.txt"})]),
        reply(text="The notes say **hello**."),
    )
    cell = kernel.ok("%%agent --new\nWhat do the notes say?")
    assert "✓ read_file notes.txt" in cell.stdout
    assert cell.markdown == ["Let me look.", "The notes say **hello**."]
    [meta] = cell.provenance
    assert meta["provider"] == "claude" and meta["model"] == "claude-sonnet-4-5"
    assert meta["tools_used"] == ["read_file"]
    assert meta["tokens"]["input_tokens"] == 20 and meta["tokens"]["output_tokens"] == 10
    assert meta["stop_reason"] == "end_turn" and meta["model_turns"] == 2
    assert (project / ".mewcode" / "sessions" / meta["session_id"]).is_dir()
    assert "sk-test" not in cell.raw  # no secret reaches the notebook


def test_consecutive_cells_continue_one_session(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="First."), reply(text="Second."))
    first = kernel.ok("%%agent --new\nSay first.")
    second = kernel.ok("%agent Say second.")
    assert first.provenance[0]["session_id"] == second.provenance[0]["session_id"]
    messages = last_request(script)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert "Say second." in json.dumps(messages[-1])


def test_new_starts_a_fresh_session(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="One."), reply(text="Fresh."))
    before = kernel.ok("%%agent\nOne.").provenance[0]["session_id"]
    after = kernel.ok("%%agent --new\nFresh start.").provenance[0]["session_id"]
    assert before != after
    assert len(last_request(script)["messages"]) == 1


def test_provider_and_model_apply_to_this_cell_only(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="From OpenAI."), reply(text="Back on Claude."))
    cell = kernel.ok("%%agent --new --provider gpt --model gpt-4.1-mini\nHi.")
    assert script.received[-1].path.endswith("/chat/completions")
    assert last_request(script)["model"] == "gpt-4.1-mini"
    assert cell.markdown == ["From OpenAI."]
    assert cell.provenance[0]["provider"] == "gpt"
    kernel.ok("%agent And now?")
    assert script.received[-1].path.endswith("/v1/messages")
    assert last_request(script)["model"] == "claude-sonnet-4-5"
    assert len(last_request(script)["messages"]) == 3  # the conversation was kept


def test_mode_applies_to_this_cell_only(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="Planning."), reply(text="Doing."))
    kernel.ok("%%agent --new --mode plan\nPlan it.")
    assert "write_file" not in tool_names(last_request(script))
    assert "read_file" in tool_names(last_request(script))
    kernel.ok("%agent Do it.")
    assert "write_file" in tool_names(last_request(script))


def test_max_turns_stops_the_loop(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(tool_calls=[("read_file", {"path": "notes.txt"})]))
    cell = kernel.ok("%%agent --new --max-turns 1\nKeep reading.")
    assert "■ stopped: max_turns" in cell.stdout
    assert cell.provenance[0]["stop_reason"] == "max_turns"


def test_out_stores_the_final_answer(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="Forty-two."))
    kernel.ok("%%agent --new --out answer\nThe answer?")
    assert kernel.ok("print(repr(answer))").stdout.strip() == "'Forty-two.'"


def test_options_are_expanded_from_the_namespace(kernel: Kernel, script: ScriptedServer) -> None:
    script.add(reply(text="Planned."))
    kernel.ok("chosen = 'plan'")
    kernel.ok("%%agent --new --mode {chosen}\nPlan.")
    assert "write_file" not in tool_names(last_request(script))


# --- headless approvals ---------------------------------------------------------------


def test_headless_ask_is_denied_by_default(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(
        reply(tool_calls=[("write_file", {"path": "denied.txt", "content": "x"})]),
        reply(text="I could not write it."),
    )
    cell = kernel.ok("%%agent --new\nWrite denied.txt.")
    denials = [ln for ln in cell.stdout.splitlines() if "denied write_file" in ln]
    assert len(denials) == 1 and "MEWCODE_HEADLESS_APPROVAL=deny" in denials[0]
    assert not (project / "denied.txt").exists()
    result = last_request(script)["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is True


def test_headless_allow_policy_lets_the_write_happen(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(
        reply(tool_calls=[("write_file", {"path": "allowed.txt", "content": "yes"})]),
        reply(text="Written."),
    )
    kernel.ok("import os; os.environ['MEWCODE_HEADLESS_APPROVAL'] = 'allow'")
    try:
        cell = kernel.ok("%%agent --new\nWrite allowed.txt.")
    finally:
        kernel.ok("del os.environ['MEWCODE_HEADLESS_APPROVAL']")
    assert "allowed write_file allowed.txt" in cell.stdout
    assert (project / "allowed.txt").read_text() == "yes"
    assert cell.provenance[0]["tools_used"] == ["write_file"]


def test_an_invalid_headless_policy_is_named(kernel: Kernel) -> None:
    kernel.ok("os.environ['MEWCODE_HEADLESS_APPROVAL'] = 'maybe'")
    try:
        cell = kernel.run("%agent Hi.")
    finally:
        kernel.ok("del os.environ['MEWCODE_HEADLESS_APPROVAL']")
    assert cell.status == "error"
    assert "MEWCODE_HEADLESS_APPROVAL" in cell.errors[0]["evalue"]


# --- readable errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        ("%%agent --max-turns 0\nHi.", "--max-turns must be at least 1"),
        ("%%agent --mode careful\nHi.", "invalid choice: 'careful'"),
        ("%%agent --frobnicate\nHi.", "unrecognized arguments: --frobnicate"),
        ("%%agent --new --resume abc\nHi.", "either --new or --resume"),
        ("%%agent --out 2x\nHi.", "--out needs a Python variable name"),
        ("%%agent\n", "no prompt"),
        ("%%agent Hi there\nBody.", "only options on its first line"),
        ("%%agent --agent reviewer\nReview.", "no subagent definition named 'reviewer'"),
        ("%%agent --provider nowhere\nHi.", "unknown provider 'nowhere'"),
        ("%%agent --resume 1999\nHi.", "cannot resume '1999'"),
        ("%agent /frobnicate", "Unknown command `/frobnicate`"),
    ],
)
def test_bad_options_get_one_readable_line(kernel: Kernel, code: str, cause: str) -> None:
    cell = kernel.run(code)
    assert cell.status == "error"
    [error] = cell.errors
    assert cause in error["evalue"]
    assert len(error["traceback"]) == 1 and "Traceback" not in error["traceback"][0]
    assert kernel.ok("1 + 1").status == "ok"


def test_a_provider_error_names_the_cause_and_the_kernel_goes_on(
    kernel: Kernel, script: ScriptedServer
) -> None:
    script.add(status(401, message="invalid x-api-key"), reply(text="Working again."))
    cell = kernel.run("%%agent --new\nHi.")
    assert cell.status == "error"
    [error] = cell.errors
    assert "invalid x-api-key" in error["evalue"] and len(error["traceback"]) == 1
    assert cell.provenance[0]["stop_reason"] == "error"
    assert kernel.ok("%agent Again.").markdown == ["Working again."]


def test_help_comes_from_magic_arguments(kernel: Kernel) -> None:
    for code in ("%%agent?", "%agent?"):
        cell = kernel.ok(code)
        pages = [p for p in cell.reply["content"]["payload"] if p.get("source") == "page"]
        text = pages[0]["data"]["text/plain"]
        assert "--max-turns N" in text and "--background" in text and "slash command" in text


def test_a_magic_below_other_code_explains_itself(kernel: Kernel) -> None:
    cell = kernel.run("x = 1\n%agent hello")
    assert cell.status == "error"
    assert "must start its cell" in cell.text
