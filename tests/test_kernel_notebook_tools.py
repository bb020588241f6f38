# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""The kernel toolset in a real ``mewcode`` kernel, driven by a scripted
model: the agent sees the notebook's variables and last error, runs code in
its namespace (with permission, interruptible) and proposes cells; ``@var``
and a failed cell before the turn reach the prompt."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ReceivedRequest, ScriptedServer, reply
from tests._fifo import Fifo
from tests._kernel import Kernel, jupyter_path, kernel, project, script, server  # noqa: F401

BOUND = 30.0
KERNEL_TOOLS = {
    "notebook_variables",
    "inspect_variable",
    "last_error",
    "run_python",
    "propose_cell",
}


def tool_result(request: ReceivedRequest) -> dict[str, Any]:
    """The one tool result the model received in ``request`` (Anthropic format)."""
    content = request.body["messages"][-1]["content"]
    results = [c for c in content if c.get("type") == "tool_result"]
    assert len(results) == 1, content
    return results[0]


def result_text(request: ReceivedRequest) -> str:
    content = tool_result(request)["content"]
    if isinstance(content, str):
        return content
    return "".join(c.get("text", "") for c in content)


def turn_context(request: ReceivedRequest) -> str:
    """Everything the turn's first user message held (context and prompt)."""
    content = request.body["messages"][-1]["content"]
    return "\n".join(c.get("text", "") for c in content if c.get("type") == "text")


@pytest.fixture
def headless_allow(kernel: Kernel) -> Iterator[None]:
    kernel.ok("import os; os.environ['MEWCODE_HEADLESS_APPROVAL'] = 'allow'")
    yield
    kernel.ok("del os.environ['MEWCODE_HEADLESS_APPROVAL']")


def test_variables_list_a_dataframe_summary_and_mask_secrets(
    kernel: Kernel, script: ScriptedServer
) -> None:
    kernel.ok(
        "import pandas as pd\n"
        "import json as _json_module\n"
        "sales = pd.DataFrame({'city': ['Oslo', 'Rome', 'Lima'], 'units': [3, None, 7]})\n"
        "api_key = 'plain-value-but-a-secret-name'\n"
        "greeting = 'hello, my token is sk-ant-api03-abcdefghijklmnopqrstuv'\n"
        "_private = 42\n"
        "def ratio(a, b):\n    return a / b\n"
    )
    kernel.ok("class Basket:\n    def total(self):\n        return 3\n")
    script.add(
        reply(tool_calls=[("notebook_variables", {})]),
        reply(tool_calls=[("inspect_variable", {"name": "ratio"})]),
        reply(tool_calls=[("inspect_variable", {"name": "Basket"})]),
        reply(text="Seen."),
    )
    cell = kernel.ok("%%agent --new\nWhat is loaded?")
    offered = {t["name"] for t in script.received[-4].body["tools"]}
    assert KERNEL_TOOLS <= offered
    listing = result_text(script.received[-3])
    assert "sales: pandas.DataFrame, shape 3×2" in listing
    assert "units: float64, 1 missing" in listing and "city:" in listing
    assert "Oslo" in listing and "Lima" in listing  # the head
    assert "api_key: str" in listing and "plain-value-but-a-secret-name" not in listing
    assert "greeting: str" in listing and "sk-ant-api03" not in listing
    assert "[masked]" in listing
    assert "ratio: function" in listing and "ratio(a, b)" in listing
    for hidden in ("pd:", "_private", "_json_module", "In:", "Out:", "get_ipython"):
        assert hidden not in listing
    source = result_text(script.received[-2])
    assert "def ratio(a, b):\n    return a / b" in source  # from the cell, via linecache
    cls = result_text(script.received[-1])
    assert "class Basket:\n    def total(self):\n        return 3" in cls
    assert "✓ notebook_variables" in cell.stdout
    assert "sk-ant-api03" not in cell.raw


def test_last_error_returns_the_real_traceback_and_the_next_turn_is_told(
    kernel: Kernel, script: ScriptedServer
) -> None:
    kernel.ok("def mean_price(rows):\n    return sum(rows) / len(rows)\n")
    failed = kernel.run("empty = []\nmean_price(empty)")
    assert failed.status == "error"
    script.add(
        reply(tool_calls=[("last_error", {})]),
        reply(text="The list is empty."),
        reply(text="Nothing new."),
    )
    kernel.ok("%%agent --new\nWhy did that fail?")
    first, second = script.received[-2:]
    context = turn_context(first)
    assert "raised ZeroDivisionError: division by zero; call last_error" in context
    report = result_text(second)
    assert report.startswith("ZeroDivisionError: division by zero")
    assert "mean_price(empty)" in report  # the cell that raised it
    assert "return sum(rows) / len(rows)" in report  # the frame inside the function
    assert "Traceback (most recent call last)" in report
    assert 'File "the cell"' in report and "ipykernel_" not in report  # not a temp file
    assert re.search(r'File "In\[\d+\]", line 2, in mean_price', report)  # an earlier cell
    # an agent cell of its own failing is not the user's error, and the line is said once
    assert kernel.run("%%agent --no-such-option\nHi").status == "error"
    kernel.ok("%%agent\nAnything else?")
    assert "call last_error" not in turn_context(script.received[-1])


def test_run_python_asks_and_headless_deny_runs_nothing(
    kernel: Kernel, script: ScriptedServer
) -> None:
    script.add(
        reply(tool_calls=[("run_python", {"code": "marker = 'ran'\nprint(marker)"})]),
        reply(text="I was not allowed."),
    )
    cell = kernel.ok("%%agent --new\nSet the marker.")
    denied = tool_result(script.received[-1])
    assert denied["is_error"] is True
    assert "run_python runs code in the notebook" in result_text(script.received[-1])
    assert "✗" in cell.stdout and "run_python" in cell.stdout
    assert kernel.ok("print('marker' in globals())").stdout == "False\n"


def test_run_python_runs_when_allowed_and_the_next_cell_uses_what_it_defined(
    kernel: Kernel, script: ScriptedServer, headless_allow: None
) -> None:
    code = "total = sum(range(10))\nprint('computed', total)\ntotal * 2"
    script.add(
        reply(tool_calls=[("run_python", {"code": code})]),
        reply(tool_calls=[("run_python", {"code": "1 / 0"})]),
        reply(tool_calls=[("run_python", {"code": "while True:\n    pass", "timeout": 0.5})]),
        reply(text="Done."),
    )
    cell = kernel.ok("%%agent --new\nCompute the total.")
    ran = result_text(script.received[-3])
    assert ran == "computed 45\nOut: 90"
    failed = tool_result(script.received[-2])
    assert failed["is_error"] is True and "ZeroDivisionError" in result_text(script.received[-2])
    assert 'File "<run_python-' in result_text(script.received[-2])
    assert "[stopped after 0.5 s: the time limit]" in result_text(script.received[-1])
    assert "✓ run_python total = sum(range(10))" in cell.stdout
    assert kernel.ok("print(total + 1)").stdout == "46\n"
    assert kernel.ok("print(sum(range(3)))").stdout == "3\n"  # the kernel is fine after


def test_run_python_is_interrupted_cleanly(
    kernel: Kernel, script: ScriptedServer, project: Path, headless_allow: None
) -> None:
    with Fifo(project / "loop-started") as started:
        code = (
            "before_loop = 'kept'\n"
            f"open({str(started.path)!r}, 'w').write('x')\n"
            "import time\n"
            "while True:\n    time.sleep(0.05)\n"
        )
        script.add(
            reply(tool_calls=[("run_python", {"code": code})]),
            reply(text="Stopped, as you wished."),
        )
        msg_id = kernel.execute("%%agent --new\nLoop forever.")
        assert started.read_to_end(timeout=BOUND) == b"x"  # the loop is running
    kernel.km.interrupt_kernel()
    cell = kernel.collect(msg_id, timeout=BOUND)
    assert cell.status == "error"
    assert cell.errors[0]["ename"] == "AgentInterrupted"
    assert kernel.ok("print(before_loop)").stdout == "kept\n"
    # the conversation goes on; the call was answered as interrupted
    assert kernel.ok("%agent Never mind.").markdown[-1] == "Stopped, as you wished."
    answered = tool_result(script.received[-1])
    assert answered["is_error"] is True
    assert "interrupted" in json.dumps(answered)


def test_propose_cell_sends_the_set_next_input_payload(
    kernel: Kernel, script: ScriptedServer
) -> None:
    script.add(
        reply(tool_calls=[("propose_cell", {"source": "sales = sales.dropna()"})]),
        reply(tool_calls=[("propose_cell", {"source": "## Cleaned", "cell_type": "markdown"})]),
        reply(text="Run the cells below."),
    )
    cell = kernel.ok("%%agent --new\nClean the data.")
    payloads = cell.reply["content"]["payload"]
    assert payloads == [
        {"source": "set_next_input", "text": "sales = sales.dropna()", "replace": False},
        {"source": "set_next_input", "text": "%%markdown\n## Cleaned", "replace": False},
    ]
    # headless, nobody sees a new cell: the proposal is printed
    assert "✎ proposed cell:\n```python\nsales = sales.dropna()\n```" in cell.stdout
    assert "cell was printed" in result_text(script.received[-2])


def test_at_var_attaches_a_summary_to_the_prompt(kernel: Kernel, script: ScriptedServer) -> None:
    kernel.ok("prices = [3, 1, 2]\nsecret_token = 'abcdefghijklmnop'")
    script.add(reply(text="Sorted."))
    kernel.ok(
        "%%agent --new\nSort @prices for me (mail user@prices.example, not @nothing_here); "
        "@secret_token too"
    )
    context = turn_context(script.received[-1])
    assert "attached these notebook variables" in context
    assert "prices: list, len 3" in context and "[3, 1, 2]" in context
    assert "secret_token: str" in context and "abcdefghijklmnop" not in context
    assert "nothing_here:" not in context
    assert context.count("prices: list") == 1
