"""Parsing agent cells and rewriting them into awaited calls (no kernel)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from IPython.core.error import UsageError

from magics.options import AgentOptions, parse_cell
from magics.transformer import agent_cell_transformer, rewrite


def test_a_cell_body_is_the_prompt() -> None:
    call = parse_cell("--mode plan --max-turns 3", "  Explain utils.py.\n")
    assert call.prompt == "Explain utils.py." and call.command is None
    assert call.options == AgentOptions(mode="plan", max_turns=3)


def test_the_line_form_takes_options_then_the_prompt_literally() -> None:
    call = parse_cell("--model m1 --new fix the --verbose flag {x}", None, {"x": "nope"})
    assert call.options.model == "m1" and call.options.new
    assert call.prompt == "fix the --verbose flag {x}"


def test_every_option_parses() -> None:
    line = (
        "--provider p --model m --mode acceptEdits --resume 2026 --agent a "
        "--max-turns 2 --background --out v"
    )
    assert parse_cell(line, "go").options == AgentOptions(
        provider="p",
        model="m",
        mode="acceptEdits",
        resume="2026",
        agent="a",
        max_turns=2,
        background=True,
        out="v",
    )


def test_slash_commands_and_namespace_expansion() -> None:
    ns = {"sid": "20261130-1", "mode": "plan"}
    call = parse_cell("--mode {mode}", "/resume {sid}", ns)
    assert call.command == "/resume 20261130-1" and call.options.mode == "plan"
    assert parse_cell("/cost", None).command == "/cost"
    assert parse_cell("--out c /sessions", None).options.out == "c"


@pytest.mark.parametrize(
    ("line", "cell", "message"),
    [
        ("--max-turns 0", "x", "--max-turns must be at least 1"),
        ("--new --resume a", "x", "either --new or --resume"),
        ("--out not-a-name", "x", "--out needs a Python variable name"),
        ("--mode wild", "x", "invalid choice"),
        ("", "   ", "no prompt"),
        ("", None, "no prompt"),
        ("stray words", "x", "only options on its first line"),
    ],
)
def test_bad_cells_raise_usage_errors(line: str, cell: str | None, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_cell(line, cell)


def test_agent_cells_are_rewritten_into_one_awaited_call() -> None:
    code = rewrite("%%agent --mode plan\nWhat is 'this'?\n")
    assert code is not None and code.startswith("await ")
    assert "'--mode plan'" in code and "\"What is 'this'?\\n\"" in code
    assert "None)" in (rewrite("%agent hello") or "")
    compile(code, "<cell>", "exec", flags=0x2000)  # PyCF_ALLOW_TOP_LEVEL_AWAIT


@pytest.mark.parametrize(
    "cell",
    ["%%agent?\n", "%agent?\n", "%%agents\nx\n", "x = 1\n%agent hi\n", "%agent hi\nprint(1)\n"],
)
def test_other_cells_are_left_alone(cell: str) -> None:
    lines = cell.splitlines(keepends=True)
    assert agent_cell_transformer(lines) == lines


def test_loading_the_extension_keeps_the_core_out_of_kernel_start() -> None:
    check = (
        "import sys, magics, magics.controller, magics.magic, magics.transformer, "
        "magics.interrupt, mewcode_kernel.kernel\n"
        "heavy = ('mewcode_kernel.core', 'pydantic', 'anthropic', 'openai', 'ipywidgets', "
        "'httpx2', 'yaml')\n"
        # the permission modes (--mode's choices) come from one import-free module of the core
        "light = {'mewcode_kernel.core', 'mewcode_kernel.core.permission', "
        "'mewcode_kernel.core.permission.modes'}\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy) and m not in light))"
    )
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_help_lists_agent_and_fork() -> None:
    from magics.options import agent

    doc = agent.__doc__ or ""
    assert "--agent NAME" in doc and "--fork" in doc
    assert parse_cell("--agent reviewer", "hi").options.agent == "reviewer"
