"""When a test may be skipped: only for a missing system package, and then
its reason names the ``apt-get install`` line that installs it; or on a
platform this suite does not run on (the reasons in ``PLATFORM``).

A skip for anything else (a committed fixture gone missing, a Python
package the ``test`` or ``browser`` extra declares, an ``importorskip``, an
empty parametrization) turns into a failure: a test that is skipped where
it should run passes without checking anything. ``tests/conftest.py``
applies this to every test and test module under ``tests/``.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

APT = "apt-get install -y "
# conditions of the machine, not packages: nothing to install
PLATFORM = frozenset(
    {
        "process checks read /proc",
        "no /proc on this system",
        "no seccomp filter on this architecture",
        "no FIFOs here",
    }
)


def allowed(reason: str) -> bool:
    return APT in reason or reason in PLATFORM


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def enforce(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Fail ``report`` if it is a skip this policy does not allow (xfail aside)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _reason(report)
    if not allowed(reason):
        report.outcome = "failed"
        report.longrepr = (
            f"skipped for a reason that is no missing system package: {reason!r}. "
            f"A committed fixture or a declared dependency must be there: fail instead; "
            f"a system package's skip names its line ({APT}...)"
        )


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    enforce(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    enforce(report)
    return report
