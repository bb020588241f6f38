"""Benchmark what checkpoints cost a file write, and how long a revert takes.

Run by hand (not a test)::

    python benchmarks/bench_checkpoints.py [--repeat N]

Times ``write_file`` on a 10 kB and a 5 MB file without a recorder and with
one (the first write of a turn saves the old content: a blob and the turn's
record, each fsynced; later writes of the same file only rewrite the
record), then planning and applying the revert of a turn that changed 50
files. Best of N runs, in a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mewcode_kernel.core.checkpoints import TurnCheckpoints, TurnRevert
from mewcode_kernel.core.tools import RunContext
from mewcode_kernel.core.tools.write_tool import write_file


def best(repeat: int, run: Callable[[], None], setup: Callable[[], None] = lambda: None) -> float:
    times = []
    for _ in range(repeat):
        setup()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


KEY = secrets.token_bytes(32)


def bench_write(root: Path, session: Path, size: int, label: str, repeat: int) -> None:
    target = root / f"f{size}.txt"
    target.write_text("x" * size)
    content = "y" * size
    recorder = TurnCheckpoints(root, key=KEY)
    plain = RunContext(root=root)
    kept = RunContext(root=root, checkpoints=recorder)

    def write(ctx: RunContext) -> None:
        asyncio.run(write_file.call(ctx, {"path": target.name, "content": content}))

    without = best(repeat, lambda: write(plain))
    first = best(repeat, lambda: write(kept), lambda: recorder.begin(session, session.name))
    again = best(repeat, lambda: write(kept))
    print(
        f"write_file {label}: {without * 1e3:.2f} ms without checkpoints, "
        f"{first * 1e3:.2f} ms first write of a turn, {again * 1e3:.2f} ms a later one"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        session = root / ".mewcode" / "sessions" / "20260101-000000-000000-bench0"
        session.mkdir(parents=True)
        for size, label in ((10_000, "10 kB"), (5_000_000, "5 MB")):
            bench_write(root, session, size, label, repeat)
        recorder = TurnCheckpoints(root, key=KEY)
        ctx = RunContext(root=root, checkpoints=recorder)
        names = [f"many/{i}.py" for i in range(50)]
        for name in names:
            (root / name).parent.mkdir(exist_ok=True)
            (root / name).write_text("old\n" * 200)

        def turn() -> None:
            recorder.begin(session, session.name)
            for name in names:
                asyncio.run(write_file.call(ctx, {"path": name, "content": "new\n" * 200}))

        revert: list[TurnRevert] = []

        def prepare() -> None:
            for name in names:
                (root / name).write_text("old\n" * 200)
            turn()
            assert recorder.record is not None and recorder.store is not None
            revert[:] = [TurnRevert(recorder.record, recorder.store, ctx.workspace)]

        plan = best(repeat, lambda: asyncio.run(revert[0].plan()), prepare)

        def apply_all() -> None:
            assert len(asyncio.run(revert[0].apply()).changes) == len(names)

        apply = best(repeat, apply_all, prepare)
        print(f"revert of 50 files: plan {plan * 1e3:.1f} ms, plan and apply {apply * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
