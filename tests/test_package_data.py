"""An installed MewCode holds the data files it reads at run time.

Setuptools builds the package from a copy of the repository's packaging
inputs (``pyproject.toml``, ``README.md``, the packages): ``build_py``, what
a wheel installs, and ``sdist``, what a wheel is built from off PyPI. Both
must hold every file the code reads (the demo cassette, the built-in
subagents, the cards' scripts and styles) and every other non-Python file of
the packages: a data file added where the ``package-data`` globs do not
reach, or a glob narrowed, fails here, as does a data file gone missing.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from magics._live import assets
from mewcode_kernel.core.providers.recording.replay import DEMO_CASSETTE

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mewcode_kernel", "magics")
INPUTS = ("pyproject.toml", "README.md", "MANIFEST.in")
BACKEND = "build_backend"  # the in-tree build backend (pyproject.toml's backend-path)

# what the code reads from its own package, relative to the repository
READ_AT_RUN_TIME = (
    "mewcode_kernel/data/demo.cassette.json",  # DEMO_CASSETTE: the offline demo, the warm-up
    "mewcode_kernel/data/agents/Explore.md",  # the built-in subagents (subagents.catalog)
    "mewcode_kernel/data/agents/Plan.md",
    "mewcode_kernel/data/agents/general-purpose.md",
    "magics/_live/static/common.js",  # what every card's widget shares
    "magics/_live/static/common.css",
    "magics/_live/static/card.js",  # the approval card's widget
    "magics/_live/static/card.css",
    "magics/_live/static/revert.js",  # the revert card's widget
    "magics/_live/static/revert.css",
    "magics/_live/static/trust.js",  # the trust card's widget
    "magics/_live/static/trust.css",
    "magics/_live/static/board.js",  # the task board's widget
    "magics/_live/static/board.css",
)


def data_files(root: Path) -> set[str]:
    """The packages' non-Python files under ``root`` (bytecode caches aside)."""
    found = set()
    for package in PACKAGES:
        for path in (root / package).rglob("*"):
            rel = path.relative_to(root)
            if path.is_file() and path.suffix != ".py" and "__pycache__" not in rel.parts:
                found.add(rel.as_posix())
    return found


def copy_inputs(root: Path, to: Path) -> Path:
    for name in INPUTS:
        shutil.copy2(root / name, to / name)
    for package in PACKAGES:
        shutil.copytree(root / package, to / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(root / BACKEND, to / BACKEND, ignore=shutil.ignore_patterns("__pycache__"))
    return to


def _setup(source: Path, *command: str) -> None:
    # setup() reads the [project] and [tool.setuptools] tables of pyproject.toml
    done = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q", *command],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def installed_files(source: Path, out: Path) -> set[str]:
    """What a wheel built from ``source`` installs (``build_py``'s output), relative."""
    _setup(source, "build_py", "--build-lib", str(out))
    return {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}


def sdist_files(source: Path, out: Path) -> set[str]:
    """The files of the sdist built from ``source``, relative to its top folder."""
    _setup(source, "sdist", "--formats=gztar", "--dist-dir", str(out))
    [archive] = out.glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        names = [m.name for m in tar.getmembers() if m.isfile()]
    return {name.split("/", 1)[1] for name in names}


def unshipped(source: Path, shipped: set[str]) -> list[str]:
    """What the code reads, or the packages hold, that ``shipped`` lacks."""
    wanted = set(READ_AT_RUN_TIME) | data_files(source)
    return sorted(wanted - shipped)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_inputs(ROOT, tmp_path_factory.mktemp("source"))


def test_the_files_read_at_run_time_are_where_the_code_reads_them() -> None:
    assert DEMO_CASSETTE == ROOT / READ_AT_RUN_TIME[0]
    assert assets._STATIC == ROOT / "magics/_live/static"
    missing = [rel for rel in READ_AT_RUN_TIME if not (ROOT / rel).is_file()]
    assert not missing, f"data files missing from the repository: {missing}"
    # every built-in subagent the catalog loads is listed above
    agents = (ROOT / "mewcode_kernel/data/agents").glob("*.md")
    assert {p.relative_to(ROOT).as_posix() for p in agents} <= set(READ_AT_RUN_TIME)


def test_a_wheel_installs_every_data_file(source: Path, tmp_path: Path) -> None:
    shipped = installed_files(source, tmp_path / "build")
    assert "mewcode_kernel/core/agent_session.py" in shipped  # the build did run
    assert unshipped(source, shipped) == []


def test_the_sdist_holds_every_data_file(source: Path, tmp_path: Path) -> None:
    shipped = sdist_files(source, tmp_path / "dist")
    assert "pyproject.toml" in shipped and "mewcode_kernel/__init__.py" in shipped
    assert unshipped(source, shipped) == []


# --- the check fails when the data is not shipped ----------------------------------------


def _fresh(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    return copy_inputs(ROOT, tmp_path / "src")


def test_a_missing_data_file_fails(tmp_path: Path) -> None:
    src = _fresh(tmp_path)
    for rel in ("mewcode_kernel/data/demo.cassette.json", "magics/_live/static/card.js"):
        (src / rel).unlink()
    shipped = installed_files(src, tmp_path / "build")
    assert unshipped(src, shipped) == [
        "magics/_live/static/card.js",
        "mewcode_kernel/data/demo.cassette.json",
    ]


def test_a_narrowed_package_data_glob_fails(tmp_path: Path) -> None:
    src = _fresh(tmp_path)
    pyproject = src / "pyproject.toml"
    text = pyproject.read_text()
    assert 'mewcode_kernel = ["data/*", "data/**/*"]' in text
    pyproject.write_text(text.replace('"data/*", "data/**/*"', '"data/*.json"'))
    shipped = installed_files(src, tmp_path / "build")
    assert unshipped(src, shipped) == [
        "mewcode_kernel/data/agents/Explore.md",
        "mewcode_kernel/data/agents/Plan.md",
        "mewcode_kernel/data/agents/general-purpose.md",
    ]


@pytest.mark.parametrize(
    "rel",
    [
        "magics/_live/templates/row.html",  # a folder no glob names
        "magics/_live/static/nested/icon.svg",  # "static/*" is one level deep
        "mewcode_kernel/core/prompt/system.md",  # beside the code
        "mewcode_kernel/data/.hidden.json",
    ],
)
def test_a_data_file_the_globs_do_not_reach_fails(tmp_path: Path, rel: str) -> None:
    src = _fresh(tmp_path)
    (src / rel).parent.mkdir(parents=True, exist_ok=True)
    (src / rel).write_text("{}\n")
    shipped = installed_files(src, tmp_path / "build")
    assert rel not in shipped
    assert unshipped(src, shipped) == [rel]
