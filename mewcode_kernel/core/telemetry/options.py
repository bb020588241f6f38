"""What telemetry exports, and where: ``TelemetryOptions``.

Read from the environment (``MEWCODE_ENABLE_TELEMETRY``, the standard
``OTEL_*`` variables) and the ``telemetry`` section of the user's config,
the environment winning where both say something. Nothing here imports
OpenTelemetry: a session with telemetry off reads its options and stops.

* on: ``MEWCODE_ENABLE_TELEMETRY=1`` or ``telemetry: {enabled: true}``;
  ``OTEL_SDK_DISABLED=true`` turns it off whatever else says;
* where, per signal (traces, metrics, logs): ``OTEL_<SIGNAL>_EXPORTER``
  (``otlp``, the default, ``console`` or ``none``, comma-separated),
  ``OTEL_EXPORTER_OTLP[_<SIGNAL>]_ENDPOINT`` and ``_PROTOCOL``
  (``http/protobuf``, the default, or ``grpc`` when its exporter is
  installed); headers, timeouts and certificates are read by the SDK;
* what: prompts and model answers with ``OTEL_LOG_USER_PROMPTS=1`` (or
  ``telemetry.log_user_prompts``), tool inputs, outputs and reasons with
  ``MEWCODE_OTEL_LOG_TOOL_DETAILS=1`` (or ``telemetry.log_tool_details``);
* ``TRACEPARENT`` (and ``TRACESTATE``): the caller's trace, which turns join.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from ..config import TelemetrySettings

__all__ = [
    "ENABLE_ENV",
    "PROMPTS_ENV",
    "SIGNALS",
    "TOOL_DETAILS_ENV",
    "TelemetryOptions",
    "doctor_line",
    "sdk_installed",
    "shown_endpoint",
    "telemetry_options",
]

ENABLE_ENV = "MEWCODE_ENABLE_TELEMETRY"
PROMPTS_ENV = "OTEL_LOG_USER_PROMPTS"
TOOL_DETAILS_ENV = "MEWCODE_OTEL_LOG_TOOL_DETAILS"
SIGNALS = ("traces", "metrics", "logs")
DEFAULT_SERVICE = "mewcode"
_EXPORTERS = frozenset({"otlp", "console"})
_PROTOCOLS = frozenset({"http/protobuf", "grpc"})
_HTTP_DEFAULT = "http://localhost:4318"
_GRPC_DEFAULT = "http://localhost:4317"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})
# a W3C traceparent is 55 characters; anything much longer is not one
_MOST_TRACEPARENT = 128
_MOST_TRACESTATE = 512


@dataclass(frozen=True, kw_only=True, slots=True)
class TelemetryOptions:
    """Telemetry as the environment and config set it. ``exporters`` and
    ``endpoints`` are per signal; an empty tuple exports nothing of it."""

    enabled: bool = False
    exporters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    protocols: Mapping[str, str] = field(default_factory=dict)
    endpoints: Mapping[str, str] = field(default_factory=dict)
    service_name: str = DEFAULT_SERVICE
    log_user_prompts: bool = False
    log_tool_details: bool = False
    traceparent: str | None = None
    tracestate: str | None = None
    #: what could not be used, one sentence each (told once, and on /doctor)
    problems: tuple[str, ...] = ()

    @property
    def exports(self) -> bool:
        """Whether any signal goes anywhere."""
        return any(self.exporters.get(s) for s in SIGNALS)

    def key(self) -> tuple[object, ...]:
        """What one export pipeline is made of: sessions that agree share one."""
        return (
            tuple((s, self.exporters.get(s, ()), self.protocols.get(s), self.endpoints.get(s))
                  for s in SIGNALS),
            self.service_name,
        )  # fmt: skip


def telemetry_options(
    settings: TelemetrySettings | None = None, env: Mapping[str, str] | None = None
) -> TelemetryOptions:
    """The options ``env`` (default ``os.environ``) and the user's config ``settings`` give."""
    env = os.environ if env is None else env
    settings = settings or TelemetrySettings()
    problems: list[str] = []
    enabled = _flag(env, ENABLE_ENV, settings.enabled, problems)
    if _flag(env, "OTEL_SDK_DISABLED", None, problems):
        enabled = False
    if not enabled:
        return TelemetryOptions(problems=tuple(problems))
    exporters: dict[str, tuple[str, ...]] = {}
    protocols: dict[str, str] = {}
    endpoints: dict[str, str] = {}
    for signal in SIGNALS:
        exporters[signal] = _exporters(env, signal, problems)
        if "otlp" not in exporters[signal]:
            continue
        protocols[signal] = _protocol(env, signal, problems)
        endpoint = _endpoint(env, signal, protocols[signal])
        if endpoint is None:
            problems.append(
                f"the OTLP endpoint for {signal} is not an http(s) URL; {signal} go to the "
                "console or nowhere"
            )
            exporters[signal] = tuple(e for e in exporters[signal] if e != "otlp")
            continue
        endpoints[signal] = endpoint
    traceparent = env.get("TRACEPARENT", "").strip() or None
    if traceparent is not None and len(traceparent) > _MOST_TRACEPARENT:
        problems.append("TRACEPARENT is not a W3C traceparent; turns start their own traces")
        traceparent = None
    tracestate = env.get("TRACESTATE", "").strip()[:_MOST_TRACESTATE] or None
    return TelemetryOptions(
        enabled=True,
        exporters=exporters,
        protocols=protocols,
        endpoints=endpoints,
        service_name=(env.get("OTEL_SERVICE_NAME") or "").strip()[:128] or DEFAULT_SERVICE,
        log_user_prompts=_flag(env, PROMPTS_ENV, settings.log_user_prompts, problems),
        log_tool_details=_flag(env, TOOL_DETAILS_ENV, settings.log_tool_details, problems),
        traceparent=traceparent,
        tracestate=tracestate,
        problems=tuple(problems),
    )


def _flag(env: Mapping[str, str], name: str, configured: bool | None, problems: list[str]) -> bool:
    """A yes/no variable; unset, the config's value; unreadable, no (what
    exports less)."""
    raw = env.get(name)
    if raw is None:
        return bool(configured)
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value not in _FALSE:
        problems.append(f"{name}={raw[:40]!r} is neither 1 nor 0; it is read as 0")
    return False


def _exporters(env: Mapping[str, str], signal: str, problems: list[str]) -> tuple[str, ...]:
    name = f"OTEL_{signal.upper()}_EXPORTER"
    raw = env.get(name)
    words = [w.strip().lower() for w in (raw if raw is not None else "otlp").split(",")]
    chosen: list[str] = []
    for word in words:
        if word in _EXPORTERS and word not in chosen:
            chosen.append(word)
        elif word not in {"none", ""} and word not in _EXPORTERS:
            problems.append(f"{name}: {word[:40]!r} is not otlp, console or none; it is ignored")
    return tuple(chosen)


def _protocol(env: Mapping[str, str], signal: str, problems: list[str]) -> str:
    name = f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL"
    raw = env.get(name) or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    value = raw.strip().lower()
    if value in _PROTOCOLS:
        return value
    problems.append(
        f"OTLP protocol {value[:40]!r} is not supported here (http/protobuf or grpc); "
        "http/protobuf is used"
    )
    return "http/protobuf"


def _endpoint(env: Mapping[str, str], signal: str, protocol: str) -> str | None:
    """The URL ``signal`` is sent to, as the OTLP exporter specification builds
    it; ``None`` when it is not an http(s) URL."""
    own = (env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT") or "").strip()
    base = (env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "").strip()
    url = own or base or (_GRPC_DEFAULT if protocol == "grpc" else _HTTP_DEFAULT)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError:
        return None
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return None
    if own or protocol == "grpc":
        return url
    # the signal's path goes after the base's path, before any query it has
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + f"/v1/{signal}", fragment=""))


def shown_endpoint(url: str) -> str:
    """``url`` as it may be shown: no user, password, query or fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an invalid URL)"
    host = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))


def sdk_installed() -> bool:
    """Whether the OpenTelemetry SDK and OTLP exporter are installed (read
    from the installed metadata: nothing is imported)."""
    for dist in ("opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"):
        try:
            importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return False
    return True


def doctor_line(options: TelemetryOptions) -> str:
    """One line for ``/doctor``: whether telemetry is on, what goes where, what
    is left out. Never an endpoint's credentials, nor a header."""
    if not options.enabled:
        return (
            f"Telemetry: off ({ENABLE_ENV}=1, or telemetry.enabled in ~/.mewcode/config.yaml, "
            "turns on OpenTelemetry export)"
        )
    if not sdk_installed():
        return (
            "Telemetry: on, but the OpenTelemetry SDK is not installed (pip install "
            "'mewcode[otel]'): nothing is exported"
        )
    names = {"traces": "traces", "metrics": "metrics", "logs": "events"}
    parts = []
    for signal in SIGNALS:
        where = []
        for exporter in options.exporters.get(signal, ()):
            if exporter == "otlp":
                protocol = options.protocols.get(signal, "http/protobuf")
                where.append(f"OTLP {protocol} {shown_endpoint(options.endpoints[signal])}")
            else:
                where.append(exporter)
        parts.append(f"{names[signal]} → {' and '.join(where) or 'none'}")
    left = [
        "prompts and answers "
        + ("included (redacted)" if options.log_user_prompts else "left out"),
        "tool details " + ("included (redacted)" if options.log_tool_details else "left out"),
    ]
    line = f"Telemetry: on as {options.service_name}; {'; '.join(parts)}; {', '.join(left)}"
    if options.traceparent:
        line += "; turns join the caller's trace (TRACEPARENT)"
    if options.problems:
        line += "; problems: " + " ".join(options.problems)
    return line
