"""The environment tests, and the kernels they start, run in.

A developer's shell may hold real API keys, a proxy's base URL or MewCode
settings; a test that picked them up would reach a real model or behave
differently on another machine. ``PROVIDER_ENV_VARS`` lists them, once, for
every place that scrubs them: the pytest fixtures (``monkeypatch.delenv``)
and the environments given to test kernels and notebook runs
(``scrubbed_env``). ``install_kernelspec`` puts the ``mewcode`` kernelspec
under a temporary prefix, never into the user's Jupyter directories.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["PROVIDER_ENV_VARS", "install_kernelspec", "scrubbed_env"]

PROVIDER_ENV_VARS: tuple[str, ...] = (
    # the SDKs' keys and endpoints
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    # MewCode's settings: provider choice, approvals, root, recording, renderer, trust
    "MEWCODE_PROVIDER",
    "MEWCODE_MODEL",
    "MEWCODE_HEADLESS_APPROVAL",
    "MEWCODE_ROOT",
    "MEWCODE_CASSETTE",
    "MEWCODE_RECORD",
    "MEWCODE_RENDERER",
    # where install_skill downloads from, and its time limit
    "MEWCODE_GITHUB_API_URL",
    "MEWCODE_GITHUB_RAW_URL",
    "MEWCODE_SKILL_INSTALL_TIMEOUT",
    "MEWCODE_TRUST_PROJECT",
    # telemetry: whether and where a session exports, what it includes, whose trace
    "MEWCODE_ENABLE_TELEMETRY",
    "MEWCODE_OTEL_LOG_TOOL_DETAILS",
    "OTEL_LOG_USER_PROMPTS",
    "OTEL_SDK_DISABLED",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "TRACEPARENT",
    "TRACESTATE",
    *(f"OTEL_{signal}_EXPORTER" for signal in ("TRACES", "METRICS", "LOGS")),
    *(
        f"OTEL_EXPORTER_OTLP{signal}_{what}"
        for signal in ("", "_TRACES", "_METRICS", "_LOGS")
        for what in ("ENDPOINT", "PROTOCOL", "HEADERS")
    ),
)
"""Never inherited by a test: the developer's keys, endpoints and MewCode settings."""


def scrubbed_env(base: Mapping[str, str] = os.environ, **extra: str) -> dict[str, str]:
    """A copy of ``base`` (default: the current environment) without
    ``PROVIDER_ENV_VARS``, then with ``extra`` set."""
    env = {k: v for k, v in base.items() if k not in PROVIDER_ENV_VARS}
    env.update(extra)
    return env


def install_kernelspec(prefix: Path) -> Path:
    """Install the ``mewcode`` kernelspec under ``prefix`` with the CLI (as a
    user would); returns the Jupyter data directory to put on ``JUPYTER_PATH``."""
    subprocess.run(
        [sys.executable, "-m", "mewcode_kernel", "install", "--prefix", str(prefix)],
        check=True,
        capture_output=True,
    )
    return prefix / "share" / "jupyter"
