"""What the child sandbox of ``run_python`` costs, outside a kernel: a
trivial run with the sandbox active (patching in and out) against one
without, and one ``subprocess.run(['true'])`` inside the run (through
bubblewrap) against the same call unconfined.

Run by hand (needs bubblewrap): ``python benchmarks/bench_run_python_children.py``.
"""

from __future__ import annotations

import tempfile
from types import SimpleNamespace

from bench_kernel_tools import _median

from magics.kernel_tools.execution import run_code
from mewcode_kernel.core.config import SandboxSettings
from mewcode_kernel.core.sandbox import Sandbox


def main() -> None:
    root = tempfile.mkdtemp(prefix="bench-children-")
    box = Sandbox(root, SandboxSettings())
    if not box.active:
        raise SystemExit(f"the sandbox cannot run here: {box.support.reason}")
    shell = SimpleNamespace(user_ns={})
    spawn = "import subprocess\nsubprocess.run(['true'])"
    rows = [
        ("run_code('x = 1'), no sandbox", lambda: run_code(shell, "x = 1", timeout=30), 200),
        (
            "run_code('x = 1'), sandbox active",
            lambda: run_code(shell, "x = 1", timeout=30, sandbox=box),
            200,
        ),
        ("subprocess.run(['true']), unconfined", lambda: run_code(shell, spawn, timeout=30), 20),
        (
            "subprocess.run(['true']), in bubblewrap",
            lambda: run_code(shell, spawn, timeout=30, sandbox=box),
            20,
        ),
    ]
    for label, fn, repeat in rows:
        print(f"{label}: {_median(fn, repeat) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
