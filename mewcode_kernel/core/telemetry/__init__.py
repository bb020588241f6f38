"""OpenTelemetry traces, metrics and events of a session: off by default,
nothing secret in them.

The only package of the core that touches OpenTelemetry, and only once a
session has telemetry on: this module and ``options``, ``seam`` and
``scrub`` import nothing of it, and the rest (``pipeline``, ``signals``,
``scope``, ``calls``, ``runs``, ``observer``) is imported by
``session_telemetry`` when it is needed. Spans come from the events a
turn already yields (``runs``); what they may hold is decided in ``scrub``.

* ``session_telemetry``: a session's ``Telemetry`` (``NullTelemetry`` when off);
* ``telemetry_options``: what is on, from the environment and the user's config;
* ``doctor_line``: the ``/doctor`` line saying what is exported, where to;
* ``flush``: send what is pending now (the end of a headless run).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from ..config import TelemetrySettings
from ..events import Notice
from ..tasks import TaskManager
from .options import (
    ENABLE_ENV,
    PROMPTS_ENV,
    TOOL_DETAILS_ENV,
    TelemetryOptions,
    sdk_installed,
    telemetry_options,
)
from .options import doctor_line as _doctor_line
from .seam import ModelInfo, NullTelemetry, Telemetry, WatchedSession

__all__ = [
    "ENABLE_ENV",
    "PROMPTS_ENV",
    "TOOL_DETAILS_ENV",
    "ModelInfo",
    "NullTelemetry",
    "Telemetry",
    "TelemetryOptions",
    "WatchedSession",
    "doctor_line",
    "flush",
    "session_telemetry",
    "telemetry_options",
]

NOT_INSTALLED = (
    "Telemetry is on, but the OpenTelemetry SDK is not installed (pip install "
    "'mewcode[otel]'): nothing is exported."
)


def session_telemetry(
    settings: TelemetrySettings,
    host: WatchedSession,
    *,
    tasks: TaskManager | None = None,
    env: Mapping[str, str] | None = None,
) -> Telemetry:
    """The telemetry of a session: ``settings`` (the user's config) and ``env``
    (default ``os.environ``, which the SDK's exporters read too) say whether it
    exports; ``tasks`` runs its background subagents."""
    options = telemetry_options(settings, os.environ if env is None else env)
    if not options.enabled:
        told = [Notice(level="warning", message=f"Telemetry: {p}") for p in options.problems]
        return NullTelemetry(told)
    if not sdk_installed():
        return NullTelemetry([Notice(level="warning", message=NOT_INSTALLED)])
    from .observer import OtelTelemetry

    return OtelTelemetry(options, host, tasks)


def doctor_line(
    settings: TelemetrySettings | None = None, env: Mapping[str, str] | None = None
) -> str:
    """The ``/doctor`` line: whether telemetry is on, what goes where, what is
    left out (``settings``: the session's ``config.telemetry``)."""
    return _doctor_line(telemetry_options(settings, env))


def flush(timeout: float = 10.0) -> None:
    """Send what the export pipelines hold now (nothing to do when telemetry
    never started: OpenTelemetry is not imported for it)."""
    pipeline = sys.modules.get(f"{__name__}.pipeline")
    if pipeline is not None:
        pipeline.flush_all(int(timeout * 1000))
