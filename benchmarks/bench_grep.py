"""Benchmark the grep tool: via ripgrep, via pure Python, against raw ``rg``.

Run by hand (not a test)::

    python benchmarks/bench_grep.py [--repeat N] [--rebuild]

The first run builds a tree of ~22k files under ``benchmarks/.data/`` (mixed
sizes, some binaries, a .gitignore excluding a large subtree, a ``.git``
directory) and reuses it afterwards. Each case is timed as the best of N
warm, interleaved runs; ratios are against raw ``rg`` run with the same flags the tool
uses (so they measure the tool's own overhead), and plain ``rg`` is shown too.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mewcode_kernel.core.tools import RunContext
from mewcode_kernel.core.tools.grep_tool import grep_text
from mewcode_kernel.core.tools.search.ignore import SearchScope
from mewcode_kernel.core.tools.search.query import FileFilter, GrepQuery, compile_pattern
from mewcode_kernel.core.tools.search.rg_engine import rg_args

DATA = Path(__file__).resolve().parent / ".data"
TREE = DATA / "tree"
VERSION = "1"

WORDS = (
    "self return value result import from class def async await none true false if else "
    "for while try except raise with yield lambda config handler request response error "
    "data item key name path file line text token buffer index count total state event"
).split()

CASES: list[dict[str, Any]] = [
    {"pattern": "NEEDLE_RARE"},
    {"pattern": "import"},
    {"pattern": r"def \w+_handler\(", "output_mode": "content"},
    {"pattern": "todo", "case_insensitive": True, "output_mode": "count"},
    {"pattern": r"class \w+Error", "glob": "*.py"},
    {"pattern": r"raise \w+Error\(", "output_mode": "content", "context": 2, "head_limit": 100},
]


def build_tree(rebuild: bool) -> int:
    """Create the tree once; return its file count."""
    marker = TREE / ".bench-version"
    if not rebuild and marker.exists() and marker.read_text() == VERSION:
        return sum(1 for p in TREE.rglob("*") if p.is_file())
    if TREE.exists():
        shutil.rmtree(TREE)
    rng = random.Random(42)
    count = 0
    (TREE / ".git").mkdir(parents=True)
    (TREE / ".git" / "HEAD").write_text("ref: refs/heads/main\nimport\n")
    (TREE / ".gitignore").write_text("build/\n*.log\nnode_modules/\n!keep.log\n")
    for d in range(420):
        pkg = TREE / f"pkg{d // 20:02}" / f"mod{d:03}"
        pkg.mkdir(parents=True, exist_ok=True)
        for f in range(50):
            ext = rng.choice([".py", ".py", ".py", ".ts", ".md", ".txt", ".json"])
            size = rng.choice([20, 40, 80, 150, 300]) if rng.random() > 0.02 else 4000
            _write_text(pkg / f"file{f:02}{ext}", size, rng)
            count += 1
        if d % 7 == 0:
            (pkg / "blob.bin").write_bytes(
                bytes(rng.randrange(256) for _ in range(4096)) + b"\0import"
            )
            (pkg / "run.log").write_text("import\n" * 50)
            count += 2
    for i in range(2000):  # ignored subtrees: pruned by both engines
        sub = TREE / ("build" if i % 2 else "node_modules") / f"d{i % 40}"
        sub.mkdir(parents=True, exist_ok=True)
        _write_text(sub / f"gen{i}.py", 80, rng)
        count += 1
    marker.write_text(VERSION)
    return count + 3


def _write_text(path: Path, lines: int, rng: random.Random) -> None:
    out = []
    for n in range(lines):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(3, 12)))
        roll = rng.random()
        if roll < 0.01:
            out.append(f"def {rng.choice(WORDS)}_handler(request):")
        elif roll < 0.015:
            out.append(f"    raise {rng.choice(WORDS).title()}Error('{words}')")
        elif roll < 0.018:
            out.append(f"class {rng.choice(WORDS).title()}Error(Exception):")
        elif roll < 0.02:
            out.append(f"    # TODO: {words}")
        else:
            out.append("    " * (n % 4) + words)
    if rng.random() < 0.003:
        out.append("NEEDLE_RARE = 1")
    path.write_text("\n".join(out) + "\n")


def _time(fns: dict[str, Any], repeat: int) -> dict[str, float]:
    """Best wall time of each function over ``repeat`` interleaved rounds
    (interleaving and the minimum damp noise from other load on the host)."""
    for fn in fns.values():
        fn()  # warm-up: page cache, imports, re cache
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def _raw_rg_argv(rg: str, case: dict[str, Any]) -> list[str]:
    mode = case.get("output_mode", "files_with_matches")
    compiled = compile_pattern(case["pattern"], case.get("case_insensitive", False))
    query = GrepQuery(
        pattern=case["pattern"],
        regex=compiled.regex,
        ignore_case=case.get("case_insensitive", False),
        mode=mode,
        context=case.get("context", 0),
        scope=SearchScope.for_dir(TREE, TREE),
        file_filter=FileFilter.parse(case["glob"]) if "glob" in case else None,
    )
    return [rg, *rg_args(query)]


def _plain_rg_argv(rg: str, case: dict[str, Any]) -> list[str]:
    argv = [rg]
    mode = case.get("output_mode", "files_with_matches")
    argv += {"files_with_matches": ["-l"], "count": ["-c"], "content": ["-n"]}[mode]
    if case.get("case_insensitive"):
        argv.append("-i")
    if "glob" in case:
        argv += ["-g", case["glob"]]
    if case.get("context"):
        argv += ["-C", str(case["context"])]
    return [*argv, "-e", case["pattern"], "."]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true")
    opts = parser.parse_args()
    rg = shutil.which("rg")
    if rg is None:
        sys.exit("ripgrep (rg) is not on PATH; install it to run this benchmark")
    t0 = time.perf_counter()
    files = build_tree(opts.rebuild)
    print(f"tree: {TREE} ({files} files, ready in {time.perf_counter() - t0:.1f}s)")
    print(
        f"rg: {subprocess.run([rg, '--version'], capture_output=True, text=True).stdout.splitlines()[0]}"
    )
    ctx = RunContext(root=TREE)
    loop = asyncio.new_event_loop()

    def tool(use_rg: bool, case: dict[str, Any]) -> str:
        return loop.run_until_complete(grep_text(ctx, use_rg=use_rg, **case))

    header = f"{'case':<58} {'rg':>7} {'plain':>7} {'tool+rg':>8} {'python':>8} {'tool/rg':>8} {'py/rg':>7}"
    print(header)
    print("-" * len(header))
    for case in CASES:
        raw = _raw_rg_argv(rg, case)
        plain = _plain_rg_argv(rg, case)
        assert tool(True, case) == tool(False, case), f"engines disagree on {case}"
        t = _time(
            {
                "rg": lambda argv=raw: subprocess.run(argv, cwd=TREE, capture_output=True),
                "plain": lambda argv=plain: subprocess.run(argv, cwd=TREE, capture_output=True),
                "tool": lambda c=case: tool(True, c),
                "python": lambda c=case: tool(False, c),
            },
            opts.repeat,
        )
        t_rg, t_plain, t_tool, t_py = t["rg"], t["plain"], t["tool"], t["python"]
        label = ", ".join(f"{k}={v!r}" for k, v in case.items())[:58]
        print(
            f"{label:<58} {t_rg * 1000:6.0f}ms {t_plain * 1000:5.0f}ms {t_tool * 1000:6.0f}ms "
            f"{t_py * 1000:6.0f}ms {t_tool / t_rg:7.2f}x {t_py / t_rg:6.1f}x"
        )
    loop.close()


if __name__ == "__main__":
    main()
