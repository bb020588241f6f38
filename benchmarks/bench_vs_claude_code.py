"""MewCode beside Claude Code on one scripted task (by hand).

Both run the task of ``_side_by_side.py`` (five zero-cost file reads, then an
answer) against the same local Anthropic-protocol server, in turn (A B A B...),
and the three ratios of issue 23 are printed, MewCode / Claude Code, each the
median of the per-pair ratios:

* start-up: process start -> first model request (``open_session(...).run``
  in a new Python process vs ``claude -p``); with ``--kernel`` also the first
  ``%%agent`` cell of a fresh kernel (execute -> first request) against the
  same ``claude -p`` start-up. Target: at most 1.0;
* per-turn gap: a reply's end -> the next request. Target: at most 0.3;
* request bytes: the first request's body. Target: at most 0.7.

``--baseline DIR`` adds an older checkout of MewCode (its ``PYTHONPATH``) to
the rotation, for before/after figures. Claude Code is ``--claude PATH``,
``$CLAUDE_BIN`` or ``claude`` on ``PATH`` (``npm install
@anthropic-ai/claude-code`` into a scratch folder); without it MewCode's
figures are printed beside the issue's Claude Code figures.

    python benchmarks/bench_vs_claude_code.py [--runs N] [--kernel] [--claude PATH]
        [--baseline OLD_CHECKOUT]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _side_by_side import (
    TURNS,
    Run,
    TimedServer,
    claude_binary,
    claude_env,
    kernel_first_request,
    mewcode_env,
    run_claude,
    run_mewcode,
    task_project,
)

from mewcode_kernel.testing import install_kernelspec

#: Claude Code 2.1 in issue 23 (one run, same fake model): start-up, per-turn gap
ISSUE_CLAUDE = {"start": 0.54, "gap": 0.036}
TARGETS = {"start": 1.0, "kernel": 1.0, "gap": 0.3, "bytes": 0.7}


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kernel", action="store_true", help="also the first %%agent cell")
    parser.add_argument(
        "--idle", type=float, default=0.0, help="seconds between kernel ready and the cell"
    )
    parser.add_argument("--claude", default=None, help="the claude executable")
    parser.add_argument("--baseline", default=None, help="PYTHONPATH of older MewCode")
    args = parser.parse_args()
    claude = claude_binary(args.claude)
    with tempfile.TemporaryDirectory() as tmp, TimedServer() as server:
        tmp_path = Path(tmp)
        root = task_project(tmp_path, server)
        variants: dict[str, Callable[[], Run]] = {}
        for name, path in (("mewcode", None), ("baseline", args.baseline)):
            if name == "baseline" and path is None:
                continue
            env = mewcode_env(tmp_path, path)
            variants[name] = lambda env=env: run_mewcode(server, root, env)
            if args.kernel:
                os.environ["JUPYTER_PATH"] = str(install_kernelspec(tmp_path / "prefix"))
                variants[f"{name} kernel"] = lambda env=env: kernel_first_request(
                    server, root, env, idle=args.idle
                )
        if claude is not None:
            cenv = claude_env(tmp_path, server)
            variants["claude"] = lambda: run_claude(server, root, claude, cenv)
        for run in variants.values():
            run()  # warm the disk cache
        results: dict[str, list[Run]] = {name: [] for name in variants}
        for _ in range(args.runs):
            for name, run in variants.items():
                results[name].append(run())
    _report(results, args.runs)
    return 0


def _report(results: dict[str, list[Run]], runs: int) -> None:
    print(f"scripted task: {TURNS} zero-cost reads then an answer, {runs} runs each, in turn")
    for name, rs in results.items():
        print(
            f"  {name:16} start -> first request {_median([r.start_to_first_request for r in rs]):.3f} s"
            f"   per-turn gap {_median([r.gap for r in rs]) * 1000:.1f} ms"
            f"   first request {_median([r.first_request_bytes for r in rs]):.0f} bytes"
        )
    claude = results.get("claude")
    for name in (n for n in results if n != "claude" and not n.endswith("kernel")):
        mine = results[name]
        kernel = results.get(f"{name} kernel")
        print(f"{name} / Claude Code (median of per-pair ratios; target):")
        if claude is None:
            _issue_ratios(mine)
            continue
        pairs = list(zip(mine, claude, strict=True))
        start = _median([m.start_to_first_request / c.start_to_first_request for m, c in pairs])
        print(f"  start-up          {start:.2f}x   (<= {TARGETS['start']:.1f})")
        if kernel is not None:
            kpairs = list(zip(kernel, claude, strict=True))
            k = _median([m.start_to_first_request / c.start_to_first_request for m, c in kpairs])
            print(f"  first %%agent cell {k:.2f}x   (<= {TARGETS['kernel']:.1f})")
        gap = _median([m.gap / c.gap for m, c in pairs])
        print(f"  per-turn gap      {gap:.2f}x   (<= {TARGETS['gap']:.1f})")
        size = _median([m.first_request_bytes / c.first_request_bytes for m, c in pairs])
        print(f"  request bytes     {size:.2f}x   (<= {TARGETS['bytes']:.1f})")


def _issue_ratios(mine: list[Run]) -> None:
    """Without Claude Code here: against the issue's figures for it."""
    start = _median([r.start_to_first_request for r in mine]) / ISSUE_CLAUDE["start"]
    gap = _median([r.gap for r in mine]) / ISSUE_CLAUDE["gap"]
    print("  (claude not found: against issue 23's Claude Code figures; no request bytes)")
    print(f"  start-up          {start:.2f}x   (<= {TARGETS['start']:.1f})")
    print(f"  per-turn gap      {gap:.2f}x   (<= {TARGETS['gap']:.1f})")


if __name__ == "__main__":
    sys.exit(main())
