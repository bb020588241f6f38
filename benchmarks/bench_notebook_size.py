"""Size of a saved 12-cell agent notebook (by hand).

Runs 12 live agent cells (``allow_stdin``: the widget renderer) in a fresh
``mewcode`` kernel against a scripted Anthropic-protocol server. Each turn
thinks, writes or edits a file or runs a command (approved with a click, as a
person would), and answers. The outputs are kept as JupyterLab keeps them and
saved with nbformat; prints the file size and which MIME types it holds.

    python benchmarks/bench_notebook_size.py [--out saved.ipynb] [--kernel-path OLD_CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import nbformat
from _project import bench_env, scripted_project
from jupyter_client.manager import KernelManager

from mewcode_kernel.testing import install_kernelspec
from mewcode_kernel.testing.outputs import CellOutputs
from mewcode_kernel.testing.wire import ScriptedServer, reply

CELLS = 12
CODE = "".join(f"def f{i}(x):\n    return x * {i}\n\n" for i in range(40))


def call_for(i: int) -> tuple[str, dict[str, Any]]:
    if i % 3 == 0:
        return ("write_file", {"path": f"mod{i}.py", "content": CODE})
    if i % 3 == 1:
        old = f"mod{i - 1}.py"
        return ("edit_file", {"path": old, "old_string": "x * 7", "new_string": "x * 7 + 1"})
    return ("bash", {"command": f"python -c 'print({i})'"})


def approve(kc: Any, msg: dict[str, Any]) -> bool:
    """Click Allow on an approval card (the old Button card or the current one)."""
    if msg["msg_type"] != "comm_open":
        return False
    state = msg["content"].get("data", {}).get("state", {})
    comm_id = msg["content"]["comm_id"]
    if "decided" in state:
        content = {"event": "decide", "choice": "allow", "note": "", "save": False}
    elif state.get("_model_name") == "ButtonModel" and state.get("description") == "Allow":
        content = {"event": "click"}
    else:
        return False
    data = {"comm_id": comm_id, "data": {"method": "custom", "content": content}}
    kc.shell_channel.send(kc.session.msg("comm_msg", data))
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--kernel-path",
        default=os.environ.get("PYTHONPATH"),
        help="PYTHONPATH for the kernel only (e.g. a checkout of older code, to compare)",
    )
    args = parser.parse_args()
    script = []
    for i in range(CELLS):
        script += [
            reply(
                thinking=f"Step {i}: decide what to change and check it. " * 3,
                text=f"Working on step {i}.",
                tool_calls=[call_for(i)],
            ),
            reply(text=f"Step {i} is done: the change is in place and checked. " * 4),
        ]
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(script) as server:
        tmp_path = Path(tmp)
        os.environ["JUPYTER_PATH"] = str(install_kernelspec(tmp_path / "prefix"))
        root = scripted_project(tmp_path, server.base_url)
        env = bench_env(tmp_path, args.kernel_path)
        km = KernelManager(kernel_name="mewcode")
        km.start_kernel(cwd=str(root), env=env)
        kc = km.client()
        kc.start_channels()
        notebook = nbformat.v4.new_notebook()
        try:
            kc.wait_for_ready(timeout=60)
            for i in range(CELLS):
                source = f"%%agent\nStep {i}, please."
                msg_id = kc.execute(source, allow_stdin=True)
                outputs = CellOutputs()
                while True:
                    msg = kc.get_iopub_msg(timeout=60)
                    if msg["parent_header"].get("msg_id") != msg_id:
                        continue
                    approve(kc, msg)
                    if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                        break
                    outputs.feed(msg)
                cell = nbformat.v4.new_code_cell(source)
                cell.outputs = [nbformat.from_dict(o) for o in outputs.outputs]
                notebook.cells.append(cell)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
        server.assert_all_used()
        out = args.out or tmp_path / "saved.ipynb"
        nbformat.write(notebook, out)
        size = out.stat().st_size
        kinds = Counter(
            k
            for c in json.loads(out.read_text())["cells"]
            for o in c["outputs"]
            for k in o.get("data", {})
        )
    print(f"saved {CELLS}-cell agent notebook: {size:,} bytes")
    print(
        "  MIME types in its outputs: " + ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items()))
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
