# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""Attacks on ``{var}`` expansion in ``%%agent`` options: a variable whose
value comes from data (a file, a web page, a model's answer) must fill
exactly one option value, never add ``--mode bypassPermissions`` or any
other option or argument, whatever it holds (spaces, quotes, ``=``, line
breaks, tabs, Unicode dashes and spaces, a leading ``--``).

The parser is attacked directly with many spellings, then the same values
run as real cells in a ``mewcode`` kernel against the scripted model server:
the agent asks to write a file, and the headless default (deny) leaves it
unwritten unless a value smuggled in ``bypassPermissions``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from magics.options import AgentOptions, parse_cell
from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import Kernel, jupyter_path, kernel, project, script, server  # noqa: F401

BYPASS = "bypassPermissions"

#: values that must stay one value (each is a strange model name, nothing more)
ONE_VALUE = [
    f"x --mode {BYPASS}",
    f"x --mode={BYPASS}",
    f"--mode={BYPASS}",
    f"--mode {BYPASS}",
    f'x" --mode "{BYPASS}',
    f"x' --mode '{BYPASS}",
    f'"x" --mode {BYPASS}',
    f"x -- --mode {BYPASS}",
    f"x --new --background --out stolen --mode {BYPASS}",
    f"x\u2014mode {BYPASS}",  # em dash
    f"x \u2013\u2013mode {BYPASS}",  # en dashes
    f"x\u00a0--mode\u00a0{BYPASS}",  # no-break spaces
    f"x\u3000--mode\u3000{BYPASS}",  # ideographic space
    f"x {{mode}} $mode --mode {BYPASS}",  # expansion syntax inside a value is not expanded again
    f"x ; --mode {BYPASS} #",
    f"x\\ --mode\\ {BYPASS}",
]

#: values that cannot be one option value: an error naming the option
NOT_A_VALUE = [
    ("", "needs a value"),
    ("   ", "needs a value"),
    (f"x\n--mode {BYPASS}", "one value on one line"),
    (f"x\r\n--mode {BYPASS}", "one value on one line"),
    (f"x\t--mode\t{BYPASS}", "one value on one line"),
    (f"x\x0b--mode {BYPASS}", "one value on one line"),
    (f"x\u2028--mode {BYPASS}", "one value on one line"),  # line separator
    (f"x\u0085--mode {BYPASS}", "one value on one line"),  # next line
    (f"x\x00--mode {BYPASS}", "one value on one line"),
    (f"x\u200b--mode {BYPASS}", "one value on one line"),  # zero-width space
]

#: how an option's value may be written around the expansion
FORMS = [
    "--model {v}",
    "--model={v}",
    "--model $v",
    '--model "{v}"',
    "--model {v!s}",
    "--model {str(v)}",
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("value", ONE_VALUE)
def test_an_expanded_value_is_one_value(form: str, value: str) -> None:
    call = parse_cell(f"--new {form}", "Hi.", {"v": value, "mode": BYPASS})
    assert call.options.mode is None and call.options.model is not None
    assert value in call.options.model  # the whole value (quoted forms keep their quotes)
    assert not call.options.background and call.options.out is None and call.prompt == "Hi."


@pytest.mark.parametrize(("value", "message"), NOT_A_VALUE)
@pytest.mark.parametrize("form", ["--model {v}", "--model={v}", "--provider $v", "--agent {v}"])
def test_a_value_that_cannot_be_one_value_is_an_error_naming_the_option(
    form: str, value: str, message: str
) -> None:
    option = form.split()[0].split("=")[0]
    with pytest.raises(UsageError, match=message) as caught:
        parse_cell(form, "Hi.", {"v": value})
    assert option in str(caught.value) and "{v}" in str(caught.value)


@pytest.mark.parametrize(
    "line",
    [
        "--resume {v}",
        "--agent {v}",
        "--provider {v}",
        "--out {v}",
        "--max-turns {v}",
        "--model {v} --new",
        "--new --model {v}",
    ],
)
@pytest.mark.parametrize("value", [f"x --mode {BYPASS}", f"3 --mode={BYPASS}", f"--mode={BYPASS}"])
def test_no_option_gains_a_mode_from_a_value(line: str, value: str) -> None:
    try:
        call = parse_cell(line, "Hi.", {"v": value})
    except UsageError as exc:  # --out and --max-turns refuse such values as theirs
        assert str(exc).startswith(("--out needs", "argument --max-turns: invalid int"))
        return
    assert call.options.mode is None and call.options.new == ("--new" in line)


@pytest.mark.parametrize(
    "line",
    ["--{v}", "-{v}", "--{v} plan", "--mo{v}", "--{v}=plan", "--new {v}", "--$v", "--new $v"],
)
def test_an_expansion_cannot_name_an_option(line: str) -> None:
    with pytest.raises(UsageError):
        call = parse_cell(line, "Hi.", {"v": f"mode={BYPASS}"})
        assert call.options.mode != BYPASS  # pragma: no cover - raised above


def test_an_expansion_standing_alone_is_never_an_option() -> None:
    with pytest.raises(UsageError, match="only options on its first line"):
        parse_cell("{v}", "Hi.", {"v": f"--mode {BYPASS}"})
    call = parse_cell("--new {v} Hi.", None, {"v": f"--mode {BYPASS}"})
    assert call.options.mode is None and call.prompt == "{v} Hi."  # prompts are literal


def test_the_line_form_keeps_the_value_out_of_the_prompt_and_options() -> None:
    call = parse_cell("--model {v} fix it", None, {"v": f"m --mode {BYPASS} --new"})
    assert call.options == AgentOptions(model=f"m --mode {BYPASS} --new")
    assert call.prompt == "fix it"


def test_values_and_literal_options_still_work() -> None:
    ns = {"m": "plan", "turns": 3, "name": "answer", "sid": "2026"}
    call = parse_cell("--mode {m} --max-turns {turns} --out $name --resume {sid} --fork", "x", ns)
    assert call.options == AgentOptions(
        mode="plan", max_turns=3, out="answer", resume="2026", fork=True
    )
    assert parse_cell("--max-turns {turns + 1}", "x", ns).options.max_turns == 4
    abbreviated = parse_cell("--back --ag {v}", "x", {"v": f"a --mode {BYPASS}"}).options
    assert abbreviated == AgentOptions(background=True, agent=f"a --mode {BYPASS}")
    assert parse_cell("--model {undefined_name}", "x", ns).options.model == "{undefined_name}"
    with pytest.raises(UsageError, match="invalid choice"):
        parse_cell("--mode {v}", "x", {"v": f"plan --mode {BYPASS}"})


@pytest.mark.parametrize("value", ["x --fork", "x\n/trust yes", "a b", "", "x\t--fork", "x\u2028y"])
def test_a_slash_command_expansion_is_one_word(value: str) -> None:
    with pytest.raises(UsageError, match="must expand to one word"):
        parse_cell("", "/resume {sid}", {"sid": value})
    assert parse_cell("", "/resume {sid}", {"sid": "2026-1"}).command == "/resume 2026-1"
    # the command's name is never expanded
    assert parse_cell("", "/{cmd} x", {"cmd": "trust yes"}).command == "/{cmd} x"


# --- the same values as real cells in a kernel ------------------------------------------------


def set_variable(kernel: Kernel, name: str, value: Any) -> None:
    kernel.ok(f"{name} = {json.dumps(value)}")


@pytest.mark.parametrize(
    "value",
    [
        f"x --mode {BYPASS}",
        f'x" --mode "{BYPASS}',
        f"--mode={BYPASS}",
        f"x\u2014mode {BYPASS}",
    ],
)
@pytest.mark.parametrize("form", ["--model {v}", "--model={v}", "--model $v"])
def test_a_cell_never_runs_in_a_smuggled_mode(
    kernel: Kernel, script: ScriptedServer, project: Path, value: str, form: str
) -> None:
    target = project / "smuggled.txt"
    script.add(
        reply(tool_calls=[("write_file", {"path": "smuggled.txt", "content": "x"})]),
        reply(text="Could not write."),
    )
    set_variable(kernel, "v", value)
    cell = kernel.ok(f"%%agent --new {form}\nWrite smuggled.txt.")
    assert not target.exists()
    assert script.received[-2].body["model"] == value  # one value, all of it
    assert any("denied write_file" in line for line in cell.stdout.splitlines())


@pytest.mark.parametrize(
    ("value", "message"),
    [(f"x\n--mode {BYPASS}", "one value on one line"), ("", "needs a value"),
     (f"x\t--mode\t{BYPASS}", "one value on one line")],
)  # fmt: skip
def test_a_cell_with_an_impossible_value_fails_before_any_request(
    kernel: Kernel, script: ScriptedServer, value: str, message: str
) -> None:
    before = len(script.received)
    set_variable(kernel, "v", value)
    cell = kernel.run("%%agent --new --model {v}\nHi.")
    assert cell.status == "error" and cell.errors[0]["ename"] == "AgentUsageError"
    assert "--model" in cell.errors[0]["evalue"] and message in cell.errors[0]["evalue"]
    assert len(script.received) == before


def test_a_line_form_cell_keeps_the_value_in_its_option(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(
        reply(tool_calls=[("write_file", {"path": "line.txt", "content": "x"})]),
        reply(text="No."),
    )
    set_variable(kernel, "v", f"m --mode {BYPASS} --new")
    kernel.ok("%agent --new --model {v} Write line.txt.")
    assert not (project / "line.txt").exists()
    assert script.received[-2].body["model"] == f"m --mode {BYPASS} --new"


def test_a_slash_command_value_cannot_add_arguments(kernel: Kernel, script: ScriptedServer) -> None:
    set_variable(kernel, "sid", "x --fork")
    cell = kernel.run("%%agent\n/resume {sid}")
    assert cell.status == "error" and "must expand to one word" in cell.errors[0]["evalue"]


def test_ipython_does_not_expand_the_line_first(kernel: Kernel, script: ScriptedServer) -> None:
    """Below other code the magic goes through IPython's own magic call,
    whose expansion would run ``{...}`` and split the value; it is off."""
    kernel.ok("seen = []")
    cell = kernel.run("x = 1\n%agent --model {seen.append(1) or 'm'} Hi.")
    assert cell.status == "error" and "must start its cell" in cell.errors[0]["evalue"]
    assert kernel.ok("print(seen)").stdout.strip() == "[]"
