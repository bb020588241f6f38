"""Build a ``Provider`` from resolved ``ProviderSettings``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..config import ProviderSettings
from .base import Provider

__all__ = ["build_provider", "provider_label"]


def build_provider(
    settings: ProviderSettings,
    *,
    record_to: str | os.PathLike[str] | None = None,
    replay_from: str | os.PathLike[str] | None = None,
) -> Provider:
    """The live provider for ``settings``, or a replay.

    ``replay_from`` (or the ``replay`` protocol, which defaults to the bundled
    demo cassette) serves a recording offline through the real SDK code path;
    ``record_to`` records the live exchanges into a cassette as they happen.
    """
    from .replay import DEMO_CASSETTE, ReplayProvider, make_http_client

    if replay_from is not None or settings.protocol == "replay":
        return ReplayProvider.from_cassette(Path(replay_from or DEMO_CASSETTE))
    kwargs: dict[str, Any] = {
        "name": settings.name,
        "model": settings.model,
        "api_key": settings.api_key.get_secret_value() if settings.api_key else None,
        "base_url": settings.base_url,
    }
    if settings.max_tokens:
        kwargs["max_tokens"] = settings.max_tokens
    if record_to is not None:
        kwargs["http_client"] = make_http_client(record_to=record_to)
    if settings.protocol == "anthropic":
        from .anthropic import AnthropicProvider

        return AnthropicProvider(**kwargs)
    from .openai import OpenAIProvider

    return OpenAIProvider(**kwargs)


def provider_label(provider: Provider) -> str:
    """How a front end names the provider: replays say they are replays."""
    label = getattr(provider, "label", None)
    return label if isinstance(label, str) else f"{provider.name} ({provider.model})"
