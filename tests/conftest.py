from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_real_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach a real model: keys and base URLs from the developer's
    shell are removed, so only what a test sets up explicitly is used."""
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "MEWCODE_PROVIDER",
        "MEWCODE_MODEL",
        "MEWCODE_HEADLESS_APPROVAL",
        "MEWCODE_ROOT",
    ):
        monkeypatch.delenv(var, raising=False)


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
    fixture can save artifacts when its test failed."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
