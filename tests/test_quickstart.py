"""README's main job: the quickstart notebook, executed headless in the
``mewcode`` kernel by ``examples/run_notebook.py``, offline on its cassette."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests._kernel import REPO, install_kernelspec, kernel_env


def test_the_quickstart_notebook_runs_offline_and_prints_as_text(tmp_path: Path) -> None:
    jupyter_path = install_kernelspec(tmp_path / "prefix")
    env = kernel_env(tmp_path, JUPYTER_PATH=str(jupyter_path))
    notebook = REPO / "notebooks" / "quickstart.ipynb"
    before = notebook.read_bytes()
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "run_notebook.py"), str(notebook)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "Using replay of quickstart.cassette.json (offline" in out.stdout
    assert "✓ edit_file stats.py" in out.stdout
    assert "    if not xs:\n        return 0.0" in out.stdout
    assert notebook.read_bytes() == before  # the saved notebook is left as it was
