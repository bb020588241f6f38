"""The kernel tools' own cost, outside a kernel: describing a large DataFrame
(``notebook_variables``' summary and ``inspect_variable``'s depth), running a
trivial ``run_python`` (compile, capture, signal bounds), and one
``RunPython(...)`` permission decision over a 200-statement cell.

They run on the kernel's thread, blocking the notebook while they work, so
these should stay well under a second. Run by hand:
``python benchmarks/bench_kernel_tools.py [--rows 1000000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from magics.kernel_tools.errors import ErrorTracker
from magics.kernel_tools.execution import run_code
from magics.kernel_tools.namespace import describe, describe_in_depth
from magics.kernel_tools.tools import KernelTools
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import Gate, RuleSet
from mewcode_kernel.core.permission.rules import SESSION
from mewcode_kernel.core.tools import RunContext


def _median(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "city": rng.choice(["Oslo", "Rome", "Lima"], args.rows),
            "x": rng.random(args.rows),
            "n": np.arange(args.rows),
        }
    )
    print(f"describe, {args.rows} rows × 3:        {_median(lambda: describe('df', df)):.3f} s")
    print(
        f"describe_in_depth, {args.rows} rows × 3: {_median(lambda: describe_in_depth('df', df)):.3f} s"
    )
    shell = SimpleNamespace(user_ns={})
    print(
        f"run_code('x = 1'):                {_median(lambda: run_code(shell, 'x = 1', timeout=5)) * 1000:.2f} ms"
    )
    rules = RuleSet()
    rules.add_text("RunPython(print:*)", "allow", SESSION)
    gate = Gate(rules=rules)
    run_python = next(
        t for t in KernelTools(shell, ErrorTracker()).tools() if t.name == "run_python"
    )
    code = "\n".join(f"print(df.shape, {i})" for i in range(200))
    call = ToolUseBlock(id="c", name="run_python", input={"code": code})
    ctx = RunContext(root=Path.cwd())
    decide = lambda: asyncio.run(gate.check(call, run_python, ctx))  # noqa: E731
    print(f"RunPython decision, 200 statements: {_median(decide) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
