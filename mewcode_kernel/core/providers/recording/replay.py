"""Record and replay raw HTTP exchanges with a model API, through the real SDKs.

Recording and replay both happen below the SDK, at the ``httpx2`` transport,
so a replayed run goes through exactly the code path of a live one::

    RecordingTransport(inner, path)   live: forward, store each exchange, save
    ReplayTransport(cassette)         offline: serve the exchanges in order,
                                      raise ReplayMismatch on any difference
    ReplayProvider.from_cassette(p)   the real Anthropic/OpenAI provider over a
                                      ReplayTransport, plus drift checks

The cassette format is documented in ``docs/cassettes.md``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import httpx2

from ...errors import ReplayMismatch
from ...events import ModelEvent
from .._retry import RetryPolicy, find_cause
from ..base import ModelRequest, Provider
from .cassette import Cassette, Interaction
from .transports import RecordingTransport, ReplayTransport

__all__ = [
    "DEMO_CASSETTE",
    "OFFLINE_HINT",
    "Cassette",
    "RecordingTransport",
    "ReplayProvider",
    "ReplayTransport",
    "make_http_client",
]

DEMO_CASSETTE = Path(__file__).resolve().parents[3] / "data" / "demo.cassette.json"
"""The bundled demo recording (package data), replayed when no API key is set."""

OFFLINE_HINT = (
    "No model is configured, so MewCode replays a recording offline ({source}), and a "
    "replay can only play the task that was recorded. To use a real model set "
    "ANTHROPIC_API_KEY or OPENAI_API_KEY (with OPENAI_BASE_URL for a local "
    "OpenAI-compatible server), or add a provider to .mewcode.yaml (protocol: openai, "
    "base_url: http://127.0.0.1:8000/v1, model: NAME); MEWCODE_CASSETTE plays another "
    "recording."
)
"""Said with a mismatch of the offline default replay: what to set instead."""

_ENDPOINTS: dict[str, tuple[str, str]] = {
    # protocol: (path suffix the SDK appends to its base URL, default base path)
    "anthropic": ("/v1/messages", ""),
    "openai": ("/chat/completions", "/v1"),
    "openai-responses": ("/responses", "/v1"),
}


def make_http_client(
    *,
    record_to: str | os.PathLike[str] | None = None,
    replay_from: str | os.PathLike[str] | Cassette | None = None,
    inner: httpx2.AsyncBaseTransport | None = None,
) -> httpx2.AsyncClient:
    """An ``httpx2.AsyncClient`` for a provider's ``http_client``.

    ``record_to``: forward to ``inner`` (default: a plain HTTP transport) and
    record to that cassette. ``replay_from``: serve from a cassette, offline.
    Neither: a plain client (over ``inner`` if given). Both: ``ValueError``.
    """
    if record_to is not None and replay_from is not None:
        raise ValueError("record_to and replay_from are exclusive")
    if replay_from is not None:
        if isinstance(replay_from, Cassette):
            cassette, source = replay_from, "cassette"
        else:
            cassette, source = Cassette.load(replay_from), Path(replay_from).name
        return httpx2.AsyncClient(transport=ReplayTransport(cassette, source=source))
    if record_to is not None:
        transport = RecordingTransport(inner or httpx2.AsyncHTTPTransport(), record_to)
        return httpx2.AsyncClient(transport=transport)
    return httpx2.AsyncClient(transport=inner) if inner is not None else httpx2.AsyncClient()


class ReplayProvider:
    """A real provider (Anthropic or OpenAI, per the cassette) replaying a cassette offline.

    ``stream`` delegates to the wrapped provider, so events come out of the
    same SDK and adapter code as in a live run; a request that differs from
    the recording surfaces as ``ReplayMismatch`` however the SDK wrapped it.
    ``aclose()`` (or leaving ``async with``) raises ``ReplayMismatch`` when
    recorded requests were left unused; ``unused`` lists them.
    """

    def __init__(
        self,
        inner: Provider,
        transport: ReplayTransport,
        client: httpx2.AsyncClient,
        *,
        name: str = "replay",
        cassette_path: Path | None = None,
        hint: str | None = None,
    ) -> None:
        self._inner = inner
        #: Added to a mismatch: what to do instead (set for the offline default).
        self.hint = hint
        self.transport = transport
        self._client = client
        self._name = name
        self.cassette_path = cassette_path
        self._closed = False

    @classmethod
    def from_cassette(
        cls,
        path: str | os.PathLike[str] = DEMO_CASSETTE,
        *,
        name: str = "replay",
        allow_reorder: bool = False,
        event_delay: float = 0.0,
        retry: RetryPolicy | None = None,
    ) -> ReplayProvider:
        """Load ``path`` and build the matching real provider over a ``ReplayTransport``.

        ``retry`` defaults to the live default policy without waiting, so a
        recorded failure is retried as it was when recorded, instantly.
        """
        p = Path(path)
        cassette = Cassette.load(p)
        transport = ReplayTransport(
            cassette, source=p.name, allow_reorder=allow_reorder, event_delay=event_delay
        )
        client = httpx2.AsyncClient(transport=transport)
        policy = retry or RetryPolicy(base_delay=0.0, max_delay=0.0, jitter=0.0)
        inner = _build_provider(cassette, name=name, http_client=client, retry=policy)
        return cls(inner, transport, client, name=name, cassette_path=p)

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._inner.model

    @property
    def cassette(self) -> Cassette:
        return self.transport.cassette

    @property
    def label(self) -> str:
        """For front ends: ``replay of demo.cassette.json (offline, recorded 2026-01-02)``."""
        source = self.cassette_path.name if self.cassette_path else self.transport.source
        date = self.cassette.recorded_at[:10] or "at an unknown date"
        return f"replay of {source} (offline, recorded {date})"

    @property
    def unused(self) -> list[Interaction]:
        """Recorded interactions not replayed yet."""
        return [i for _, i in self.transport.unused]

    def assert_all_used(self) -> None:
        """Raise ``ReplayMismatch`` if recorded requests were never made."""
        self.transport.assert_all_used()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        events = self._inner.stream(request)
        try:
            async for event in events:
                # The SDK reports a transport exception as a connection error, which
                # the provider would retry: stop at once, before the retry is announced.
                if self.transport.failure is not None:
                    raise ReplayMismatch(str(self.transport.failure))
                yield event
        except ReplayMismatch as exc:
            if self.hint is None:
                raise
            raise ReplayMismatch(f"{exc}\n{self.hint}") from exc
        except Exception as exc:
            mismatch = find_cause(exc, ReplayMismatch) or self.transport.failure
            if mismatch is None:
                raise
            text = str(mismatch) + (f"\n{self.hint}" if self.hint else "")
            raise ReplayMismatch(text) from exc
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()

    def close(self, *, check: bool = True) -> None:
        """Check for drift (sync). Prefer ``aclose``, which also closes the HTTP client."""
        self._closed = True
        if check and self.transport.failure is None:
            self.assert_all_used()

    async def aclose(self, *, check: bool = True) -> None:
        """Close the HTTP client, then check for drift unless ``check`` is false."""
        if not self._closed:
            await self._client.aclose()
        self.close(check=check)

    async def __aenter__(self) -> ReplayProvider:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        await self.aclose(check=exc_type is None)


def _build_provider(
    cassette: Cassette, *, name: str, http_client: httpx2.AsyncClient, retry: RetryPolicy
) -> Provider:
    """The live provider class for the cassette's protocol, configured as recorded."""
    first = cassette.interactions[0].request if cassette.interactions else None
    suffix, default_base = _ENDPOINTS[cassette.protocol]
    base_path = default_base
    if first is not None:
        bare = first.path.split("?", 1)[0]
        if bare.endswith(suffix):
            base_path = bare[: -len(suffix)]
    options: dict[str, Any] = {
        "name": name,
        "model": cassette.model,
        "api_key": "replay-offline",
        "base_url": "http://replay.invalid" + base_path,
        "http_client": http_client,
        "retry": retry,
    }
    recorded = _recorded_max_tokens(cassette.interactions)
    if recorded is not None:
        options["max_tokens"] = recorded[1]
    if cassette.protocol == "anthropic":
        from ..anthropic import AnthropicProvider

        return AnthropicProvider(**options)
    if cassette.protocol == "openai-responses":
        from ..openai_responses import OpenAIResponsesProvider

        options.pop("max_tokens", None)
        recorded_limit = _recorded_output_limit(cassette.interactions)
        if recorded_limit is not None:
            options["max_tokens"] = recorded_limit
        return OpenAIResponsesProvider(**options)
    from ..openai import OpenAIProvider

    if recorded is not None:  # api.openai.com gets max_completion_tokens, others max_tokens
        options["max_tokens_field"] = recorded[0]
    return OpenAIProvider(**options)


def _recorded_max_tokens(interactions: Iterable[Interaction]) -> tuple[Any, int] | None:
    """The provider's output limit when recorded, as (body field, value): the
    value most requests carried (one request may override it, e.g. a summary)."""
    seen: Counter[tuple[str, int]] = Counter()
    for interaction in interactions:
        body = interaction.request.body
        if isinstance(body, dict):
            for key in ("max_tokens", "max_completion_tokens"):
                value = body.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    seen[key, value] += 1
    return seen.most_common(1)[0][0] if seen else None


def _recorded_output_limit(interactions: Iterable[Interaction]) -> int | None:
    """The Responses ``max_output_tokens`` most requests carried, when recorded."""
    seen: Counter[int] = Counter()
    for interaction in interactions:
        body = interaction.request.body
        value = body.get("max_output_tokens") if isinstance(body, dict) else None
        if isinstance(value, int) and not isinstance(value, bool):
            seen[value] += 1
    return seen.most_common(1)[0][0] if seen else None
