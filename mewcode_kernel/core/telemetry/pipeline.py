"""The export pipeline on the OpenTelemetry SDK: ``Pipeline``, one per
process and set of options (sessions that agree share it).

Its providers are MewCode's own and never registered as OpenTelemetry's
global ones: a library that traces through the global API (the Anthropic
and MCP SDKs do, with request content when asked) exports nothing through
MewCode's pipeline, and a notebook's own OpenTelemetry setup is left alone.
Spans and events go through batch processors (a background thread sends
them), metrics through a periodic reader; whatever is pending is sent when
the process exits.
"""

from __future__ import annotations

import atexit
import importlib
import threading
from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, ConsoleLogExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

from ... import __version__
from ..redaction import Redactor, looks_secret
from . import scrub
from .options import TelemetryOptions
from .worker import WORKER

__all__ = ["SCOPE", "Pipeline", "flush_all", "pipeline_for", "shutdown_all"]

SCOPE = "mewcode"
# what the SDK bounds on its own too, behind scrub's bounds
_LIMITS = SpanLimits(max_span_attribute_length=scrub.MAX_TEXT + 64, max_events=64, max_links=16)
_OTLP = {
    ("traces", "http/protobuf"): ("opentelemetry.exporter.otlp.proto.http.trace_exporter", "OTLPSpanExporter"),
    ("metrics", "http/protobuf"): ("opentelemetry.exporter.otlp.proto.http.metric_exporter", "OTLPMetricExporter"),
    ("logs", "http/protobuf"): ("opentelemetry.exporter.otlp.proto.http._log_exporter", "OTLPLogExporter"),
    ("traces", "grpc"): ("opentelemetry.exporter.otlp.proto.grpc.trace_exporter", "OTLPSpanExporter"),
    ("metrics", "grpc"): ("opentelemetry.exporter.otlp.proto.grpc.metric_exporter", "OTLPMetricExporter"),
    ("logs", "grpc"): ("opentelemetry.exporter.otlp.proto.grpc._log_exporter", "OTLPLogExporter"),
}  # fmt: skip
_CONSOLE: dict[str, Any] = {
    "traces": ConsoleSpanExporter,
    "metrics": ConsoleMetricExporter,
    "logs": ConsoleLogExporter,
}

_lock = threading.Lock()
_pipelines: dict[tuple[object, ...], Pipeline] = {}


class Pipeline:
    """Tracer, meter and logger of one set of options, with their exporters."""

    def __init__(self, options: TelemetryOptions) -> None:
        self.problems: list[str] = []
        resource = _resource(options.service_name)
        # shut down by ``shutdown_all`` at exit, once for all of them
        self.traces = TracerProvider(resource=resource, span_limits=_LIMITS, shutdown_on_exit=False)
        for exporter in self._exporters(options, "traces"):
            self.traces.add_span_processor(BatchSpanProcessor(exporter))
        readers = [
            PeriodicExportingMetricReader(exporter)
            for exporter in self._exporters(options, "metrics")
        ]
        self.metrics = MeterProvider(
            resource=resource, metric_readers=readers, shutdown_on_exit=False
        )
        self.logs = LoggerProvider(resource=resource, shutdown_on_exit=False)
        for exporter in self._exporters(options, "logs"):
            self.logs.add_log_record_processor(BatchLogRecordProcessor(exporter))
        self.tracer = self.traces.get_tracer(SCOPE, __version__)
        self.meter = self.metrics.get_meter(SCOPE, __version__)
        self.logger = self.logs.get_logger(SCOPE, __version__)

    def _exporters(self, options: TelemetryOptions, signal: str) -> list[Any]:
        made: list[Any] = []
        for kind in options.exporters.get(signal, ()):
            if kind == "console":
                made.append(_CONSOLE[signal]())
                continue
            protocol = options.protocols.get(signal, "http/protobuf")
            module, cls = _OTLP[(signal, protocol)]
            try:
                exporter = getattr(importlib.import_module(module), cls)
            except ImportError:
                self.problems.append(
                    f"OTLP over {protocol} needs its exporter package "
                    f"(opentelemetry-exporter-otlp-proto-{protocol.split('/')[0]}); "
                    f"{signal} are not sent"
                )
                continue
            # headers, timeout, compression and certificates: the SDK reads OTEL_*
            made.append(exporter(endpoint=options.endpoints[signal]))
        return made

    def flush(self, timeout_millis: int = 10_000) -> None:
        self.traces.force_flush(timeout_millis)
        self.logs.force_flush(timeout_millis)
        self.metrics.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.traces.shutdown()
        self.logs.shutdown()
        self.metrics.shutdown()


def pipeline_for(options: TelemetryOptions) -> Pipeline:
    """The process's pipeline for ``options`` (made on first use)."""
    key = options.key()
    with _lock:
        pipeline = _pipelines.get(key)
        if pipeline is None:
            if not _pipelines:
                atexit.register(shutdown_all)
            pipeline = _pipelines[key] = Pipeline(options)
        return pipeline


def flush_all(timeout_millis: int = 10_000) -> None:
    """Send whatever every pipeline holds now (a headless run's end, a test):
    what the worker still has to build first."""
    WORKER.drain(timeout_millis / 1000)
    with _lock:
        pipelines = list(_pipelines.values())
    for pipeline in pipelines:
        pipeline.flush(timeout_millis)


def shutdown_all() -> None:
    """Send what is pending and stop every pipeline (at exit)."""
    WORKER.drain(5.0)
    with _lock:
        pipelines = list(_pipelines.values())
        _pipelines.clear()
    for pipeline in pipelines:
        pipeline.shutdown()


def _resource(service_name: str) -> Resource:
    """The SDK's resource (``OTEL_RESOURCE_ATTRIBUTES`` included) without
    attributes named like secrets or holding one."""
    made = Resource.create({SERVICE_NAME: service_name, SERVICE_VERSION: __version__})
    secrets = Redactor.from_environment()
    kept: dict[str, Any] = {}
    for key, value in made.attributes.items():
        if looks_secret(key):
            continue
        kept[key] = (
            scrub.text(value, secrets.redact, limit=512) if isinstance(value, str) else value
        )
    return Resource(kept, made.schema_url)
