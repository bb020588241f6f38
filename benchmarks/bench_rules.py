"""Rule loading: time to load a config with N permission rules, end to end
(``.mewcode.yaml`` through the config loader, ``.claude/settings.json``
through the settings parser, into the project's gate), for growing N, and
the time of one decision with all of them.

Run by hand: ``python benchmarks/bench_rules.py [--rules 10000]``. Prints the
load time for N/4, N/2, N and 2N rules and the time per rule, which stays
flat when loading is linear (a quadratic load doubles it at each step).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from mewcode_kernel.core.config import load_config
from mewcode_kernel.core.messages import ToolUseBlock
from mewcode_kernel.core.permission import gate_for_project
from mewcode_kernel.core.tools import RunContext, bash, read_file


def _rules(n: int, offset: int = 0) -> list[str]:
    kinds = ("Bash(tool{}:*)", "Read(./dir{}/**)", "Edit(src/f{}.py)", "Bash(npm run t{})")
    return [kinds[i % 4].format(i + offset) for i in range(n)]


def _project(root: Path, n: int) -> None:
    half = n // 2
    rules = _rules(half)
    yaml = "permissions:\n  allow:\n" + "".join(f"    - '{r}'\n" for r in rules)
    (root / ".mewcode.yaml").write_text(yaml)
    (root / ".claude").mkdir()
    settings = {"permissions": {"deny": _rules(n - half, offset=half)}}
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))


def _load(root: Path) -> tuple[float, object]:
    start = time.perf_counter()
    config = load_config(root, home=root / "home", env={})
    gate = gate_for_project(root, config.permission_rules)
    return time.perf_counter() - start, gate


def main(n: int) -> None:
    print(f"{'rules':>8} {'load (s)':>10} {'µs/rule':>9}")
    gate = None
    for size in (n // 4, n // 2, n, 2 * n):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            _project(root, size)
            times = []
            for _ in range(3):
                elapsed, gate = _load(root)
                times.append(elapsed)
            best = min(times)
            assert len(gate.rules) == size, len(gate.rules)  # type: ignore[attr-defined]
            print(f"{size:>8} {best:>10.3f} {best / size * 1e6:>9.1f}")
            if size == n:
                ctx = RunContext(root=root)
                for tool, args in ((bash, {"command": "npm test"}), (read_file, {"path": "a.py"})):
                    call = ToolUseBlock(id="c", name=tool.name, input=args)
                    runs = []
                    for _ in range(5):
                        start = time.perf_counter()
                        gate.evaluate(call, tool, ctx)  # type: ignore[attr-defined]
                        runs.append(time.perf_counter() - start)
                    print(
                        f"         one {tool.name} decision with {size} rules: "
                        f"{statistics.median(runs) * 1000:.1f} ms"
                    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", type=int, default=10_000)
    main(parser.parse_args().rules)
