"""Importing the SDK of the provider in use ahead of time (``warm_up``).

The SDKs take seconds to import (``anthropic``: ~3,000 modules). A front end
that knows it will need one soon, such as the kernel once it is ready, calls
``warm_up`` in a background thread so the first turn does not pay for it.
Only the provider that would be used is imported, and then rehearsed: one
request streamed offline (``rehearsal.rehearse``) loads what the SDK would
otherwise load during the first real request and response.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from ..config import ProviderSettings

__all__ = ["provider_module", "warm_up"]


def provider_module(settings: ProviderSettings) -> str:
    """The module that talks to ``settings``' provider (for a replay: to the
    protocol of the cassette it plays)."""
    protocol = settings.protocol
    if protocol == "replay":
        from .factory import CASSETTE_ENV
        from .recording.replay import DEMO_CASSETTE, Cassette

        cassette = Path(os.environ.get(CASSETTE_ENV) or DEMO_CASSETTE)
        protocol = Cassette.load(cassette).protocol
    return f"{__package__}.{protocol}"


def warm_up(settings: ProviderSettings) -> str:
    """Import the provider module (and so its SDK) ``settings`` would use and
    rehearse a request through it, offline; returns its name. Blocking: for a
    thread without an event loop."""
    from .rehearsal import rehearse

    name = provider_module(settings)
    importlib.import_module(name)
    rehearse(name.rpartition(".")[2])
    return name
