"""Hook overhead: a tool call with one shell ``PreToolUse`` hook against the
same call with no hook, median over N calls each (interleaved, so machine
load hits both alike), by hand.

Each call is one agent turn with a zero-latency scripted model: the model
asks for ``read_file``, the hook (``cat > /dev/null``: it reads the payload
and passes) runs before it, the model answers. The hook runs as a session's
would: in the OS sandbox when bubblewrap works here (``--no-sandbox`` to
compare without it).

    python benchmarks/bench_hooks.py [--calls 50] [--no-sandbox]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from mewcode_kernel.core.agent import Agent
from mewcode_kernel.core.config import SandboxSettings
from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.hooks import HookEngine
from mewcode_kernel.core.lifecycle import Lifecycle
from mewcode_kernel.core.sandbox import Sandbox, SandboxSupport, detect
from mewcode_kernel.core.tools import RunContext, ToolRegistry, builtin_tools
from mewcode_kernel.testing import ScriptedModel, reply, tool_call

HOOK = "hooks:\n  - name: pass\n    event: PreToolUse\n    action: {type: shell, command: 'cat > /dev/null'}\n"


async def one_call(root: Path, lifecycle: Lifecycle, sandbox: Sandbox) -> float:
    model = ScriptedModel([reply(tool_call("read_file", {"path": "notes.txt"})), reply("done")])
    tools = ToolRegistry([t for t in builtin_tools() if t.name == "read_file"])
    agent = Agent.of(
        provider=model, tools=tools, ctx=RunContext(root=root), lifecycle=lifecycle, sandbox=sandbox
    )
    start = time.perf_counter()
    async for _ in agent.run(Conversation(), "read it"):
        pass
    return time.perf_counter() - start


async def main(calls: int, sandboxed: bool) -> None:
    support = detect() if sandboxed else SandboxSupport(available=False)
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "project", Path(tmp) / "home"
        root.mkdir()
        (home / ".mewcode").mkdir(parents=True)
        (root / "notes.txt").write_text("hello\n")
        (home / ".mewcode" / "hooks.yaml").write_text(HOOK)
        sandbox = Sandbox(root, SandboxSettings(), support=support)
        engine = HookEngine(root, home=home, sandbox=lambda: sandbox)
        assert [r.name for r in engine.rules] == ["pass"], engine.problems()
        common = lambda: {"session_id": "bench", "cwd": str(root), "mode": "default"}  # noqa: E731
        hooked = Lifecycle(dispatcher=engine, common=common)
        bare = Lifecycle(common=common)
        for lifecycle in (hooked, bare):  # warm up
            await one_call(root, lifecycle, sandbox)
        with_hook, without = [], []
        for _ in range(calls):
            with_hook.append(await one_call(root, hooked, sandbox))
            without.append(await one_call(root, bare, sandbox))
        runs = engine.stats_for(engine.rules[0])
        assert runs.failures == 0 and runs.runs == calls + 1, runs
    h, b = statistics.median(with_hook), statistics.median(without)
    where = f"in the sandbox ({support.version})" if sandbox.active else "unsandboxed"
    print(f"one tool call, median of {calls} calls each; the hook runs {where}")
    print(f"  no hook:         {b * 1000:7.2f} ms")
    print(f"  one shell hook:  {h * 1000:7.2f} ms")
    print(f"  overhead:        {(h - b) * 1000:7.2f} ms per call  (ratio {h / b:.1f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--no-sandbox", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(args.calls, not args.no_sandbox))
