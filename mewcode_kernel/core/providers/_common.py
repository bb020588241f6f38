"""What the SDK-backed providers (Anthropic, OpenAI) share.

* ``get_field``: read a field of a stream event whether the SDK gave an
  object or a recorded transcript gave a plain dict;
* ``parse_tool_arguments``: a tool call's JSON arguments, or the error the
  model is shown when they are cut off or not an object;
* ``fold_all``: a whole recorded stream through a provider's fold;
* ``fold_sdk_stream``: one attempt, an SDK stream fed through a provider's fold;
* ``classify_connection``: the SDK's timeout, connection and response-validation
  errors as retry ``Failure``s;
* ``SdkProvider``: the class plumbing (settings, ``repr`` without the key,
  the SDK client created on first use, ``stream`` through ``stream_with_retry``);
* ``freeze_gc_at_exit``: keeps the SDKs' object graphs from slowing exit.

No SDK is imported here: each provider module imports its own and passes
its classes in.
"""

from __future__ import annotations

import atexit
import gc
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import aclosing
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import httpx2

from ..errors import ProviderError
from ..events import ModelEvent, ResponseDone
from ._retry import Failure, RetryPolicy, classify_common, scrub, stream_with_retry
from .base import Labelled, ModelRequest

__all__ = [
    "REASONING_SIGNATURE",
    "SdkProvider",
    "classify_connection",
    "fold_all",
    "fold_sdk_stream",
    "freeze_gc_at_exit",
    "get_field",
    "parse_tool_arguments",
]

ClientT = TypeVar("ClientT")

REASONING_SIGNATURE = "openai-responses:"
"""How a ``ThinkingBlock.signature`` that holds an OpenAI Responses reasoning
item starts: only that provider sends it back, the others leave it out."""


def get_field(obj: Any, key: str) -> Any:
    """``obj[key]`` for a mapping, else the attribute ``key``; ``None`` when absent."""
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def parse_tool_arguments(name: str, raw: str, why: str) -> tuple[dict[str, Any], str | None]:
    """``(arguments, None)`` for a JSON object, else ``({}, error)``; ``why`` is
    appended to the error of JSON that does not parse (e.g. the output limit)."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, (
            f"The arguments for {name} were cut off or are not valid JSON{why}: "
            f"{exc.msg} at character {exc.pos} of {len(raw)}."
        )
    if not isinstance(value, dict):
        return {}, f"The arguments for {name} must be a JSON object, got {type(value).__name__}."
    return value, None


class StreamFold(Protocol):
    """A provider's fold of raw stream events into ``ModelEvent``s."""

    def feed(self, event: Any) -> list[ModelEvent]: ...

    def result(self) -> ResponseDone: ...


class SdkStream(Protocol):
    """An SDK's async stream of raw events."""

    def __aiter__(self) -> AsyncIterator[Any]: ...

    async def close(self) -> None: ...


def fold_all(fold: StreamFold, events: Iterable[Any]) -> list[ModelEvent]:
    """Fold a whole recorded stream; the last event is the ``ResponseDone``."""
    out: list[ModelEvent] = []
    for event in events:
        out.extend(fold.feed(event))
    out.append(fold.result())
    return out


async def fold_sdk_stream(
    open_stream: Callable[[], Awaitable[SdkStream]], fold: StreamFold
) -> AsyncGenerator[ModelEvent, None]:
    """One attempt: open the SDK stream, pass on what ``fold`` makes of each raw
    event, close the stream, then yield the fold's ``ResponseDone``."""
    stream = await open_stream()
    try:
        async for raw in stream:
            for event in fold.feed(raw):
                yield event
    finally:
        await stream.close()
    yield fold.result()


class _HasMessage(Protocol):
    message: str


def classify_connection(
    exc: Exception,
    *,
    timeout: type[Exception],
    connection: type[Exception],
    validation: type[_HasMessage],
) -> Failure | None:
    """An SDK's timeout (checked first: it is a connection error too),
    connection and response-validation errors; ``None`` for anything else."""
    if isinstance(exc, timeout):
        return Failure(message="timeout", retryable=True)
    if isinstance(exc, connection):
        cause = exc.__cause__
        detail = f": {type(cause).__name__}: {cause}" if cause else ""
        return Failure(message=f"connection error{detail}", retryable=True)
    if isinstance(exc, validation):
        return Failure(message=f"unexpected response: {exc.message}", retryable=False)
    return None


_freezing_at_exit = False


def freeze_gc_at_exit() -> None:
    """Make the interpreter's exit fast after an SDK was imported.

    The provider SDKs import thousands of modules and classes (``anthropic``
    alone ~3,000 modules); the cyclic collection Python runs while it shuts
    down then walks all of them: measured 0.9 s after the answer of a
    one-turn script, against 0.05 s with everything alive at exit moved to
    the permanent generation first (``gc.freeze``). Nothing is lost: objects
    are still freed by reference counting as modules are torn down.
    """
    global _freezing_at_exit
    if not _freezing_at_exit:
        _freezing_at_exit = True
        atexit.register(gc.freeze)


class SdkProvider(Labelled, Generic[ClientT]):
    """A model behind an SDK client; subclasses say how to make the client
    (``_new_client``, which may raise ``_client_error``), what one attempt is
    (``_prepare``) and how the SDK's errors are classified (``_classify_sdk``).

    The client is created on first use, with SDK retries switched off:
    ``retry`` (a ``RetryPolicy``) governs retries, see ``_retry``. The API key
    never appears in ``repr`` or in an error message.
    """

    #: What the SDK raises when it cannot build a client (e.g. no API key).
    _client_error: ClassVar[type[Exception]] = Exception

    def __init__(
        self,
        name: str,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        max_tokens: int = 8192,
        http_client: httpx2.AsyncClient | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._name = name
        self._model = model
        self._api_key = api_key
        self._base_url = base_url
        self._max_tokens = max_tokens
        self._http_client = http_client
        self._retry = retry or RetryPolicy()
        self._client: ClientT | None = None
        freeze_gc_at_exit()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self._name!r}, model={self._model!r}, "
            f"base_url={self._base_url!r})"
        )

    def _sdk(self) -> ClientT:
        if self._client is None:
            try:
                self._client = self._new_client()
            except self._client_error as exc:
                message = scrub(str(exc), self._api_key)
                raise ProviderError(f"{self._name}: cannot create the client: {message}") from None
        return self._client

    def _new_client(self) -> ClientT:
        """The SDK client (``max_retries=0``); called once, by ``_sdk``."""
        raise NotImplementedError

    def _prepare(self, request: ModelRequest) -> Callable[[], AsyncGenerator[ModelEvent, None]]:
        """The request body for ``request``, as a function that makes one attempt."""
        raise NotImplementedError

    def _classify_sdk(self, exc: Exception) -> Failure | None:
        """The SDK's own exceptions as ``Failure``s; ``None`` for anything else."""
        raise NotImplementedError

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        events = stream_with_retry(
            provider=self._name,
            policy=self._retry,
            attempt=self._prepare(request),
            classify=lambda exc: classify_common(exc) or self._classify_sdk(exc),
            secret=self._api_key,
        )
        async with aclosing(events):
            async for event in events:
                yield event
