"""Running the demo notebooks under nbval (``pytest --nbval``, on by default).

Each notebook's kernel starts with a ``mewcode`` kernelspec installed into a
temporary ``JUPYTER_PATH``, a temporary ``HOME`` (no user config or memory)
and no API keys, so it replays the cassette beside the notebook. Saved and
fresh outputs are compared after ``nbval_sanitize.cfg`` masks session ids and
times. After changing prompts or tools, refresh cassettes and outputs with
``python notebooks/record_cassettes.py``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

#: Removed from the environment the notebook kernels start with.
SCRUBBED = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "MEWCODE_PROVIDER",
    "MEWCODE_MODEL",
    "MEWCODE_HEADLESS_APPROVAL",
    "MEWCODE_ROOT",
    "MEWCODE_CASSETTE",
    "MEWCODE_RECORD",
    "MEWCODE_RENDERER",
)

_scratch: tempfile.TemporaryDirectory[str] | None = None


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "nbval_sanitize_with", "unset") is None:
        config.option.nbval_sanitize_with = str(HERE / "nbval_sanitize.cfg")


def _kernel_dirs() -> tuple[Path, Path]:
    """(JUPYTER_PATH with the kernelspec, HOME), made once per test run."""
    global _scratch
    if _scratch is None:
        _scratch = tempfile.TemporaryDirectory(prefix="mewcode-nbval-")
        subprocess.run(
            [sys.executable, "-m", "mewcode_kernel", "install", "--prefix", _scratch.name],
            check=True,
            capture_output=True,
        )
        (Path(_scratch.name) / "home").mkdir()
    base = Path(_scratch.name)
    return base / "share" / "jupyter", base / "home"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """nbval starts a notebook's kernel while setting up its first cell: give
    that kernel the kernelspec, a scratch HOME and no keys."""
    if item.path.suffix != ".ipynb":
        return (yield)
    jupyter_path, home = _kernel_dirs()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(jupyter_path))
        mp.setenv("HOME", str(home))
        for name in SCRUBBED:
            mp.delenv(name, raising=False)
        return (yield)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _scratch
    if _scratch is not None:
        _scratch.cleanup()
        _scratch = None
