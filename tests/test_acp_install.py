"""What a person sees when part of an install is missing: ``python -m
mewcode_kernel acp`` without the ACP library, and the MewCode persona in a
Jupyter AI without its ACP client, each name the ``pip install`` line that
fixes it. The missing package is shadowed for real (a module of its name
that fails to import, first on ``PYTHONPATH``) in a real subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests._kernel import REPO, kernel_env

TIMEOUT = 60


def _shadowing(tmp_path: Path, package: str) -> Path:
    """A folder whose ``package`` fails to import, as when it is not installed."""
    folder = tmp_path / "shadow"
    (folder / package).mkdir(parents=True)
    (folder / package / "__init__.py").write_text(
        f"raise ModuleNotFoundError({f'No module named {package!r}'!r}, name={package!r})\n"
    )
    return folder


def _env(tmp_path: Path, shadow: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = kernel_env(home)
    env["PYTHONPATH"] = f"{shadow}:{REPO}"
    return env


@pytest.mark.parametrize("command", [("-m", "mewcode_kernel", "acp"), ("-m", "mewcode_acp.cli")])
def test_the_server_without_the_acp_library_names_the_install_line(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    env = _env(tmp_path, _shadowing(tmp_path, "acp"))
    done = subprocess.run(
        [sys.executable, *command],
        input=b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n',
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=TIMEOUT,
    )
    assert done.returncode == 1
    assert done.stdout == b""  # nothing a client would take for a protocol message
    err = done.stderr.decode()
    assert "pip install 'agent-client-protocol>=0.11,<0.13'" in err
    assert "Traceback" not in err


def test_the_persona_without_jupyter_ais_acp_client_names_the_extra(tmp_path: Path) -> None:
    pytest.importorskip("jupyter_ai_persona_manager")
    env = _env(tmp_path, _shadowing(tmp_path, "jupyter_ai_acp_client"))
    probe = (
        "from jupyter_ai_persona_manager import PersonaRequirementsUnmet\n"
        "try:\n"
        "    import mewcode_acp.persona\n"
        "except PersonaRequirementsUnmet as exc:\n"
        "    print('UNMET:', exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=TIMEOUT,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "UNMET:" in done.stdout
    assert "pip install 'mewcode[jupyter-ai]'" in done.stdout


def test_help_names_the_project_store_and_needs_no_client(tmp_path: Path) -> None:
    env = _env(tmp_path, tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "mewcode_kernel", "acp", "--help"],
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=TIMEOUT,
        text=True,
    )
    assert done.returncode == 0
    assert ".mewcode/sessions/" in done.stdout
    assert "%%agent --resume ID" in done.stdout
