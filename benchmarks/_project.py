"""What the benchmarks share: a project whose model is a local scripted server,
and the environment of the processes they start (no keys, no user config)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mewcode_kernel.testing import scrubbed_env

CHECKOUT = Path(__file__).resolve().parents[1]

__all__ = ["bench_env", "cell_messages", "scripted_project", "started_kernel"]


def scripted_project(tmp_path: Path, base_url: str) -> Path:
    """``tmp_path/project`` with a ``.mewcode.yaml`` whose default provider is the
    Anthropic-protocol server at ``base_url``."""
    root = tmp_path / "project"
    root.mkdir()
    (root / ".mewcode.yaml").write_text(
        "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
        f"    model: test-model\n    base_url: {base_url}\n    api_key: sk-test\n"
    )
    return root


def bench_env(tmp_path: Path, pythonpath: str | None = None) -> dict[str, str]:
    """A scrubbed environment with its own home, the benchmark's own project
    trusted (its provider names a local server); ``PYTHONPATH`` (default: this
    process's, else this checkout, never whatever an editable install points
    at) decides which code the started process runs."""
    env = scrubbed_env(HOME=str(tmp_path / "home"), MEWCODE_TRUST_PROJECT="1")
    env["PYTHONPATH"] = pythonpath or os.environ.get("PYTHONPATH") or str(CHECKOUT)
    return env


@contextmanager
def started_kernel(root: Path, env: dict[str, str]) -> Iterator[Any]:
    """A client of a fresh ``mewcode`` kernel in ``root``, once it is ready;
    the kernel is shut down afterwards."""
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name="mewcode")
    km.start_kernel(cwd=str(root), env=env)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def cell_messages(kc: Any, msg_id: str, timeout: float) -> Iterator[dict[str, Any]]:
    """The iopub messages of the execution ``msg_id``, up to and including its
    ``idle`` status."""
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        yield msg
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return
