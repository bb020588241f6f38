"""The provider seam: one async streaming method that yields ``ModelEvent``s."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..events import ModelEvent, ResponseDone
from ..messages import Message

__all__ = ["ModelRequest", "Provider", "ToolSpec", "complete"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolSpec:
    """What the model is told about a tool."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRequest:
    """One request to the model. ``system`` and ``tools`` are the stable prefix."""

    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int | None = None
    model: str | None = None


@runtime_checkable
class Provider(Protocol):
    """A model endpoint. ``stream`` ends with exactly one ``ResponseDone``
    or raises ``ProviderError``."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...


class Labelled:
    """The ``name``/``model`` pair every provider reports, read-only."""

    _name: str
    _model: str

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._model


async def complete(provider: Provider, request: ModelRequest) -> ResponseDone:
    """Drain a stream and return its final response (the non-streaming call)."""
    done: ResponseDone | None = None
    async for event in provider.stream(request):
        if isinstance(event, ResponseDone):
            done = event
    if done is None:
        from ..errors import ProviderError

        raise ProviderError(f"{provider.name}: the stream ended without a response")
    return done
