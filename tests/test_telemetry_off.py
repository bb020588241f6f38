"""Telemetry off costs nothing: a session runs a whole turn (a tool call, a
subagent, a /compact) in a fresh process and no ``opentelemetry`` module is
imported, whichever way it is off (never turned on, turned off by the
environment over the user's config, ``OTEL_SDK_DISABLED``, a value that is
not a yes), and whatever ``OTEL_*`` says about where it would go. The model
speaks the OpenAI wire format: the Anthropic and MCP SDKs import the
OpenTelemetry API themselves when they are used, which is theirs, not
MewCode's (docs/telemetry.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mewcode_kernel.testing import scrubbed_env
from mewcode_kernel.testing.wire import ScriptedServer, reply

REPO = Path(__file__).resolve().parents[1]

RUN = r"""
import asyncio, json, sys
from pathlib import Path
from mewcode_kernel.core import open_session
from mewcode_kernel.testing import collect

async def main():
    root = Path(sys.argv[1])
    session = open_session(root, home=root / "home")
    async with session:
        await collect(session.run("Read notes.txt, then ask a helper."))
        await collect(session.compact())
    from mewcode_kernel.core import telemetry
    telemetry.flush()
    print(json.dumps({
        "telemetry": type(session.telemetry).__name__,
        "otel": sorted(m for m in sys.modules if m.split(".")[0] == "opentelemetry"),
    }))

asyncio.run(main())
"""

OFF = [
    pytest.param({}, "", id="never-turned-on"),
    pytest.param({"MEWCODE_ENABLE_TELEMETRY": "0"}, "enabled: true", id="env-0-over-config"),
    pytest.param({"MEWCODE_ENABLE_TELEMETRY": "false"}, "enabled: true", id="env-false"),
    pytest.param({"MEWCODE_ENABLE_TELEMETRY": "1", "OTEL_SDK_DISABLED": "true"}, "", id="sdk-off"),
    pytest.param({"MEWCODE_ENABLE_TELEMETRY": "maybe"}, "", id="not-a-yes"),
    pytest.param({"MEWCODE_ENABLE_TELEMETRY": ""}, "", id="empty"),
    pytest.param({}, "enabled: false", id="config-false"),
]


def script() -> list:
    return [
        reply(tool_calls=[("read_file", {"path": "notes.txt"})]),
        reply(
            tool_calls=[
                (
                    "Agent",
                    {"description": "d", "prompt": "p", "subagent_type": "general-purpose"},
                )
            ]
        ),
        reply(text="child done"),
        reply(text="All read."),
        reply(text="A summary."),
    ]


@pytest.mark.parametrize(("env", "user_config"), OFF)
def test_telemetry_off_imports_nothing_of_opentelemetry(
    tmp_path: Path, env: dict[str, str], user_config: str
) -> None:
    root = tmp_path / "project"
    (root / "home" / ".mewcode").mkdir(parents=True)
    (root / "notes.txt").write_text("notes\n")
    if user_config:
        (root / "home" / ".mewcode" / "config.yaml").write_text(f"telemetry:\n  {user_config}\n")
    with ScriptedServer(script()) as server:
        (root / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: openai\n"
            f"    model: test-model\n    base_url: {server.openai_base_url}\n"
            "    api_key: sk-test-0123456789\n"
        )
        process_env = scrubbed_env(
            HOME=str(root / "home"),
            PYTHONPATH=str(REPO),
            MEWCODE_TRUST_PROJECT="1",
            MEWCODE_HEADLESS_APPROVAL="allow",
            # where it would go, were it on
            OTEL_TRACES_EXPORTER="console",
            OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9",
            **env,
        )
        done = subprocess.run(
            [sys.executable, "-c", RUN, str(root)],
            env=process_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        server.assert_all_used()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"telemetry": "NullTelemetry", "otel": []}


def test_the_same_run_with_telemetry_on_does_import_it(tmp_path: Path) -> None:
    """The check above has teeth: turned on, the same run loads the SDK."""
    root = tmp_path / "project"
    (root / "home").mkdir(parents=True)
    (root / "notes.txt").write_text("notes\n")
    with ScriptedServer(script()) as server:
        (root / ".mewcode.yaml").write_text(
            "default_provider: local\nproviders:\n  local:\n    protocol: openai\n"
            f"    model: test-model\n    base_url: {server.openai_base_url}\n"
            "    api_key: sk-test-0123456789\n"
        )
        env = scrubbed_env(
            HOME=str(root / "home"),
            PYTHONPATH=str(REPO),
            MEWCODE_TRUST_PROJECT="1",
            MEWCODE_HEADLESS_APPROVAL="allow",
            MEWCODE_ENABLE_TELEMETRY="1",
            OTEL_TRACES_EXPORTER="none",
            OTEL_METRICS_EXPORTER="none",
            OTEL_LOGS_EXPORTER="none",
        )
        done = subprocess.run(
            [sys.executable, "-c", RUN, str(root)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["telemetry"] == "OtelTelemetry"
    assert "opentelemetry.sdk.trace" in report["otel"]


def test_importing_the_telemetry_package_imports_no_opentelemetry() -> None:
    code = (
        "import sys\n"
        "from mewcode_kernel.core import telemetry\n"
        "from mewcode_kernel.core.telemetry import options, scrub, seam\n"
        "telemetry.doctor_line()\n"
        "telemetry.flush()\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=scrubbed_env(PYTHONPATH=str(REPO), MEWCODE_ENABLE_TELEMETRY="1"),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.strip() == "[]"
