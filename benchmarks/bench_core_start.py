"""Start-up and exit of a plain Python script using the core API (by hand).

A fresh ``python`` process runs README's example against a local scripted
Anthropic-protocol server: ``open_session(root)`` then ``session.run(prompt)``
until ``TurnDone``, then the script simply ends. Measured per run: process
start to the first model request (arrival at the server), and the time the
process takes to exit after the answer. With ``--baseline DIR`` (a checkout of
older code) runs of this code and of that one alternate, and the paired ratios
are printed too (alternating keeps them fair on a machine whose load drifts).

    python benchmarks/bench_core_start.py [--runs N] [--baseline OLD_CHECKOUT]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _project import bench_env, scripted_project

from mewcode_kernel.testing.wire import ScriptedServer, reply

CHILD = """
import asyncio, sys, time
from mewcode_kernel.core import open_session

async def main():
    session = open_session(sys.argv[1])
    async for event in session.run("Say hello."):
        if event.kind == "turn_done":
            print("ANSWER", time.time(), flush=True)

asyncio.run(main())
"""


class TimedServer(ScriptedServer):
    """Keeps the arrival time of each request."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []
        self._arrived = threading.Event()

    def _receive(self, request, scripted):  # type: ignore[no-untyped-def]
        self.arrivals.append(time.time())
        self._arrived.set()
        return super()._receive(request, scripted)


def one_run(server: TimedServer, root: Path, env: dict[str, str]) -> tuple[float, float]:
    server.add(reply(text="Hello."))
    first = len(server.arrivals)
    start = time.time()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root)],
        env=env,
        cwd=root,  # not this checkout: "-c" puts the working directory first on sys.path
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=120)
    ended = time.time()
    answer = next((float(x.split()[1]) for x in out.splitlines() if x.startswith("ANSWER")), None)
    if proc.returncode != 0 or answer is None or len(server.arrivals) <= first:
        raise RuntimeError(f"run failed ({proc.returncode}):\n{out}\n{err}")
    return server.arrivals[first] - start, ended - answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline", default=None, help="PYTHONPATH of the code to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, TimedServer() as server:
        root = scripted_project(Path(tmp), server.base_url)
        env = bench_env(Path(tmp))
        variants = {"this code": env}
        if args.baseline:
            variants["baseline"] = {**env, "PYTHONPATH": args.baseline}
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for variant_env in variants.values():
            one_run(server, root, variant_env)  # warm the disk cache
        for _ in range(args.runs):
            for name, variant_env in variants.items():
                results[name].append(one_run(server, root, variant_env))
    for name, runs in results.items():
        first = statistics.median(r[0] for r in runs)
        exit_after = statistics.median(r[1] for r in runs)
        print(
            f"{name:9}  start -> first request: median {first:.3f} s   "
            f"exit after the answer: median {exit_after:.3f} s   ({args.runs} runs)"
        )
    if args.baseline:
        mine, base = results["this code"], results["baseline"]
        for i, what in enumerate(("start -> first request", "exit after the answer")):
            ratio = statistics.median(m[i] / b[i] for m, b in zip(mine, base, strict=True))
            print(f"paired ratio this/baseline, {what}: median {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
