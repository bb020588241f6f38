# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""MCP servers in a real ``mewcode`` kernel, driven from notebook cells with a
scripted model: the fixture server over stdio and streamable HTTP (user
config), and the reference servers from npm and PyPI (the project's
``.mcp.json``, trusted with ``MEWCODE_TRUST_PROJECT=1``). What the model
received is read from the requests; what the cell shows from its outputs.
Last, the kernel shuts down and takes its servers with it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._kernel import (  # noqa: F401
    Kernel,
    anthropic_openai_config,
    jupyter_path,
    kernel_env,
    running_kernel,
    script,
    server,
)
from tests._mcp import (
    FIXTURE_SERVER,
    fixture_entry,
    node_server,
    processes_running,
    sandbox_works,
    servers_yaml,
    time_server,
    wait_for_exit,
)
from tests.mcp_server import PIXEL, serve_http

SECRETS = {"ANTHROPIC_API_KEY": "sk-ant-kernel-secret", "OPENAI_API_KEY": "sk-oai-kernel-secret"}


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with serve_http() as url:
        yield url


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, http_url: str) -> Path:
    """The user's config: the fixture server over stdio and over HTTP."""
    home = tmp_path_factory.mktemp("home")
    (home / ".mewcode").mkdir()
    servers = {"fx": fixture_entry(timeout=3), "web": {"url": http_url}}
    (home / ".mewcode" / "config.yaml").write_text(
        servers_yaml(servers, allow=["mcp__fx__*", "mcp__web__*", "mcp__everything__*"])
    )
    return home


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, server: ScriptedServer) -> Path:
    """The project: the scripted model, and the reference servers in ``.mcp.json``."""
    root = tmp_path_factory.mktemp("project")
    (root / ".mewcode.yaml").write_text(
        anthropic_openai_config(server.base_url, server.openai_base_url)
    )
    (root / "docs").mkdir()
    (root / "docs" / "plan.txt").write_text("ship on Friday\n")
    servers: dict[str, dict[str, Any]] = {
        "everything": {**node_server("mcp-server-everything", "stdio"), "timeout": 3},
        "fs": node_server("mcp-server-filesystem", str(root / "docs")),
        "time": time_server(),
    }
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2))
    return root


@pytest.fixture(scope="module")
def kernel(project: Path, home: Path, jupyter_path: Path) -> Iterator[Kernel]:
    env = kernel_env(home, MEWCODE_TRUST_PROJECT="1", **SECRETS)
    with running_kernel(project, env) as k:
        yield k


def results_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["tool_use_id"]: b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"}  # fmt: skip


def text(result: dict[str, Any]) -> str:
    content = result["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content if p["type"] == "text")


def test_mcp_lists_every_server_connected(kernel: Kernel) -> None:
    [table] = kernel.ok("%agent /mcp", timeout=120).markdown
    for name in ("fx", "web", "everything", "fs", "time"):
        row = next(line for line in table.splitlines() if line.startswith(f"| `{name}`"))
        assert "| connected" in row, row
    assert "`.mewcode/logs/mcp-fx.log`" in table and ".mcp.json:" in table
    tools = kernel.ok("%agent /tools").markdown[0]
    for name in (
        "mcp__fx__echo",
        "mcp__web__pixel",
        "mcp__everything__echo",
        "mcp__time__convert_time",
    ):
        assert f"`{name}`" in tools


def test_a_cell_uses_text_image_error_and_hanging_tools(
    kernel: Kernel, script: ScriptedServer
) -> None:
    calls = [
        ("mcp__fx__echo", {"text": "from a cell"}, "t1"),
        ("mcp__web__pixel", {}, "t2"),
        ("mcp__fx__fail", {"reason": "on purpose"}, "t3"),
        ("mcp__fx__hang", {}, "t4"),
        ("mcp__fx__environment", {}, "t5"),
    ]
    script.add(reply(tool_calls=calls), reply(text="The hang timed out; the rest answered."))
    cell = kernel.ok("%%agent\nTry the fixture server's tools.", timeout=120)
    results = results_of(script.received[-1].body)
    assert text(results["t1"]) == "echo: from a cell"
    image = next(p for p in results["t2"]["content"] if p["type"] == "image")
    assert image["source"]["data"] == PIXEL  # the provider request carries the image
    assert results["t3"]["is_error"] and "failed on purpose: on purpose" in text(results["t3"])
    assert results["t4"]["is_error"] and "timed out after 3 s" in text(results["t4"])
    env = text(results["t5"]).split()
    assert "PATH" in env and "ANTHROPIC_API_KEY" not in env and "OPENAI_API_KEY" not in env
    assert all(secret not in json.dumps(script.received[-1].body) for secret in SECRETS.values())
    # the cell shows rows like the built-ins', and the turn went on to its answer
    assert "✓ mcp__fx__echo from a cell" in cell.stdout
    assert "mcp__fx__hang" in cell.stdout
    assert cell.markdown[-1] == "The hang timed out; the rest answered."
    assert "fixture MCP server starting" not in cell.text  # its stderr went to the log


def test_a_cell_uses_the_reference_servers(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    calls = [
        ("mcp__everything__echo", {"message": "hi"}, "r1"),
        ("mcp__everything__get-tiny-image", {}, "r2"),
        ("mcp__everything__get-sum", {"a": "one", "b": 2}, "r3"),
        ("mcp__everything__trigger-long-running-operation", {"duration": 30, "steps": 3}, "r4"),
        ("mcp__fs__read_text_file", {"path": str(project / "docs" / "plan.txt")}, "r5"),
        ("mcp__time__convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}, "r6"),
    ]  # fmt: skip
    script.add(reply(tool_calls=calls), reply(text="Done with the reference servers."))
    cell = kernel.run("%%agent --mode bypassPermissions\nUse the reference servers.", timeout=120)
    assert cell.status == "ok", cell.text
    results = results_of(script.received[-1].body)
    assert text(results["r1"]) == "Echo: hi"
    assert any(p["type"] == "image" and p["source"]["media_type"] == "image/png" for p in results["r2"]["content"])  # fmt: skip
    assert results["r3"]["is_error"] and "expected number" in text(results["r3"])
    assert results["r4"]["is_error"] and "timed out after 3 s" in text(results["r4"])
    assert text(results["r5"]) == "ship on Friday\n"
    assert '"timezone": "Asia/Tokyo"' in text(results["r6"]) and "21:00" in text(results["r6"])
    assert cell.markdown[-1] == "Done with the reference servers."


def test_a_background_turn_uses_the_sessions_servers(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    log = project / ".mewcode" / "logs" / "mcp-fx.log"
    starts = log.read_text().count("starting MCP server")
    script.add(
        reply(tool_calls=[("mcp__fx__echo", {"text": "from the background"})]),
        reply(text="Echoed in the background."),
    )
    kernel.ok("%%agent --background\nEcho something in the background.", timeout=120)
    kernel.ok("import magics\nawait magics.wait_background()", timeout=120)
    result = next(iter(results_of(script.received[-1].body).values()))
    assert text(result) == "echo: from the background"
    assert log.read_text().count("starting MCP server") == starts  # no server of its own


def test_kernel_shutdown_stops_the_servers(
    kernel: Kernel, script: ScriptedServer, project: Path
) -> None:
    script.add(reply(tool_calls=[("mcp__fx__pid", {})]), reply(text="Noted."))
    kernel.ok("%agent Which pid does the fixture server have?", timeout=120)
    pid = int(text(next(iter(results_of(script.received[-1].body).values()))))
    running = processes_running(str(FIXTURE_SERVER))  # the server (and its sandbox)
    assert running
    # inside the OS sandbox the server has a PID namespace of its own
    assert (pid not in running) == sandbox_works(project)
    kernel.kc.stop_channels()
    kernel.km.shutdown_kernel(now=False)  # a shutdown request, as Jupyter sends one
    assert all(wait_for_exit(p, 10) for p in running)
    # closed by the session (not just orphaned by the kernel's exit): the log says so
    for name in ("fx", "everything", "fs", "time"):
        log = (project / ".mewcode" / "logs" / f"mcp-{name}.log").read_text()
        assert log.rstrip().splitlines()[-1].endswith(": stopped"), (name, log[-500:])
