"""Retrying a provider stream: the policy and the loop both providers share.

What is retried
    HTTP 408, 429, 5xx (529 ``overloaded_error`` included) unless the server
    says ``x-should-retry: false``; connection errors and timeouts; a
    mid-stream error event whose type is transient (``overloaded_error``,
    ``rate_limit_error``, ``api_error``, ...); and a stream that ends before
    its protocol says it is complete (``StreamIncomplete``, raised by the
    provider's fold). Everything else (400 ``invalid_request_error``, 401,
    403, 404, ...) fails at once with ``ProviderError(retryable=False)`` that
    carries the server's own message. After the last attempt the error is
    ``ProviderError(retryable=True, attempts=n)``.

When a stream is complete (decided by each provider's fold)
    Anthropic Messages: ``message_stop`` was seen, or a ``message_delta``
    carrying a ``stop_reason`` was (``message_stop`` carries nothing more, and
    a body cut right before it has lost no content). OpenAI Chat Completions:
    a choice carried a ``finish_reason``, or the usage chunk arrived (we always
    ask for ``stream_options.include_usage``, and servers send it last). The
    SDK swallows ``data: [DONE]``, so it cannot be observed directly.

The contract for consumers (the agent loop)
    Nothing is buffered: deltas are passed on as they arrive, so a failed
    attempt may already have yielded ``TextDelta``/``ThinkingDelta``/
    ``ToolCallStarted`` events. Before every retry a ``RetryScheduled`` event
    is yielded; on it, a consumer discards everything it accumulated from
    this stream so far (partial text, thinking, announced tool calls) and
    starts over. Only ``ResponseDone`` is authoritative: its ``message`` is
    built from the successful attempt alone, so it never holds duplicated
    text. ``RetryScheduled.attempt`` is the number of the attempt about to be
    made (2..max_attempts).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TypeVar

import httpx2

from ..errors import MewcodeError, ProviderError
from ..events import ModelEvent, RetryScheduled

__all__ = [
    "Failure",
    "RetryPolicy",
    "StreamIncomplete",
    "classify_common",
    "find_cause",
    "scrub",
    "status_failure",
    "stream_error_failure",
    "stream_with_retry",
]

_TRANSIENT_ERROR_TYPES = frozenset(
    {
        "overloaded_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "api_error",
        "server_error",
        "timeout_error",
        "service_unavailable",
        "internal_server_error",
    }
)
_MAX_MESSAGE = 500

_E = TypeVar("_E", bound=BaseException)


async def _sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryPolicy:
    """How often and how long to wait. ``sleep`` and ``rng`` are injectable for tests.

    The delay after failed attempt ``n`` is ``base_delay * 2**(n-1)``, capped at
    ``max_delay`` and shortened by up to ``jitter`` (a fraction) at random. A
    server's ``retry-after``/``retry-after-ms`` header replaces that, capped at
    ``max_delay`` too.
    """

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.25
    sleep: Callable[[float], Awaitable[None]] = field(default=_sleep, repr=False, compare=False)
    rng: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError("jitter must be between 0 and 1")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        backoff = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return backoff * (1.0 - self.jitter * self.rng())


@dataclass(frozen=True, kw_only=True, slots=True)
class Failure:
    """One failed attempt, as a provider's classifier sees it."""

    message: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None


class StreamIncomplete(Exception):
    """The response body ended before the protocol's end marker."""


def scrub(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` masked, shortened to a readable length."""
    if secret and len(secret) >= 6:
        text = text.replace(secret, "***")
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _describe(prefix: str, error_type: str | None, message: str | None) -> str:
    label = f"{prefix} {error_type}" if error_type else prefix
    text = (message or "").strip()
    return f"{label}: {text}" if text else label


def _retry_after(headers: Mapping[str, str]) -> float | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms:
        try:
            return float(raw_ms) / 1000.0
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def status_failure(
    status: int,
    error_type: str | None,
    message: str | None,
    headers: Mapping[str, str] | None = None,
) -> Failure:
    """An HTTP error status, classified."""
    headers = headers or {}
    retryable = status in (408, 429) or status >= 500
    should = {k.lower(): v for k, v in headers.items()}.get("x-should-retry")
    if should == "true":
        retryable = True
    elif should == "false":
        retryable = False
    return Failure(
        message=_describe(f"HTTP {status}", error_type, message),
        retryable=retryable,
        status=status,
        retry_after=_retry_after(headers) if retryable else None,
    )


def stream_error_failure(
    error_type: str | None, message: str | None, code: object = None
) -> Failure:
    """An error event inside a 200 stream; ``code`` may be an HTTP-like status."""
    status = code if isinstance(code, int) else None
    if isinstance(code, str) and code.isdigit():
        status = int(code)
    transient = (error_type or "") in _TRANSIENT_ERROR_TYPES
    if status is not None and (status in (408, 429) or status >= 500):
        transient = True
    prefix = "stream error" if status is None else f"stream error {status}"
    return Failure(
        message=_describe(prefix, error_type, message), retryable=transient, status=status
    )


def classify_common(exc: BaseException) -> Failure | None:
    """Failures that look the same whichever SDK is underneath."""
    if isinstance(exc, StreamIncomplete):
        return Failure(message=f"incomplete stream: {exc}", retryable=True)
    if isinstance(exc, httpx2.TimeoutException):
        return Failure(message=f"timeout ({type(exc).__name__})", retryable=True)
    if isinstance(exc, httpx2.TransportError):
        detail = str(exc) or type(exc).__name__
        return Failure(message=f"connection error: {detail}", retryable=True)
    if isinstance(exc, json.JSONDecodeError):
        return Failure(message=f"malformed event in the stream: {exc}", retryable=True)
    return None


async def stream_with_retry(
    *,
    provider: str,
    policy: RetryPolicy,
    attempt: Callable[[], AsyncGenerator[ModelEvent, None]],
    classify: Callable[[Exception], Failure | None],
    secret: str | None = None,
) -> AsyncIterator[ModelEvent]:
    """Run ``attempt()`` until it completes, yielding its events and a
    ``RetryScheduled`` before each new try (see the module docstring).

    ``classify`` maps an exception to a ``Failure``; ``None`` means "not a
    provider failure" and the exception propagates untouched (bugs stay bugs).
    ``secret`` (the API key) is masked in every message this produces.
    """
    for n in range(1, policy.max_attempts + 1):
        try:
            async with aclosing(attempt()) as events:
                async for event in events:
                    yield event
            return
        except ProviderError:
            raise
        except Exception as exc:
            # Our own transports (replay) raise MewcodeErrors that the SDKs wrap as
            # connection errors; they are final, never a reason to retry.
            own = find_cause(exc, MewcodeError)
            if own is not None:
                raise own from None
            failure = classify(exc)
            if failure is None:
                raise
            reason = scrub(failure.message, secret)
            # Chain the SDK error for debugging unless its text holds the key.
            cause = None if secret and secret in str(exc) else exc
            if not failure.retryable:
                raise ProviderError(
                    f"{provider}: {reason}",
                    status=failure.status,
                    retryable=False,
                    attempts=n,
                ) from cause
            if n >= policy.max_attempts:
                raise ProviderError(
                    f"{provider}: gave up after {n} attempts: {reason}",
                    status=failure.status,
                    retryable=True,
                    attempts=n,
                ) from cause
            delay = policy.delay(n, failure.retry_after)
        yield RetryScheduled(
            attempt=n + 1,
            max_attempts=policy.max_attempts,
            delay=delay,
            reason=reason,
            status=failure.status,
        )
        await policy.sleep(delay)


def find_cause(exc: BaseException, kind: type[_E]) -> _E | None:
    """The first ``kind`` in ``exc``'s chain (``exc`` itself, then its
    ``__cause__`` or else ``__context__``, and so on), or ``None``."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, kind):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None
