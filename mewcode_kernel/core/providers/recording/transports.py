"""The two ``httpx2`` transports under record and replay.

``RecordingTransport`` forwards to a real transport and stores each exchange
in a cassette; ``ReplayTransport`` serves a cassette back, checking every
request against the recording. See ``replay`` for the provider on top.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2

from ...errors import ReplayMismatch
from .cassette import (
    SAFE_RESPONSE_HEADERS,
    Cassette,
    Interaction,
    Protocol,
    RecordedRequest,
    RecordedResponse,
    json_diff,
    mask_volatile,
    scrub,
)

__all__ = ["RecordingTransport", "ReplayTransport"]

_SECRET_HEADERS = ("x-api-key", "authorization", "api-key", "proxy-authorization")
# Headers the SDK must not see on a body we re-serve already decoded.
_FRAMING_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def _protocol_of(path: str) -> Protocol | None:
    bare = path.split("?", 1)[0]
    if bare.endswith("/chat/completions"):
        return "openai"
    if bare.endswith("/responses"):
        return "openai-responses"
    if "/messages" in bare:
        return "anthropic"
    return None


def _parse_body(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return raw.decode("utf-8", errors="replace")


def _header_secrets(request: httpx2.Request) -> tuple[str, ...]:
    found = []
    for name in _SECRET_HEADERS:
        value = request.headers.get(name)
        if value:
            found.append(value)
            if " " in value:  # "Bearer <key>"
                found.append(value.split(" ", 1)[1])
    return tuple(found)


class _BodyStream(httpx2.AsyncByteStream):
    """Serves a stored body event by event, then re-raises a recorded break."""

    def __init__(self, body: bytes, error: BaseException | None = None, delay: float = 0.0) -> None:
        self._body = body
        self._error = error
        self._delay = delay

    async def __aiter__(self) -> AsyncIterator[bytes]:
        parts = self._body.split(b"\n\n")
        for n, part in enumerate(parts):
            chunk = part + b"\n\n" if n < len(parts) - 1 else part
            if not chunk:
                continue
            if self._delay:
                await asyncio.sleep(self._delay)
            yield chunk
        if self._error is not None:
            raise self._error


class RecordingTransport(httpx2.AsyncBaseTransport):
    """Forwards every request to ``inner`` and appends the exchange to a cassette.

    Each response is read to its end (or to the point where the connection
    broke), saved, and handed to the SDK as a fresh response with the same
    bytes, so the SDK still parses it as a stream. The file is rewritten
    atomically after every exchange: a run that dies keeps what it recorded.
    Request headers are never stored; API keys are scrubbed from bodies. An
    existing file at ``cassette_path`` is replaced by the first exchange.
    Note: while recording, a response reaches the caller only once complete.
    """

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        cassette_path: str | os.PathLike[str],
        *,
        protocol: Protocol | None = None,
        model: str | None = None,
    ) -> None:
        self._inner = inner
        self.path = Path(cassette_path)
        self._protocol = protocol
        self._model = model
        self.cassette: Cassette | None = None
        self._lock = asyncio.Lock()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        secrets = _header_secrets(request)
        body = scrub(_parse_body(await request.aread()), secrets)
        path = request.url.raw_path.decode("ascii")
        response = await self._inner.handle_async_request(request)
        chunks: list[bytes] = []
        broke: httpx2.TransportError | None = None
        try:
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
        except httpx2.TransportError as exc:
            broke = exc
        finally:
            await response.aclose()
        content = b"".join(chunks)
        interaction = Interaction(
            request=RecordedRequest(method=request.method, path=path, body=body),
            response=RecordedResponse(
                status=response.status_code,
                headers={
                    k.lower(): v
                    for k, v in response.headers.items()
                    if k.lower() in SAFE_RESPONSE_HEADERS
                },
                body=scrub(content.decode("utf-8", errors="replace"), secrets),
                error=f"{type(broke).__name__}: {broke}" if broke else None,
            ),
        )
        await self._append(interaction)
        headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _FRAMING_HEADERS]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=_BodyStream(content, broke),
            request=request,
            extensions={"http_version": response.extensions.get("http_version", b"HTTP/1.1")},
        )

    async def _append(self, interaction: Interaction) -> None:
        async with self._lock:
            if self.cassette is None:
                body = interaction.request.body
                self.cassette = Cassette(
                    protocol=self._protocol
                    or _protocol_of(interaction.request.path)
                    or "anthropic",
                    model=self._model
                    or (str(body.get("model", "")) if isinstance(body, dict) else ""),
                )
            self.cassette.interactions.append(interaction)
            await asyncio.to_thread(self.cassette.save, self.path)

    async def aclose(self) -> None:
        await self._inner.aclose()


class ReplayTransport(httpx2.AsyncBaseTransport):
    """Serves a cassette's responses in order, checking each request against it.

    A request is compared with the next recorded one (method, path, and the
    parsed JSON body, scrubbed the same way, ``<environment>`` blocks masked
    on both sides); any difference, or a request past
    the end, raises ``ReplayMismatch`` with a readable diff. The failure is
    sticky: later requests (an SDK or provider retry) raise it again instead
    of consuming the recording. ``allow_reorder`` lets a request match a later
    unused interaction exactly (for concurrent requests, e.g. subagents).
    ``fast_retries`` zeroes recorded ``retry-after`` headers; ``event_delay``
    paces the served SSE events (for demos).
    """

    def __init__(
        self,
        cassette: Cassette,
        *,
        source: str = "cassette",
        allow_reorder: bool = False,
        fast_retries: bool = True,
        event_delay: float = 0.0,
    ) -> None:
        self.cassette = cassette
        self.source = source
        self.allow_reorder = allow_reorder
        self.fast_retries = fast_retries
        self.event_delay = event_delay
        self._used = [False] * len(cassette.interactions)
        self._received = 0
        self.failure: ReplayMismatch | None = None

    @property
    def unused(self) -> list[tuple[int, Interaction]]:
        """Recorded interactions not served yet, with their index."""
        return [(n, i) for n, i in enumerate(self.cassette.interactions) if not self._used[n]]

    def assert_all_used(self) -> None:
        """Raise ``ReplayMismatch`` listing the recorded requests never made (drift)."""
        left = self.unused
        if left:
            lines = [f"  #{n}: {i.describe()}" for n, i in left[:10]]
            if len(left) > 10:
                lines.append(f"  ... and {len(left) - 10} more")
            raise ReplayMismatch(
                f"{len(left)} recorded request(s) in {self.source} were never made "
                "(the run drifted from the recording):\n" + "\n".join(lines)
            )

    def _fail(self, message: str) -> ReplayMismatch:
        self.failure = ReplayMismatch(message)
        return self.failure

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.failure is not None:
            raise ReplayMismatch(str(self.failure))
        self._received += 1
        actual = RecordedRequest(
            method=request.method,
            path=request.url.raw_path.decode("ascii"),
            body=scrub(_parse_body(await request.aread()), _header_secrets(request)),
        )
        index = self._match(actual)
        interaction = self.cassette.interactions[index]
        self._used[index] = True
        return self._response(interaction.response, request)

    def _match(self, actual: RecordedRequest) -> int:
        head = f"request #{self._received} ({actual.method} {actual.path})"
        left = [n for n, used in enumerate(self._used) if not used]
        if not left:
            raise self._fail(
                f"cassette exhausted: {head} has no recording; {self.source} holds "
                f"{len(self._used)} interaction(s), all served{_tail(actual)}"
            )
        candidates = left if self.allow_reorder else left[:1]
        for n in candidates:
            if not _differences(self.cassette.interactions[n].request, actual):
                return n
        expected = self.cassette.interactions[left[0]].request
        lines = "\n".join(f"  {d}" for d in _differences(expected, actual))
        raise self._fail(f"{head} does not match interaction #{left[0]} of {self.source}:\n{lines}")

    def _response(self, recorded: RecordedResponse, request: httpx2.Request) -> httpx2.Response:
        headers = dict(recorded.headers)
        if self.fast_retries:
            for name in ("retry-after", "retry-after-ms"):
                if name in headers:
                    headers[name] = "0"
        error = _transport_error(recorded.error) if recorded.error else None
        return httpx2.Response(
            recorded.status,
            headers=headers,
            stream=_BodyStream(recorded.body.encode("utf-8"), error, self.event_delay),
            request=request,
            extensions={"http_version": b"HTTP/1.1"},
        )


def _transport_error(recorded: str) -> httpx2.TransportError:
    """The recorded break (``"ReadTimeout: ..."``) as the same ``httpx2`` exception."""
    name, _, message = recorded.partition(": ")
    cls = getattr(httpx2, name, None)
    if isinstance(cls, type) and issubclass(cls, httpx2.TransportError):
        return cls(message)
    return httpx2.RemoteProtocolError(recorded)


def _differences(expected: RecordedRequest, actual: RecordedRequest) -> list[str]:
    diffs = []
    if expected.method != actual.method:
        diffs.append(f"method: recorded {expected.method} != actual {actual.method}")
    if expected.path != actual.path:
        diffs.append(f"path: recorded {expected.path!r} != actual {actual.path!r}")
    return diffs + json_diff(mask_volatile(expected.body), mask_volatile(actual.body))


def _tail(actual: RecordedRequest) -> str:
    described = Interaction(request=actual, response=RecordedResponse(status=0)).describe()
    return f"; the request: {described}"
