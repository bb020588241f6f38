"""What the telemetry tests share: a receiver wired into the environment, the
pipelines stopped after each test, a project on a scripted model server,
and lookups over the spans that arrived."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.core import telemetry
from mewcode_kernel.core.telemetry import pipeline
from mewcode_kernel.testing.wire import WireReply
from tests._otlp import OtlpReceiver, Span

__all__ = [
    "Router",
    "by_name",
    "children",
    "forms_of",
    "one",
    "otlp",
    "project_on",
    "received",
]

SUBAGENT_MARK = "as a subagent of MewCode"


@pytest.fixture
def otlp(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpReceiver]:
    """A receiver this process's telemetry sends to (telemetry on, every signal)."""
    for name in ("OTEL_LOG_USER_PROMPTS", "MEWCODE_OTEL_LOG_TOOL_DETAILS", "TRACEPARENT"):
        monkeypatch.delenv(name, raising=False)
    with OtlpReceiver() as receiver:
        for name, value in receiver.env().items():
            monkeypatch.setenv(name, value)
        yield receiver
        pipeline.shutdown_all()


def received(receiver: OtlpReceiver) -> list[Span]:
    """Everything the pipelines hold, sent now; the spans that arrived."""
    telemetry.flush()
    return receiver.spans()


def project_on(root: Path, base_url: str, *, key: str = "${LOCAL_KEY}") -> Path:
    (root / ".mewcode.yaml").write_text(
        "default_provider: local\nproviders:\n  local:\n    protocol: anthropic\n"
        f"    model: test-model\n    base_url: {base_url}\n    api_key: {key}\n"
    )
    return root


def by_name(spans: list[Span], name: str) -> list[Span]:
    return [s for s in spans if s.name == name]


def one(spans: list[Span], name: str, **attrs: Any) -> Span:
    found = [
        s for s in by_name(spans, name) if all(s.attributes.get(k) == v for k, v in attrs.items())
    ]
    assert len(found) == 1, f"{name} {attrs}: {[s.attributes for s in by_name(spans, name)]}"
    return found[0]


def children(spans: list[Span], parent: Span) -> list[Span]:
    return [s for s in spans if s.parent == parent.span_id and s.trace_id == parent.trace_id]


def forms_of(secret: str) -> list[bytes]:
    """How a text could appear in exported bytes: as it is, and JSON-escaped."""
    return [secret.encode(), json.dumps(secret).encode()[1:-1]]


class Router:
    """A scripted model that answers the session's requests and its
    subagents' (their system prompt says so) from two queues, in whatever
    order they come."""

    def __init__(self) -> None:
        self.parent: deque[WireReply] = deque()
        self.child: deque[WireReply] = deque()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> WireReply:
        who = "child" if SUBAGENT_MARK in json.dumps(body.get("system", "")) else "parent"
        with self.lock:
            queue = self.child if who == "child" else self.parent
            if not queue:
                raise AssertionError(f"no scripted reply left for a {who} request")
            return queue.popleft()
