"""What the benchmarks share: a project whose model is a local scripted server,
and the environment of the processes they start (no keys, no user config)."""

from __future__ import annotations

import os
from pathlib import Path

from mewcode_kernel.testing import scrubbed_env

CHECKOUT = Path(__file__).resolve().parents[1]

__all__ = ["bench_env", "scripted_project"]


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
