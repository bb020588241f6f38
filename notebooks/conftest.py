"""Running the demo notebooks under nbval (``pytest --nbval``, on by default).

Each notebook's kernel starts with a ``mewcode`` kernelspec installed into a
temporary ``JUPYTER_PATH``, a temporary ``HOME`` (no user config or memory)
and no API keys, so it replays the cassette beside the notebook. Saved and
fresh outputs are compared after ``nbval_sanitize.cfg`` masks session ids and
times. After changing prompts or tools, refresh cassettes and outputs with
``python notebooks/record_cassettes.py``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.testing import PROVIDER_ENV_VARS, install_kernelspec

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

_scratch: tempfile.TemporaryDirectory[str] | None = None
_dirs: tuple[Path, Path] | None = None


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "nbval_sanitize_with", "unset") is None:
        config.option.nbval_sanitize_with = str(HERE / "nbval_sanitize.cfg")


def _kernel_dirs() -> tuple[Path, Path]:
    """(JUPYTER_PATH with the kernelspec, HOME), made once per test run."""
    global _scratch, _dirs
    if _dirs is None:
        _scratch = tempfile.TemporaryDirectory(prefix="mewcode-nbval-")
        base = Path(_scratch.name)
        jupyter_path = install_kernelspec(base)
        (base / "home").mkdir()
        _dirs = jupyter_path, base / "home"
    return _dirs


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
        # the kernel runs this checkout's code, whatever an editable install points at
        mp.setenv(
            "PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
        )
        for name in PROVIDER_ENV_VARS:
            mp.delenv(name, raising=False)
        return (yield)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _scratch, _dirs
    if _scratch is not None:
        _scratch.cleanup()
        _scratch = None
        _dirs = None
