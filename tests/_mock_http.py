"""Provider tests without a network: a scripted ``httpx2.MockTransport``
handler, SSE responses, and parameters for the recorded streams."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mewcode_kernel.core.events import ModelEvent
from mewcode_kernel.core.messages import user
from mewcode_kernel.core.providers import Provider
from mewcode_kernel.core.providers.base import ModelRequest
from tests._fixtures import committed

Handler = Callable[[httpx2.Request], httpx2.Response]


def sse_params(streams: Path) -> list[Any]:
    """One ``pytest.param`` per recorded ``*.sse`` file in ``streams``; when
    there are none, one whose test fails reading it (they are committed)."""
    files = sorted(streams.glob("*.sse")) if streams.is_dir() else []
    if not files:
        return [pytest.param(streams / "*.sse", id="no-recorded-streams")]
    return [pytest.param(p, id=p.stem) for p in files]


def read(path: Path) -> bytes:
    """A committed recording's bytes (a missing one fails the test)."""
    return committed(path).read_bytes()


async def no_sleep(_: float) -> None:
    return None


class Server:
    """A ``MockTransport`` handler: answers each request with the next step (a
    response, or a function of the request returning one) and records it."""

    def __init__(self, *steps: httpx2.Response | Handler) -> None:
        self.steps = list(steps)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        step = self.steps.pop(0)
        return step if isinstance(step, httpx2.Response) else step(request)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def sse_response(body: bytes) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)


async def collect(provider: Provider, request: ModelRequest | None = None) -> list[ModelEvent]:
    """Drain ``provider.stream(request)`` (default: a one-line prompt)."""
    request = request or ModelRequest(system="You are terse.", messages=[user("hi")])
    return [event async for event in provider.stream(request)]
