"""MewCode's JupyterLab extension ships prebuilt, and JupyterLab finds it.

The TypeScript in ``frontend/`` is built (``frontend/build.py``: ``tsc`` and
``@jupyterlab/builder``) into ``magics/labextension``, which is committed:
a clone or a ``pip install`` needs no node. The build records a digest of
the sources it was made from; a source changed without rebuilding fails
here, as does a build with a file missing. A wheel puts the extension in
``share/jupyter/labextensions/mewcode-notebook``, where JupyterLab 4 looks
for prebuilt extensions (``pip install`` and ``pip install -e`` alike), and
JupyterLab's own discovery lists it from there.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from tests.test_package_data import copy_inputs, sdist_files

ROOT = Path(__file__).resolve().parent.parent
BUILT = ROOT / "magics" / "labextension"
NAME = "mewcode-notebook"


def _build_module():  # frontend/ is not a package: load its build script by path
    spec = importlib.util.spec_from_file_location("frontend_build", ROOT / "frontend" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_build_is_of_the_current_sources() -> None:
    stamp = BUILT / "source.sha256"
    assert stamp.is_file(), "magics/labextension is not built: python frontend/build.py"
    assert stamp.read_text().strip() == _build_module().source_digest(), (
        "frontend/ changed since magics/labextension was built: run python frontend/build.py "
        "and commit its output"
    )


def test_the_build_is_complete() -> None:
    meta = json.loads((BUILT / "package.json").read_text())
    assert meta["name"] == NAME
    load = meta["jupyterlab"]["_build"]["load"]
    assert (BUILT / load).is_file(), f"the build's entry point {load} is missing"
    chunks = [p for p in (BUILT / "static").glob("*.js") if p.name != Path(load).name]
    assert any("mewcode.notebook" in p.read_text() for p in chunks), "the plugin code is missing"
    assert json.loads((BUILT / "install.json").read_text())["packageName"] == "mewcode"


def test_an_install_puts_it_where_jupyterlab_finds_it(tmp_path: Path) -> None:
    """setuptools' ``install_data`` (what a wheel's ``.data/data`` holds, and
    what ``pip install`` and ``pip install -e`` copy under the prefix)."""
    (tmp_path / "source").mkdir()
    source = copy_inputs(ROOT, tmp_path / "source")
    prefix = tmp_path / "prefix"
    done = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q",
         "install_data", "--install-dir", str(prefix)],
        cwd=source, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    installed = prefix / "share" / "jupyter" / "labextensions" / NAME
    shipped = {p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file()}
    built = {p.relative_to(BUILT).as_posix() for p in BUILT.rglob("*") if p.is_file()}
    assert built - {"source.sha256"} <= shipped
    from jupyterlab_server.config import get_federated_extensions

    found = get_federated_extensions([str(prefix / "share" / "jupyter" / "labextensions")])
    assert NAME in found
    assert found[NAME]["install"]["packageName"] == "mewcode"


def test_an_editable_install_puts_it_where_jupyterlab_finds_it(tmp_path: Path) -> None:
    """``pip install -e`` (what CI runs). setuptools' own editable wheel leaves
    data files out; the in-tree backend (build_backend/) adds them as a
    regular wheel carries them. pip builds it as for a user (isolated build
    environment), into a scratch prefix; ``--ignore-installed``, or pip would
    first uninstall the MewCode installed in the environment running this."""
    (tmp_path / "source").mkdir()
    source = copy_inputs(ROOT, tmp_path / "source")
    prefix = tmp_path / "prefix"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-warn-script-location",
         "--ignore-installed", "--prefix", str(prefix), "-e", str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    installed = prefix / "share" / "jupyter" / "labextensions" / NAME
    shipped = {p.relative_to(installed).as_posix() for p in installed.rglob("*") if p.is_file()}
    built = {p.relative_to(BUILT).as_posix() for p in BUILT.rglob("*") if p.is_file()}
    assert built - {"source.sha256"} <= shipped
    from jupyterlab_server.config import get_federated_extensions

    found = get_federated_extensions([str(installed.parent)])
    assert found[NAME]["install"]["packageName"] == "mewcode"
    # pip recorded the files, so pip uninstall removes them
    [record] = prefix.rglob("mewcode-*.dist-info/RECORD")
    assert f"labextensions/{NAME}/package.json" in record.read_text()
    # the environment running the tests keeps its own install
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "show", "-q", "mewcode"], capture_output=True, timeout=60
    )
    assert listed.returncode == 0, "pip uninstalled the environment's mewcode"


def test_the_sdist_carries_the_build_backend(tmp_path: Path) -> None:
    """A wheel built from the sdist (pip off PyPI) needs the backend pyproject names."""
    (tmp_path / "source").mkdir()
    shipped = sdist_files(copy_inputs(ROOT, tmp_path / "source"), tmp_path / "dist")
    assert "build_backend/mewcode_build.py" in shipped
