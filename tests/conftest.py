from __future__ import annotations

import pytest

from mewcode_kernel.testing import PROVIDER_ENV_VARS
from tests._skip_policy import enforce
from tests._skip_policy import pytest_make_collect_report as pytest_make_collect_report

# skips only for a missing system package (tests/_skip_policy.py): a module
# skipped for anything else fails at collection, a test when it runs


@pytest.fixture(autouse=True)
def _no_real_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach a real model: keys, base URLs and MewCode settings from
    the developer's shell are removed, so only what a test sets up explicitly is used."""
    for var in PROVIDER_ENV_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def trusted_projects(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's projects are the user's own: their settings (a provider on a
    local test server, allow rules) apply without the one-time approval."""
    monkeypatch.setenv("MEWCODE_TRUST_PROJECT", "1")


@pytest.fixture
def comm_log(monkeypatch: pytest.MonkeyPatch):
    """Widgets made during the test open recording comms (no kernel needed);
    the fixture's value lists every comm message they sent."""
    import comm

    from tests._frontend import CommLog

    log = CommLog()
    monkeypatch.setattr(comm, "create_comm", log.create_comm)
    return log


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """Keep each phase's report on the test item (``item.rep_call``), so a
    fixture can save artifacts when its test failed; fail a skip the skip
    policy does not allow."""
    report = yield
    enforce(report)
    setattr(item, f"rep_{report.when}", report)
    return report
