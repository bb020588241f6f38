# ruff: noqa: F811  (the jupyter_path fixture imported from tests._kernel is an argument)
"""IOPub traffic of a live agent cell in the real ``mewcode`` kernel.

A ``%%agent`` cell is executed with ``allow_stdin=True`` (as JupyterLab does,
so the widget renderer draws it) against a local scripted model server: many
rounds of thinking, text and read-only tool calls, then a long streamed
answer. The server sends each response at once, far faster than a real
model, so the renderer's coalescing is all that keeps the rate down. The
test counts the cell's IOPub messages per second, over the run, and checks
the final text arrived complete.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import Kernel, jupyter_path, kernel_env, running_kernel  # noqa: F401

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
RATE_LIMIT = 300  # messages per second, the bound (the server drops above 1000)

ROUNDS = 15
CALLS_PER_ROUND = 4


def round_text(i: int) -> str:
    return f"Round {i}: reading the next files to see how module {i} is wired.\n\n"


def final_answer() -> str:
    parts = ["# Summary\n\n"]
    for i in range(60):
        parts.append(
            f"## Module {i}\n\nModule {i} holds `f{i}()`, which returns {i}. "
            + "It is small. " * 30
        )
        parts.append(
            f"\n\n```python\ndef f{i}():\n    return {i}\n```\n\n- uses: none\n- tests: yes\n\n"
        )
    parts.append("That is the whole project.")
    return "".join(parts)


def script() -> list:
    steps = []
    for i in range(ROUNDS):
        calls = [
            ("read_file", {"path": f"pkg/mod{(i * CALLS_PER_ROUND + k) % 20}.py"})
            for k in range(CALLS_PER_ROUND - 1)
        ]
        calls.append(("glob", {"pattern": "pkg/*.py"}))
        thinking = f"Module {i} next; check its imports.\n" * 8 if i % 3 == 0 else None
        steps.append(reply(thinking=thinking, text=round_text(i), tool_calls=calls))
    steps.append(reply(text=final_answer()))
    return steps


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    for i in range(20):
        (root / "pkg" / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    return root


@pytest.fixture
def kernel(tmp_path: Path, project: Path, jupyter_path: Path) -> Iterator[Kernel]:
    with running_kernel(project, kernel_env(tmp_path / "home")) as k:
        yield k


@dataclass
class CellTraffic:
    """The IOPub messages one execute request caused, in order."""

    messages: list[dict[str, Any]] = field(default_factory=list)

    def counted(self) -> list[dict[str, Any]]:
        """What a Jupyter server's rate limit could count (all but status and the echo)."""
        return [m for m in self.messages if m["msg_type"] not in ("status", "execute_input")]

    def max_in_window(self, seconds: float = 1.0) -> int:
        """The most messages sent (by the kernel's clock) within any ``seconds``."""
        times = sorted(_seconds(m["header"]["date"]) for m in self.counted())
        best = start = 0
        for end, t in enumerate(times):
            while t - times[start] > seconds:
                start += 1
            best = max(best, end - start + 1)
        return best

    def span(self) -> float:
        times = [_seconds(m["header"]["date"]) for m in self.counted()]
        return max(times) - min(times) if times else 0.0

    def outputs(self) -> list[dict[str, Any]]:
        """The cell's outputs as a front end would hold them: displays appended,
        display updates applied in place."""
        shown: list[dict[str, Any]] = []
        by_id: dict[str, list[int]] = {}
        for m in self.messages:
            kind, content = m["msg_type"], m["content"]
            display_id = (content.get("transient") or {}).get("display_id")
            if kind in ("display_data", "execute_result", "stream", "error"):
                if display_id:
                    by_id.setdefault(display_id, []).append(len(shown))
                shown.append({"output_type": kind, **content})
            elif kind == "update_display_data":
                for index in by_id.get(display_id, []):
                    shown[index] = {"output_type": "display_data", **content}
        return shown

    def markdown(self) -> str:
        """The answer's text: outputs of Markdown (shown as safe HTML of class
        ``mewcode-answer``), not the rows and lines that carry HTML beside it."""
        return "".join(
            o["data"]["text/markdown"]
            for o in self.outputs()
            if "text/markdown" in o.get("data", {})
            and 'class="mewcode-answer"' in o["data"].get("text/html", 'class="mewcode-answer"')
        )

    def plain(self) -> list[str]:
        return [o.get("data", {}).get("text/plain", o.get("text", "")) for o in self.outputs()]


def _seconds(date: datetime | str) -> float:
    if isinstance(date, str):
        date = datetime.fromisoformat(date)
    return date.timestamp()


def test_a_long_streamed_answer_with_many_tool_calls_stays_under_the_rate_limit(
    kernel, project: Path
) -> None:
    with ScriptedServer(script()) as server:
        (project / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
            f"    model: test-model\n    base_url: {server.base_url}\n    api_key: sk-test\n"
        )
        msg_id = kernel.execute("%%agent\nSummarise every module in pkg/.", allow_stdin=True)
        cell = kernel.collect(msg_id, timeout=120)
        server.assert_all_used()

    assert cell.status == "ok", cell.text
    traffic = CellTraffic(cell.messages)
    counted = traffic.counted()
    span = traffic.span()
    peak = traffic.max_in_window(1.0)
    average = len(counted) / span if span else float(len(counted))
    kinds: dict[str, int] = {}
    for m in counted:
        kinds[m["msg_type"]] = kinds.get(m["msg_type"], 0) + 1
    report = {
        "messages": len(counted),
        "seconds": round(span, 3),
        "average_per_second": round(average, 1),
        "peak_in_1s": peak,
        "by_type": kinds,
        "python": sys.version.split()[0],
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "iopub-rate.json").write_text(json.dumps(report, indent=1) + "\n")

    assert peak < RATE_LIMIT, report
    assert average < RATE_LIMIT, report
    # everything arrived: each round's text, then the whole final answer, in order
    expected = "".join(round_text(i) for i in range(ROUNDS)) + final_answer()
    assert traffic.markdown() == expected
    rows = [p for p in traffic.plain() if p.startswith(("✓ read_file", "✓ glob"))]
    assert len(rows) == ROUNDS * CALLS_PER_ROUND, traffic.plain()
    assert any(p.startswith("✓ done") for p in traffic.plain())
