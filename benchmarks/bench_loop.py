"""Loop overhead per model turn with a zero-latency scripted model (by hand).

Runs a 50-turn task (each turn one cheap read-only tool call) and prints the
per-turn time of the loop itself, tool time excluded, against the 2 ms target.

    python benchmarks/bench_loop.py
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from mewcode_kernel.core.agent import Agent
from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.events import ToolFinished
from mewcode_kernel.core.tools import RunContext, ToolRegistry, tool
from mewcode_kernel.testing import ScriptedModel, reply, tool_call

TURNS = 50
TARGET_MS = 2.0


@tool(read_only=True, kind="read")
async def noop(ctx: RunContext, n: int) -> str:
    """Does nothing."""
    return f"ok {n}"


async def one_run(root: Path) -> tuple[float, float]:
    script = [reply(f"step {i}", tool_call("noop", {"n": i})) for i in range(TURNS - 1)]
    script.append(reply("finished"))
    model = ScriptedModel(script)
    agent = Agent.of(
        provider=model, tools=ToolRegistry([noop]), ctx=RunContext(root=root), max_turns=TURNS
    )
    tool_time = 0.0
    start = time.perf_counter()
    async for event in agent.run(Conversation(), "go"):
        if isinstance(event, ToolFinished):
            tool_time += event.duration
    total = time.perf_counter() - start
    return total, tool_time


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        await one_run(root)  # warm-up
        per_turn = []
        for _ in range(10):
            total, tools = await one_run(root)
            per_turn.append((total - tools) / TURNS * 1000)
    median = statistics.median(per_turn)
    print(f"loop overhead per turn: median {median:.3f} ms over 10 runs of {TURNS} turns")
    print(f"ratio to the {TARGET_MS} ms target: {median / TARGET_MS:.2f}x (<= 1.00 meets it)")


if __name__ == "__main__":
    asyncio.run(main())
