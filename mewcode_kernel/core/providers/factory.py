"""Build a ``Provider`` from resolved ``ProviderSettings``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..config import ProviderSettings
from .base import Provider

__all__ = ["CASSETTE_ENV", "RECORD_ENV", "build_provider", "close_provider", "provider_label"]

CASSETTE_ENV = "MEWCODE_CASSETTE"
"""The cassette the offline ``replay`` provider plays (default: the bundled demo)."""
RECORD_ENV = "MEWCODE_RECORD"
"""Record a live provider's model traffic into this cassette file."""


def build_provider(
    settings: ProviderSettings,
    *,
    record_to: str | os.PathLike[str] | None = None,
    replay_from: str | os.PathLike[str] | None = None,
) -> Provider:
    """The live provider for ``settings``, or a replay.

    Settings with a ``problem`` (the default provider lacks its key) give an
    ``UnavailableProvider`` that reports it at the first request.
    ``replay_from`` (or the ``replay`` protocol) serves a recording offline
    through the real SDK code path; the ``replay`` protocol plays
    ``$MEWCODE_CASSETTE`` when set (relative to the working directory), else
    the bundled demo cassette. ``record_to`` (default ``$MEWCODE_RECORD``)
    records a live provider's exchanges into a cassette as they happen.
    """
    from .recording.replay import DEMO_CASSETTE, OFFLINE_HINT, ReplayProvider, make_http_client

    if replay_from is not None or settings.protocol == "replay":
        chosen = Path(replay_from or os.environ.get(CASSETTE_ENV) or DEMO_CASSETTE)
        # concurrent requests (background subagents) may arrive in another order
        provider = ReplayProvider.from_cassette(chosen, allow_reorder=True)
        if replay_from is None:  # the offline default, for want of a key
            provider.hint = OFFLINE_HINT.format(source=chosen.name)
        return provider
    if settings.problem is not None:
        from .unavailable import UnavailableProvider

        return UnavailableProvider(settings.name, settings.model, settings.problem)
    record_to = record_to or os.environ.get(RECORD_ENV) or None
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
    if settings.protocol == "openai-responses":
        from .openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(**kwargs, store=settings.store)
    from .openai import OpenAIProvider

    return OpenAIProvider(**kwargs)


def provider_label(provider: Provider) -> str:
    """How a front end names the provider: replays say they are replays."""
    label = getattr(provider, "label", None)
    return label if isinstance(label, str) else f"{provider.name} ({provider.model})"


async def close_provider(provider: Provider) -> None:
    """Close ``provider``'s HTTP client; a replay is closed without its drift check
    (it was switched away from, not finished)."""
    from .recording.replay import ReplayProvider

    if isinstance(provider, ReplayProvider):
        await provider.aclose(check=False)
        return
    closer = getattr(provider, "aclose", None)
    if closer is not None:
        await closer()
