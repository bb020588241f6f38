"""A local OTLP/HTTP receiver for telemetry tests: what a collector would get.

``OtlpReceiver`` listens on 127.0.0.1 and answers ``POST /v1/traces``,
``/v1/metrics`` and ``/v1/logs`` like a collector, keeping every body as
sent (``raw``: the exported bytes, for "no secret in any byte" checks) and
decoded with the OTLP protobuf messages (``spans``, ``metrics``, ``events``).
``wait_for`` blocks until a condition on what arrived holds (bounded), on
the receiver's own condition variable: no polling.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

__all__ = ["OtlpReceiver", "Span", "value_of"]


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value_of(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def _attrs(items: Any) -> dict[str, Any]:
    return {kv.key: value_of(kv.value) for kv in items}


@dataclass
class Span:
    name: str
    trace_id: str
    span_id: str
    parent: str
    attributes: dict[str, Any]
    links: list[tuple[str, str]]
    status: int
    events: list[tuple[str, dict[str, Any]]]
    start: int
    end: int
    resource: dict[str, Any] = field(default_factory=dict)


@dataclass
class OtlpReceiver:
    """The bodies a collector would receive, by path."""

    bodies: dict[str, list[bytes]] = field(default_factory=dict)
    headers: list[dict[str, str]] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                encoding = (self.headers.get("content-encoding") or "").lower()
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                with receiver._cond:
                    receiver.bodies.setdefault(self.path, []).append(body)
                    receiver.headers.append(dict(self.headers.items()))
                    receiver._cond.notify_all()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self, **extra: str) -> dict[str, str]:
        """The variables that send a process's telemetry here, quickly."""
        return {
            "MEWCODE_ENABLE_TELEMETRY": "1",
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_METRICS_EXPORTER": "otlp",
            "OTEL_LOGS_EXPORTER": "otlp",
            "OTEL_BSP_SCHEDULE_DELAY": "50",
            "OTEL_BLRP_SCHEDULE_DELAY": "50",
            "OTEL_METRIC_EXPORT_INTERVAL": "200",
            **extra,
        }

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- what arrived ---------------------------------------------------------------

    @property
    def raw(self) -> bytes:
        """Every byte every exporter sent."""
        with self._cond:
            return b"".join(b for bodies in self.bodies.values() for b in bodies)

    def _decoded(self, path: str, message: Any) -> list[Any]:
        with self._cond:
            bodies = list(self.bodies.get(path, []))
        out = []
        for body in bodies:
            request = message()
            request.ParseFromString(body)
            out.append(request)
        return out

    def spans(self) -> list[Span]:
        found = []
        for request in self._decoded("/v1/traces", ExportTraceServiceRequest):
            for rs in request.resource_spans:
                resource = _attrs(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        found.append(
                            Span(
                                name=s.name,
                                trace_id=s.trace_id.hex(),
                                span_id=s.span_id.hex(),
                                parent=s.parent_span_id.hex(),
                                attributes=_attrs(s.attributes),
                                links=[(lk.trace_id.hex(), lk.span_id.hex()) for lk in s.links],
                                status=s.status.code,
                                events=[(e.name, _attrs(e.attributes)) for e in s.events],
                                start=s.start_time_unix_nano,
                                end=s.end_time_unix_nano,
                                resource=resource,
                            )
                        )
        return found

    def events(self) -> list[dict[str, Any]]:
        """Each log record: its attributes, plus ``body``, ``trace_id``, ``span_id``."""
        found = []
        for request in self._decoded("/v1/logs", ExportLogsServiceRequest):
            for rl in request.resource_logs:
                for sl in rl.scope_logs:
                    for r in sl.log_records:
                        found.append(
                            {
                                **_attrs(r.attributes),
                                "body": value_of(r.body),
                                "event_name": r.event_name,
                                "trace_id": r.trace_id.hex(),
                                "span_id": r.span_id.hex(),
                            }
                        )
        return found

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], float]]]:
        """Each metric's data points: ``(attributes, value)`` (a histogram's count)."""
        found: dict[str, list[tuple[dict[str, Any], float]]] = {}
        for request in self._decoded("/v1/metrics", ExportMetricsServiceRequest):
            for rm in request.resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        kind = m.WhichOneof("data")
                        points = getattr(m, kind).data_points
                        for p in points:
                            value = (
                                p.count
                                if kind == "histogram"
                                else (
                                    p.as_double
                                    if p.WhichOneof("value") == "as_double"
                                    else p.as_int
                                )
                            )
                            found.setdefault(m.name, []).append((_attrs(p.attributes), value))
        return found

    def wait_for(self, ready: Callable[[OtlpReceiver], bool], timeout: float = 60.0) -> None:
        """Block until ``ready(self)`` holds (checked at each arrival)."""
        with self._cond:
            if not self._cond.wait_for(lambda: ready(self), timeout):
                raise AssertionError(f"the receiver did not get what was expected in {timeout} s")
