"""What turns telemetry on, where it goes and what the ``/doctor`` line says:
the environment over the user's config, the project's config never, every
spelling of yes and no, the exporters and endpoints as the OTLP
specification builds them, and a doctor line that never shows an
endpoint's credentials or a header."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from mewcode_kernel.core.config import TelemetrySettings, load_config
from mewcode_kernel.core.telemetry import (
    NullTelemetry,
    doctor_line,
    session_telemetry,
    telemetry_options,
)

ON = {"MEWCODE_ENABLE_TELEMETRY": "1"}


@pytest.mark.parametrize("value", ["1", "true", "TRUE", " yes ", "on", "True"])
def test_yes_spellings_turn_it_on(value: str) -> None:
    assert telemetry_options(None, {"MEWCODE_ENABLE_TELEMETRY": value}).enabled


@pytest.mark.parametrize("value", ["0", "false", "no", "off", "", "  "])
def test_no_spellings_leave_it_off(value: str) -> None:
    options = telemetry_options(None, {"MEWCODE_ENABLE_TELEMETRY": value})
    assert not options.enabled and not options.problems


@pytest.mark.parametrize("value", ["2", "enable", "y", "1; rm -rf /", "\x00"])
def test_anything_else_is_off_and_said(value: str) -> None:
    options = telemetry_options(None, {"MEWCODE_ENABLE_TELEMETRY": value})
    assert not options.enabled
    assert any("MEWCODE_ENABLE_TELEMETRY" in p for p in options.problems)


def test_the_environment_wins_over_the_users_config_and_the_sdk_switch_over_both() -> None:
    yes, no = TelemetrySettings(enabled=True), TelemetrySettings(enabled=False)
    assert telemetry_options(yes, {}).enabled
    assert not telemetry_options(yes, {"MEWCODE_ENABLE_TELEMETRY": "0"}).enabled
    assert telemetry_options(no, ON).enabled
    assert not telemetry_options(yes, {**ON, "OTEL_SDK_DISABLED": "true"}).enabled


def test_what_is_included_follows_the_opt_ins() -> None:
    options = telemetry_options(None, ON)
    assert (options.log_user_prompts, options.log_tool_details) == (False, False)
    both = {**ON, "OTEL_LOG_USER_PROMPTS": "1", "MEWCODE_OTEL_LOG_TOOL_DETAILS": "true"}
    options = telemetry_options(None, both)
    assert (options.log_user_prompts, options.log_tool_details) == (True, True)
    configured = TelemetrySettings(enabled=True, log_user_prompts=True, log_tool_details=True)
    off = {"OTEL_LOG_USER_PROMPTS": "0", "MEWCODE_OTEL_LOG_TOOL_DETAILS": "0"}
    options = telemetry_options(configured, off)
    assert (options.log_user_prompts, options.log_tool_details) == (False, False)


def test_exporters_and_endpoints_follow_the_otlp_specification() -> None:
    options = telemetry_options(None, ON)
    assert options.exporters == {s: ("otlp",) for s in ("traces", "metrics", "logs")}
    assert options.endpoints["traces"] == "http://localhost:4318/v1/traces"
    env = {
        **ON,
        "OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.example:4318/base/",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "https://logs.example/ingest",
        "OTEL_METRICS_EXPORTER": "OTLP, console",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_TRACES_EXPORTER": "none",
    }
    options = telemetry_options(None, env)
    assert options.exporters == {"traces": (), "metrics": ("otlp", "console"), "logs": ("otlp",)}
    assert options.endpoints == {
        "metrics": "https://collector.example:4318/base/v1/metrics",
        "logs": "https://logs.example/ingest",
    }
    grpc = telemetry_options(None, {**ON, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert grpc.endpoints["traces"] == "http://localhost:4317"


@pytest.mark.parametrize(
    "endpoint",
    [
        "file:///etc/passwd",
        "unix:///run/x.sock",
        "collector:4318",
        "javascript:alert(1)",
        "http://",
    ],
)
def test_an_endpoint_that_is_not_http_sends_nothing(endpoint: str) -> None:
    options = telemetry_options(None, {**ON, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})
    assert options.enabled and options.endpoints == {}
    assert all("otlp" not in e for e in options.exporters.values())
    assert any("not an http(s) URL" in p for p in options.problems)


def test_unknown_exporters_and_protocols_are_said() -> None:
    env = {**ON, "OTEL_TRACES_EXPORTER": "jaeger,otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}
    options = telemetry_options(None, env)
    assert options.exporters["traces"] == ("otlp",)
    assert options.protocols["traces"] == "http/protobuf"
    assert any("jaeger" in p for p in options.problems)
    assert any("http/json" in p for p in options.problems)


def test_a_traceparent_too_long_to_be_one_is_dropped() -> None:
    options = telemetry_options(None, {**ON, "TRACEPARENT": "00-" + "a" * 500})
    assert options.traceparent is None and options.problems


def test_the_doctor_line_says_what_goes_where_and_never_a_credential() -> None:
    assert doctor_line(None, {}).startswith("Telemetry: off (MEWCODE_ENABLE_TELEMETRY=1")
    env = {
        **ON,
        "OTEL_EXPORTER_OTLP_ENDPOINT": "https://ops:pa55-w0rd-x@collector.example:4318/base?token=tok-123#f",
        "OTEL_EXPORTER_OTLP_HEADERS": "x-honeycomb-team=hc-secret-team-key",
        "OTEL_METRICS_EXPORTER": "console",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_SERVICE_NAME": "notebooks",
    }
    line = doctor_line(None, env)
    assert line.startswith("Telemetry: on as notebooks; ")
    assert "traces → OTLP http/protobuf https://collector.example:4318/base/v1/traces" in line
    assert "metrics → console" in line and "events → none" in line
    assert "prompts and answers left out" in line and "tool details left out" in line
    for secret in ("pa55-w0rd-x", "ops", "tok-123", "hc-secret-team-key", "honeycomb"):
        assert secret not in line
    opted = doctor_line(TelemetrySettings(log_user_prompts=True), env)
    assert "prompts and answers included (redacted)" in opted


def test_without_the_sdk_it_says_so_and_exports_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.version

    def version(name: str) -> str:
        if name == "opentelemetry-sdk":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    assert "pip install 'mewcode[otel]'" in doctor_line(None, ON)
    made = session_telemetry(TelemetrySettings(), host=None, env=ON)  # type: ignore[arg-type]
    assert isinstance(made, NullTelemetry)
    assert ["mewcode[otel]" in n.message for n in made.notices()] == [True]


# --- the config: the user's file only ---------------------------------------------------


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_users_config_turns_it_on_and_a_projects_is_ignored(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "project"
    write(home / ".mewcode" / "config.yaml", "telemetry:\n  enabled: true\n")
    write(
        root / ".mewcode.yaml",
        "telemetry:\n  enabled: false\n  log_user_prompts: true\n  log_tool_details: true\n",
    )
    config = load_config(root, home=home, env={})
    assert config.telemetry == TelemetrySettings(enabled=True)
    [warning] = [w for w in config.warnings if w.field == "telemetry"]
    assert "read from ~/.mewcode/config.yaml only" in str(warning)
    assert warning.path == str(root / ".mewcode.yaml")


def test_a_project_alone_cannot_turn_it_on(tmp_path: Path) -> None:
    write(tmp_path / ".mewcode.yaml", "telemetry:\n  enabled: true\n  log_user_prompts: true\n")
    config = load_config(tmp_path, home=tmp_path / "home", env={})
    assert config.telemetry == TelemetrySettings()
    assert not telemetry_options(config.telemetry, {}).enabled


@pytest.mark.parametrize("value", ['"yes"', "1", '"true"', "[true]", "{on: 1}"])
def test_a_value_that_is_not_a_boolean_is_left_out_and_the_file_still_used(
    tmp_path: Path, value: str
) -> None:
    home = tmp_path / "home"
    write(
        home / ".mewcode" / "config.yaml",
        f"default_model: kept-model\ntelemetry:\n  enabled: true\n  log_user_prompts: {value}\n",
    )
    config = load_config(tmp_path, home=home, env={})
    assert config.default_model == "kept-model"
    assert config.telemetry == TelemetrySettings(enabled=True)
    assert any(w.field == "telemetry.log_user_prompts" for w in config.warnings)


def test_a_telemetry_section_that_is_not_a_mapping_is_left_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / ".mewcode" / "config.yaml", "default_model: kept\ntelemetry: yes\n")
    config = load_config(tmp_path, home=home, env={})
    assert config.default_model == "kept" and config.telemetry == TelemetrySettings()
    assert any("telemetry stays off" in str(w) for w in config.warnings)
