"""The skip policy (``tests/_skip_policy.py``) in a real pytest run: a test
or module skipped for anything but a missing system package, however the
skip is spelled, fails; one whose reason names its ``apt-get install`` line,
or a platform the suite does not run on, stays skipped."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests._skip_policy import PLATFORM, allowed

ROOT = Path(__file__).resolve().parent.parent
FAILED = ("failure", "error")

CONFTEST = """
from tests._skip_policy import pytest_make_collect_report, pytest_runtest_makereport
"""

TESTS = """
import unittest

import pytest


def test_fixture_missing():
    pytest.skip("fixture missing")


def test_declared_package_missing():
    pytest.importorskip("no_such_module_anywhere_0")


@pytest.mark.skipif(True, reason="pandas is not installed")
def test_skipif_marker():
    pass


@pytest.mark.skip(reason="later")
def test_skip_marker():
    pass


@pytest.mark.skip
def test_skip_marker_without_reason():
    pass


def test_unittest_skip():
    raise unittest.SkipTest("no data")


@pytest.fixture
def needs_data():
    pytest.skip("data not found")


def test_skip_in_a_fixture(needs_data):
    pass


@pytest.mark.parametrize("path", [])
def test_empty_parametrization(path):
    pass


def test_reason_that_only_mentions_apt():
    pytest.skip("apt-get is not the point here")


def test_system_package():
    pytest.skip("needs ripgrep: apt-get install -y ripgrep")


def test_platform():
    pytest.skip("no FIFOs here")


@pytest.mark.xfail(reason="known", strict=True)
def test_xfail_is_not_a_skip():
    assert False
"""

MODULE_SKIPPED_BADLY = """
import pytest

pytest.skip("fixture folder missing", allow_module_level=True)


def test_never_runs():
    pass
"""

MODULE_IMPORTORSKIP = """
import pytest

pytest.importorskip("no_such_module_anywhere_1")


def test_never_runs():
    pass
"""

MODULE_SKIPPED_FOR_A_PACKAGE = """
import pytest

pytest.skip("needs chromium: apt-get install -y chromium", allow_module_level=True)


def test_never_runs():
    pass
"""


def outcomes(folder: Path) -> dict[str, str]:
    """Run pytest on ``folder`` with the policy; ``{test or module: outcome}``."""
    report = folder / "report.xml"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
         "--continue-on-collection-errors", f"--junitxml={report}", str(folder)],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    found = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        name = case.get("name") or ""
        if kinds == ["skipped"] and case.find("skipped").get("type") == "pytest.xfail":  # type: ignore[union-attr]
            kinds = ["xfailed"]
        found[name] = kinds[0] if kinds else "passed"
    return found


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("policy")
    (folder / "conftest.py").write_text(CONFTEST)
    for name, body in [
        ("test_spellings.py", TESTS),
        ("test_module_skipped_badly.py", MODULE_SKIPPED_BADLY),
        ("test_module_importorskip.py", MODULE_IMPORTORSKIP),
        ("test_module_skipped_for_a_package.py", MODULE_SKIPPED_FOR_A_PACKAGE),
    ]:
        (folder / name).write_text(textwrap.dedent(body))
    return outcomes(folder)


@pytest.mark.parametrize(
    "name",
    [
        "test_fixture_missing",
        "test_declared_package_missing",
        "test_skipif_marker",
        "test_skip_marker",
        "test_skip_marker_without_reason",
        "test_unittest_skip",
        "test_empty_parametrization[NOTSET]",
        "test_reason_that_only_mentions_apt",
    ],
)
def test_a_skip_for_anything_but_a_system_package_fails(run: dict[str, str], name: str) -> None:
    # a skip in setup (a marker, a fixture) fails as an error of that test
    assert run[name] in FAILED, run


def test_a_skip_in_a_fixture_fails(run: dict[str, str]) -> None:
    assert run["test_skip_in_a_fixture"] in FAILED, run


def test_a_module_skipped_for_anything_but_a_system_package_fails(run: dict[str, str]) -> None:
    assert run["test_module_skipped_badly"] == "error", run
    assert run["test_module_importorskip"] == "error", run
    assert "test_never_runs" not in run or run["test_never_runs"] == "skipped"


def test_system_packages_and_platforms_stay_skipped(run: dict[str, str]) -> None:
    assert run["test_system_package"] == "skipped"
    assert run["test_platform"] == "skipped"
    assert run["test_xfail_is_not_a_skip"] == "xfailed"


def test_the_module_skipped_for_a_package_is_skipped(run: dict[str, str]) -> None:
    assert run.get("test_module_skipped_for_a_package") == "skipped", run


def test_the_allowed_reasons() -> None:
    assert allowed("needs git: apt-get install -y git")
    assert all(allowed(reason) for reason in PLATFORM)
    assert not allowed("no /proc on this system, or maybe")
    assert not allowed("could not import 'pandas': No module named 'pandas'")
    assert not allowed("got empty parameter set ['path']")
