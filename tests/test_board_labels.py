"""What a task board row says: "waiting for you" while one of its cards waits
(not "running"), an estimate of the tokens while the model streams (not 0),
the counted tokens once the response ends, and a finished task says how it
ended whatever a stale card count says; a run_python row shows its code, not
JSON with ``\\n`` escapes."""

from __future__ import annotations

from typing import Any

from magics._live.call_view import input_html
from magics._live.taskboard import task_line
from mewcode_kernel.core.tasks import TaskInfo
from mewcode_kernel.core.usage import Usage


def info(state: Any = "running", **extra: Any) -> TaskInfo:
    return TaskInfo(
        id="t1",
        name="writer",
        kind="agent",
        description="write notes",
        state=state,
        role="general-purpose",
        launched_at=0.0,
        started_at=0.0,
        **extra,
    )


def test_a_task_waiting_on_a_card_says_so() -> None:
    line = task_line(info(), now=3.0, waiting=True)
    assert line.startswith("? writer · general-purpose · waiting for you · 3.0 s")
    assert "running" not in line


def test_a_finished_task_says_how_it_ended_even_with_a_card_counted() -> None:
    for state in ("completed", "failed", "cancelled", "interrupted"):
        line = task_line(info(state, ended_at=2.0), now=9.0, waiting=True)
        assert f"· {state} ·" in line and "waiting" not in line


def test_tokens_are_estimated_while_the_model_streams() -> None:
    assert "· 0 tokens ·" in task_line(info(), now=1.0)
    streaming = task_line(info(), now=1.0, streamed=8_000)
    assert "· ~2.0k tokens ·" in streaming
    counted = info(usage=Usage(input_tokens=1_500, output_tokens=500))
    assert "· ~2.1k tokens ·" in task_line(counted, now=1.0, streamed=400)
    # once finished the count is the provider's, not an estimate
    done = info("completed", ended_at=1.0, usage=Usage(input_tokens=1_500, output_tokens=500))
    assert "· 2.0k tokens ·" in task_line(done, now=1.0, streamed=400)


class _Python:
    family = "python"

    def subject(self, args: dict[str, Any]) -> str | None:
        return args.get("code")


def test_run_python_rows_show_code_not_json() -> None:
    html = input_html(_Python(), {"code": "import os\nprint(os.getcwd())"})  # type: ignore[arg-type]
    assert "\\n" not in html and "mewcode-command" in html
    assert "print" in html and "getcwd" in html
    assert "&quot;code&quot;" not in html and '"code"' not in html
