"""What the MCP tests share: how to start the fixture server and the
reference servers (the npm ones installed by the test run on first use,
``tests/_npm_reference.py``),
the config that points a project at them, and a bounded wait for a process
to exit."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests._npm_reference import ensure_reference_servers

TESTS = Path(__file__).resolve().parent
FIXTURE_SERVER = TESTS / "mcp_server.py"
LOOPBACK = TESTS / "fixtures" / "mcp" / "loopback.mjs"

INSTALL_HINT = "mcp-server-time is not installed: `pip install -e '.[test]'` installs it"


def fixture_entry(**extra: Any) -> dict[str, Any]:
    """An ``mcp_servers`` entry running ``tests/mcp_server.py`` over stdio."""
    return {"command": sys.executable, "args": [str(FIXTURE_SERVER)], **extra}


def node_server(name: str, *args: str) -> dict[str, Any]:
    """An entry running the npm reference server ``name`` (e.g. ``mcp-server-everything``),
    installed first if this is the run's first use."""
    script = ensure_reference_servers() / name
    node = shutil.which("node")
    if node is None or not script.exists():
        pytest.fail(f"{script} is missing after the install")
    return {"command": node, "args": [str(script), *args]}


def time_server() -> dict[str, Any]:
    """An entry running ``mcp-server-time`` from this environment (the test extra)."""
    script = Path(sys.executable).parent / "mcp-server-time"
    if not script.exists():
        pytest.fail(INSTALL_HINT)
    return {"command": str(script), "args": ["--local-timezone", "UTC"]}


def provider_yaml(base_url: str, protocol: str = "anthropic") -> str:
    return (
        "default_provider: local\n"
        "providers:\n"
        "  local:\n"
        f"    protocol: {protocol}\n"
        "    model: test-model\n"
        f"    base_url: {base_url}\n"
        "    api_key: sk-test-0123456789\n"
    )


def servers_yaml(servers: dict[str, dict[str, Any]], *, allow: list[str] = ()) -> str:
    """``mcp_servers`` (and permission allow rules) as YAML; JSON is YAML."""
    import json

    text = "mcp_servers:\n"
    for name, entry in servers.items():
        text += f"  {name}: {json.dumps(entry)}\n"
    if allow:
        text += f"permissions:\n  allow: {json.dumps(list(allow))}\n"
    return text


def processes_running(marker: str, cwd: Path | None = None) -> list[int]:
    """Host pids of the processes whose command line holds ``marker`` (and that
    run in ``cwd``): a stdio server and, in the OS sandbox, the bubblewrap
    processes around it (inside, the server sees pids of its own namespace)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            where = os.readlink(entry / "cwd") if cwd is not None else None
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if marker.encode() in cmdline and (cwd is None or where == str(cwd)):
            found.append(int(entry.name))
    return found


#: why a test of the OS sandbox is skipped: it needs a system package (and user namespaces)
NO_SANDBOX = (
    "the OS sandbox cannot run here: it needs bubblewrap (apt-get install -y bubblewrap) "
    "and unprivileged user namespaces"
)


def sandbox_works(root: Path) -> bool:
    """Whether bubblewrap confines commands on this machine (as a session would)."""
    from mewcode_kernel.core.config import SandboxSettings
    from mewcode_kernel.core.sandbox import Sandbox

    return Sandbox(root, SandboxSettings()).active


def wait_for_exit(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` has exited within ``timeout`` s (a pidfd wait:
    no polling). ``True`` also when it is already gone."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(timeout * 1000))
    finally:
        os.close(fd)


@contextmanager
def everything_over_http(port: int) -> Iterator[subprocess.Popen[str]]:
    """``server-everything`` in its streamable-HTTP mode on 127.0.0.1:``port``
    (its own code binds every interface; the preload keeps it on loopback)."""
    entry = node_server("mcp-server-everything")
    proc = subprocess.Popen(
        [entry["command"], "--import", str(LOOPBACK), entry["args"][0], "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # ends at EOF if it dies: bounded by the process
            if "listening on port" in line:
                break
        else:
            raise RuntimeError(f"server-everything did not start (exit {proc.wait()})")
        yield proc
    finally:
        proc.kill()
        proc.wait(10)
