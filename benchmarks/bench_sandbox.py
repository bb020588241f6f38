"""Sandbox overhead: a ``bash`` call inside bubblewrap against the same call
without it, median over N calls each (interleaved, so machine load hits
both alike).

Run by hand: ``python benchmarks/bench_sandbox.py [--calls N] [--command CMD]``.
Prints both medians, the overhead in milliseconds and the ratio. The sandbox
hides the paths a ``Read(./secrets/**)`` deny rule covers, as a session with
that rule would.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mewcode_kernel.core.config import SandboxSettings
from mewcode_kernel.core.fs import Workspace
from mewcode_kernel.core.permission import RuleSet, RuleSource
from mewcode_kernel.core.permission.hidden import read_denied_paths
from mewcode_kernel.core.sandbox import Sandbox, SandboxSupport, detect
from mewcode_kernel.core.tools import RunContext, bash


@dataclass
class _Services:
    sandbox: Sandbox

    async def ask_person(self, ctx: RunContext, reason: str) -> bool:
        return False


async def _time(ctx: RunContext, command: str) -> float:
    start = time.perf_counter()
    await bash.call(ctx, {"command": command})
    return time.perf_counter() - start


async def main(calls: int, command: str) -> None:
    support = detect()
    if not support.available:
        raise SystemExit(f"bubblewrap cannot run here: {support.reason}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "secrets").mkdir()
        (root / "secrets" / "key.txt").write_text("k")
        rules = RuleSet()
        rules.add_text("Read(./secrets/**)", "deny", RuleSource(label="bench"))
        boxed = Sandbox(root, SandboxSettings(), support=support)
        boxed.hidden_paths = lambda: read_denied_paths(rules.rules, Workspace(root))
        plain = Sandbox(root, SandboxSettings(), support=SandboxSupport(available=False))
        inside = RunContext(root=root, services=_Services(boxed))  # type: ignore[arg-type]
        outside = RunContext(root=root, services=_Services(plain))  # type: ignore[arg-type]
        for ctx in (inside, outside):  # warm up
            await _time(ctx, command)
        sandboxed, unsandboxed = [], []
        for _ in range(calls):
            sandboxed.append(await _time(inside, command))
            unsandboxed.append(await _time(outside, command))
    s, u = statistics.median(sandboxed), statistics.median(unsandboxed)
    print(f"bash {command!r}, median of {calls} calls each ({support.version})")
    print(f"  unsandboxed: {u * 1000:7.1f} ms")
    print(f"  sandboxed:   {s * 1000:7.1f} ms")
    print(f"  overhead:    {(s - u) * 1000:7.1f} ms  (ratio {s / u:.2f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--command", default="true")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.command))
