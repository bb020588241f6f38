"""``python -m mewcode_kernel doctor`` in a real process: what it finds from
the environment a kernel would get (root and how chosen, notebook, the
MewCode folder, keys by name only, gateway), each problem with its fix, and
exit status 1 when there is one. ``/doctor`` shows the same checks (the
gateway test runs it in a kernel Enterprise Gateway started)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests._deploy import REPO

KEY = "sk-ant-doctor-" + "d" * 24


def _doctor(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    base = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [sys.executable, "-m", "mewcode_kernel", "doctor", *args],
        env={**base, **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stderr == "" or "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


def _by_topic(out: str) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for check in json.loads(out):
        found.setdefault(check["topic"], []).append(check)
    return found


def test_doctor_names_where_things_are_and_keys_by_name_only(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "state"
    project.mkdir()
    code, out = _doctor(
        tmp_path,
        {
            "KERNEL_WORKING_DIR": str(project),
            "MEWCODE_HOME": str(home),
            "JPY_SESSION_NAME": "analysis.ipynb",
            "ANTHROPIC_API_KEY": KEY,
            "EG_IMPERSONATION_ENABLED": "False",
        },
    )
    assert KEY not in out
    assert f"{project} (from KERNEL_WORKING_DIR)" in out
    assert str(project / "analysis.ipynb") in out
    assert f"{home} (from MEWCODE_HOME)" in out
    assert "ANTHROPIC_API_KEY (environment)" in out
    assert "Jupyter Enterprise Gateway" in out
    assert "bubblewrap" in out and "user namespaces" in out
    assert code in (0, 1)


def test_doctor_gives_each_problem_its_fix(tmp_path: Path) -> None:
    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    keys = home / "keys.env"
    keys.write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    keys.chmod(0o644)
    code, out = _doctor(
        tmp_path,
        {
            "MEWCODE_HOME": str(home),
            "KERNEL_WORKING_DIR": "/no/such/folder",
            "KERNEL_GATEWAY": "1",
        },
        "--json",
    )
    assert code == 1 and KEY not in out
    checks = _by_topic(out)
    [root] = [c for c in checks["project root"] if not c["ok"]]
    assert checks["project root"][0]["value"].endswith("(from working directory)")
    assert not root["ok"] and "KERNEL_WORKING_DIR" in root["problem"]
    assert "MEWCODE_ROOT" in root["fix"]
    [key_file] = checks["key file"]
    assert not key_file["ok"] and "chmod 600" in key_file["fix"]
    [notebook] = checks["notebook"]
    assert not notebook["ok"] and "JPY_SESSION_NAME" in notebook["fix"]
    provider = checks["provider"][0]
    # no key reached this kernel: the fix names the gateway settings that forward one
    assert not provider["ok"] and "EG_CLIENT_ENVS" in provider["fix"], provider


def test_doctor_says_whether_telemetry_exports_and_where_without_credentials(
    tmp_path: Path,
) -> None:
    home = tmp_path / "state"
    _, off = _doctor(tmp_path, {"MEWCODE_HOME": str(home)}, "--json")
    [line] = _by_topic(off)["telemetry"]
    assert line["ok"] and line["value"].startswith("off (MEWCODE_ENABLE_TELEMETRY=1")
    token = "otel-secret-" + "t" * 20
    _, on = _doctor(
        tmp_path,
        {
            "MEWCODE_HOME": str(home),
            "MEWCODE_ENABLE_TELEMETRY": "1",
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"https://user:{token}@collector.example:4318",
            "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer {token}",
        },
        "--json",
    )
    [line] = _by_topic(on)["telemetry"]
    assert token not in on
    assert line["value"].startswith("on"), line
    assert "collector.example:4318" in line["value"], line
