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
