"""Kernel start benchmark: ``mewcode`` vs a plain ipykernel, start to ready.

Run by hand: ``python benchmarks/bench_kernel_start.py [--runs N]``.
Starts each kernel ``N`` times (alternating, after one warm-up each), timing
``start_kernel`` until ``kernel_info`` is answered, and prints the medians and
their ratio against the 1.3x target (heavy imports such as the provider SDKs
must stay out of start-up; the first agent cell pays for them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import KernelManager

from mewcode_kernel.testing import install_kernelspec

TARGET_RATIO = 1.3


def start_to_ready(name: str, cwd: str) -> float:
    km = KernelManager(kernel_name=name)
    start = time.perf_counter()
    km.start_kernel(cwd=cwd)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        return time.perf_counter() - start
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as prefix:
        os.environ["JUPYTER_PATH"] = str(install_kernelspec(Path(prefix)))
        times: dict[str, list[float]] = {"python3": [], "mewcode": []}
        for name in times:
            start_to_ready(name, prefix)  # warm the disk cache
        for _ in range(args.runs):
            for name, found in times.items():
                found.append(start_to_ready(name, prefix))
    plain, ours = (statistics.median(times[n]) for n in ("python3", "mewcode"))
    ratio = ours / plain
    print(f"plain ipykernel: median {plain:.3f} s over {args.runs} starts")
    print(f"mewcode kernel:  median {ours:.3f} s over {args.runs} starts")
    print(
        f"ratio {ratio:.2f}x (target <= {TARGET_RATIO}x): {'ok' if ratio <= TARGET_RATIO else 'SLOW'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
