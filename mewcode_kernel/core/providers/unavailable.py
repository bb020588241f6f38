"""A provider that cannot be used yet, standing in until it is asked for a
response: then it fails with the reason (e.g. ``${ANTHROPIC_API_KEY}`` is not
set, with the config file and line). So a session whose default provider lacks
its key still runs slash commands and turns on other providers."""

from __future__ import annotations

from collections.abc import AsyncIterator

from ..errors import ProviderError
from ..events import ModelEvent
from .base import Labelled, ModelRequest

__all__ = ["UnavailableProvider"]


class UnavailableProvider(Labelled):
    def __init__(self, name: str, model: str, problem: str) -> None:
        self._name = name
        self._model = model
        self.problem = problem

    def __repr__(self) -> str:
        return f"UnavailableProvider(name={self._name!r}, model={self._model!r})"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise ProviderError(self.problem)
        yield  # pragma: no cover - makes this an async generator
