"""MewCode demo: a small multi-step coding task, streamed to the terminal.

With no API key set, it runs offline on the bundled replay of a recorded
session (and says so). With ANTHROPIC_API_KEY or OPENAI_API_KEY set, the same
task runs against the real model.

    python examples/demo.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from mewcode_kernel.core import AgentSession, open_session
from mewcode_kernel.core.events import (
    AgentEvent,
    Notice,
    RetryScheduled,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnDone,
)
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest

TASK = (
    "mean() in stats.py crashes on an empty list. Make it return 0.0 for an empty "
    "list, then run a quick check with python3."
)
PROJECT = {
    "stats.py": 'def mean(xs):\n    """Arithmetic mean of xs."""\n    return sum(xs) / len(xs)\n',
}


def make_project(root: Path) -> None:
    for name, text in PROJECT.items():
        (root / name).write_text(text)


async def approve_and_say(req: ApprovalRequest) -> ApprovalAnswer:
    print(f"\n  [approved automatically for the demo: {req.call.name}: {req.reason}]", end="")
    return ApprovalAnswer(allow=True)


def show(event: AgentEvent) -> None:
    if isinstance(event, TextDelta):
        print(event.text, end="", flush=True)
    elif isinstance(event, ToolStarted):
        args = ", ".join(f"{k}={str(v)[:40]!r}" for k, v in event.call.input.items())
        print(f"\n> {event.call.name}({args})")
    elif isinstance(event, ToolFinished):
        mark = "failed" if event.result.is_error else "done"
        first = event.result.content.strip().splitlines()[:3]
        print(f"  {mark}: " + "\n        ".join(first))
    elif isinstance(event, RetryScheduled):
        print(f"\n[retrying in {event.delay:.1f}s: {event.reason}]")
    elif isinstance(event, Notice):
        print(f"[{event.level}] {event.message}")
    elif isinstance(event, TurnDone):
        u = event.usage
        print(
            f"\n\n-- {event.reason}: {event.model_turns} model turns, "
            f"{u.input_tokens} in / {u.output_tokens} out / {u.cache_read_tokens} cached tokens"
        )


async def run_demo(project: Path, session: AgentSession) -> TurnDone:
    print(f"MewCode demo on {session.provider_label}")
    print(f"project: {project}\n\nyou: {TASK}\n")
    done: TurnDone | None = None
    async for event in session.run(TASK):
        show(event)
        if isinstance(event, TurnDone):
            done = event
    saved_in = session.session_dir
    await session.aclose()
    assert done is not None
    print(f"\nstats.py now reads:\n{(project / 'stats.py').read_text()}")
    print(f"session saved in {saved_in}")
    return done


async def main() -> int:
    # Kept after the run so the edited file and the session can be looked at.
    project = Path(tempfile.mkdtemp(prefix="mewcode-demo-"))
    make_project(project)
    session = open_session(project, approval_handler=approve_and_say)
    done = await run_demo(project, session)
    return 0 if done.reason == "end_turn" else 1


if __name__ == "__main__":
    os.environ.pop("MEWCODE_ROOT", None)
    sys.exit(asyncio.run(main()))
