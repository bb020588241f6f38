"""The demo notebook ``data_analysis.ipynb`` under papermill, run from its
command line as a user would (the cassette replays, no key). Its third cell
raises on purpose and is tagged ``raises-exception``, the one tag nbval,
nbclient (``jupyter nbconvert --execute``) and papermill's executor all
honour: papermill runs every cell past it, the agent included. papermill
itself then exits 1 for any error output, whatever the cell's tags (2.7 has
no opt-out), so the test checks that the one error it names is that cell."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing import install_kernelspec, scrubbed_env

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
PAPERMILL = Path(sys.executable).parent / "papermill"


@pytest.fixture
def place() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="mewcode-papermill-"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def code_cells(notebook: Path) -> list[dict[str, Any]]:
    cells = json.loads(notebook.read_text())["cells"]
    return [c for c in cells if c["cell_type"] == "code"]


def errors(cell: dict[str, Any]) -> list[str]:
    return [o["ename"] for o in cell.get("outputs", []) if o["output_type"] == "error"]


def shown(output: dict[str, Any]) -> str:
    """An output's text as a plain-text reader sees it (nbformat may keep it as lines)."""
    text = output.get("text", output.get("data", {}).get("text/plain", ""))
    return "".join(text) if isinstance(text, list) else text


def test_the_intended_error_cell_carries_the_tag_every_runner_reads() -> None:
    tagged = [c for c in code_cells(NOTEBOOKS / "data_analysis.ipynb") if errors(c)]
    assert len(tagged) == 1
    assert "raises-exception" in tagged[0]["metadata"].get("tags", [])


def test_papermill_runs_the_data_analysis_notebook_through(place: Path) -> None:
    assert PAPERMILL.exists(), "papermill is in the test extra"
    home = place / "home"
    home.mkdir()
    out = place / "out.ipynb"
    env = scrubbed_env(
        JUPYTER_PATH=str(install_kernelspec(place / "prefix")),
        HOME=str(home),
        # the kernel runs this checkout's code, whatever an editable install points at
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    )
    run = subprocess.run(
        [str(PAPERMILL), "data_analysis.ipynb", str(out), "--cwd", str(NOTEBOOKS)],
        cwd=NOTEBOOKS,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    cells = code_cells(out)
    # every cell ran, in order: the tagged error did not stop the run
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1)), run.stderr
    failed = [(c["execution_count"], errors(c)) for c in cells if errors(c)]
    assert failed == [(3, ["ValueError"])], run.stderr
    assert "raises-exception" in cells[2]["metadata"]["tags"]
    # the agent read that error and fixed the helper: the check cell after it passes
    agent = "".join(shown(o) for o in cells[3]["outputs"])
    assert "last_error" in agent, agent
    assert not errors(cells[4])
    # papermill's own verdict on any error output: it names that cell, and only it
    assert run.returncode == 1
    assert 'Exception encountered at "In [3]"' in run.stderr, run.stderr[-2000:]
