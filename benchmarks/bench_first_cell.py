"""The first agent cell of a fresh ``mewcode`` kernel, as JupyterLab runs it (by hand).

Starts a kernel in a project whose model is a local scripted Anthropic-protocol
server and runs ``%%agent`` with ``allow_stdin`` (the live widget renderer),
either at once when the kernel is ready or after ``--idle`` seconds (the time
a person takes to type the first prompt). Prints medians of: execute to the
first visible output, to the first answer text, and to the end of the cell.
With ``--baseline DIR`` (a checkout of older code, given to that kernel as
``PYTHONPATH``) runs of both alternate.

    python benchmarks/bench_first_cell.py [--runs N] [--idle SECONDS] [--baseline OLD_CHECKOUT]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _project import bench_env, cell_messages, scripted_project, started_kernel

from mewcode_kernel.testing import install_kernelspec
from mewcode_kernel.testing.wire import ScriptedServer, reply

ANSWER = "Hello from the scripted model."


def one_run(root: Path, env: dict[str, str], server: ScriptedServer, idle: float) -> list[float]:
    server.add(reply(text=ANSWER))
    with started_kernel(root, env) as kc:
        time.sleep(idle)
        start = time.monotonic()
        msg_id = kc.execute("%%agent\nSay hello.", allow_stdin=True)
        first = text = None
        for msg in cell_messages(kc, msg_id, timeout=60):
            now = time.monotonic() - start
            kind = msg["msg_type"]
            if kind in ("display_data", "stream", "update_display_data", "error"):
                if first is None and kind != "update_display_data":
                    first = now
                data = msg["content"].get("data", {})
                if text is None and ANSWER in str(data.get("text/markdown", "")):
                    text = now
        return [first or now, text or now, now]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=0.0)
    parser.add_argument("--baseline", default=None, help="PYTHONPATH of the code to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:
        tmp_path = Path(tmp)
        os.environ["JUPYTER_PATH"] = str(install_kernelspec(tmp_path / "prefix"))
        root = scripted_project(tmp_path, server.base_url)
        env = bench_env(tmp_path)
        variants = {"this code": env}
        if args.baseline:
            variants["baseline"] = {**env, "PYTHONPATH": args.baseline}
        for variant_env in variants.values():
            one_run(root, variant_env, server, 0.0)  # warm the disk cache
        results: dict[str, list[list[float]]] = {name: [] for name in variants}
        for _ in range(args.runs):
            for name, variant_env in variants.items():
                results[name].append(one_run(root, variant_env, server, args.idle))
    names = ("first visible output", "first answer text", "cell done")
    print(
        f"first agent cell of a fresh kernel, run {args.idle:g} s after ready ({args.runs} runs):"
    )
    for name, runs in results.items():
        cells = "   ".join(
            f"{what} {statistics.median(r[i] for r in runs):.3f} s" for i, what in enumerate(names)
        )
        print(f"  {name:9}  {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
