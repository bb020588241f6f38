"""Idle culling: a Jupyter Server (started here on loopback, a culler with a
one-second interval and a short timeout) never culls a ``mewcode`` kernel
while a background task runs, with ``cull_busy`` off (the kernel reports
itself busy) or on (it reports activity every ``activity_interval``), and
culls it once the task is done; a kernel shut down while a task runs records
it as interrupted, and the next kernel shows it so after ``/resume``.

The culler's own debug lines (one per kernel per pass) are what the test
waits on: several passes after the timeout with the kernel still there is
the culler deciding not to cull it.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from mewcode_kernel.testing import install_kernelspec
from mewcode_kernel.testing.wire import ScriptedServer, Stall, WireReply, reply
from tests._deploy import KernelSocket, Server, free_port, http, status_of
from tests._kernel import anthropic_openai_config, kernel_env

TIMEOUT = 2  # cull_idle_timeout, seconds
PASSES = 4  # culler passes past the timeout the kernel must survive


@dataclass
class JupyterServer:
    url: str
    token: str
    root: Path
    server: Server

    def start_kernel(self, path: str) -> str:
        status, body = http(
            "POST",
            f"{self.url}/api/kernels",
            token=self.token,
            body={"name": "mewcode", "path": path},
        )
        assert status == 201, (status, body)
        return body["id"]

    def kernel(self, kernel_id: str) -> tuple[int, dict | None]:
        return http("GET", f"{self.url}/api/kernels/{kernel_id}", token=self.token)

    async def socket(self, kernel_id: str) -> KernelSocket:
        ws = self.url.replace("http://", "ws://")
        return await KernelSocket.connect(f"{ws}/api/kernels/{kernel_id}/channels", self.token)

    def culler_passes(self, kernel_id: str, count: int) -> None:
        """Wait until the culler has looked at ``kernel_id`` ``count`` more times."""
        for _ in range(count):
            self.server.wait_for_line(lambda line: f"kernel_id={kernel_id}" in line, timeout=30)

    def culled(self, kernel_id: str) -> str:
        return self.server.wait_for_line(
            lambda line: "Culling" in line and kernel_id in line, timeout=60
        )


def _start(base: Path, cull_busy: bool) -> tuple[Server, str, int]:
    kernels = install_kernelspec(base / "prefix")
    profile = base / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    # the deployment setting: activity reported more often than the culler's timeout
    (profile / "ipython_kernel_config.py").write_text("c.MewcodeKernel.activity_interval = 0.5\n")
    token = secrets.token_hex(16)
    port = free_port()
    env = kernel_env(
        base / "home",
        JUPYTER_PATH=str(kernels),
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTER_DATA_DIR=str(base / "data"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        IPYTHONDIR=str(base / "ipython"),
        MEWCODE_RENDERER="text",
    )
    server = Server(
        [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            "--allow-root",
            "--debug",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={base / 'root'}",
            f"--MappingKernelManager.cull_idle_timeout={TIMEOUT}",
            "--MappingKernelManager.cull_interval=1",
            f"--MappingKernelManager.cull_busy={cull_busy}",
        ],
        env=env,
        cwd=base,
        name="Jupyter Server",
    )
    return server, token, port


@pytest.fixture(scope="module", params=[False, True], ids=["cull_busy-off", "cull_busy-on"])
def jupyter(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("culler")
    (base / "root").mkdir()
    server, token, port = _start(base, request.param)
    try:
        server.wait_for_line(lambda line: f"http://127.0.0.1:{port}/" in line)
        server.wait_listening(port)
        yield JupyterServer(
            url=f"http://127.0.0.1:{port}", token=token, root=base / "root", server=server
        )
    finally:
        server.stop()


@pytest.fixture
def model() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


def _project(root: Path, name: str, model: ScriptedServer) -> Path:
    project = root / name
    project.mkdir()
    (project / ".mewcode.yaml").write_text(
        anthropic_openai_config(model.base_url, model.openai_base_url)
    )
    return project


def _stalled(text: str) -> tuple[WireReply, Stall]:
    stall = Stall(after=4, timeout=120)
    return replace(reply(text=text), stall=stall), stall


async def _launch(ws: KernelSocket, prompt: str) -> str:
    """Run ``%%agent --background`` and return the launching cell's id."""
    msg_id = await ws.send_execute(f"%%agent --background\n{prompt}")
    cell = await ws.collect(msg_id)
    assert cell.status == "ok" and "in the background" in cell.text, cell.text
    return msg_id


async def test_the_culler_never_culls_a_kernel_whose_background_task_runs(
    jupyter: JupyterServer, model: ScriptedServer
) -> None:
    answer, stall = _stalled("The long task is done.")
    model.add(answer)
    name = f"culled-{secrets.token_hex(3)}"
    project = _project(jupyter.root, name, model)
    kernel_id = jupyter.start_kernel(name)
    ws = await jupyter.socket(kernel_id)
    launched = await _launch(ws, "Do the long task.")
    assert await asyncio.to_thread(stall.reached.wait, 60)
    # after the launching cell's idle, the kernel says it is busy for it again
    await ws.wait_for(lambda m: status_of(m, "busy", launched))
    ws.close()  # the browser went away: only the culler decides now

    jupyter.culler_passes(kernel_id, PASSES + TIMEOUT)
    status, _ = jupyter.kernel(kernel_id)
    assert status == 200, jupyter.server.log()[-3000:]
    assert not [
        line
        for line in jupyter.server.log().splitlines()
        if "Culling" in line and kernel_id in line
    ]

    stall.release()  # the task ends: now the kernel is idle, and the culler takes it
    line = jupyter.culled(kernel_id)
    assert "'idle'" in line and "inactivity" in line
    records = _task_records(project)
    assert [r["state"] for r in records.values()] == ["completed"]


async def test_a_task_of_a_kernel_shut_down_shows_as_interrupted_after_the_next_start(
    jupyter: JupyterServer, model: ScriptedServer
) -> None:
    answer, stall = _stalled("This never finishes.")
    model.add(answer)
    name = f"shutdown-{secrets.token_hex(3)}"
    project = _project(jupyter.root, name, model)
    kernel_id = jupyter.start_kernel(name)
    ws = await jupyter.socket(kernel_id)
    try:
        await _launch(ws, "Work until stopped.")
        assert await asyncio.to_thread(stall.reached.wait, 60)
    finally:
        ws.close()
    status, _ = http("DELETE", f"{jupyter.url}/api/kernels/{kernel_id}", token=jupyter.token)
    assert status == 204
    stall.release()
    (record,) = _task_records(project).values()
    assert record["state"] == "interrupted"
    assert "kernel shut down" in record["error"]

    # the next kernel: the session it left behind, resumed, shows the task interrupted
    session = _sessions_with_tasks(project)[0]
    kernel_id = jupyter.start_kernel(name)
    ws = await jupyter.socket(kernel_id)
    try:
        resumed = await ws.execute(f"/resume {session.name}")
        tasks = await ws.execute("/tasks")
    finally:
        ws.close()
        http("DELETE", f"{jupyter.url}/api/kernels/{kernel_id}", token=jupyter.token)
    assert resumed.status == "ok", resumed.text
    assert re.search(r"\|\s*interrupted\s*\|", tasks.text), tasks.text
    assert "kernel shut down" in tasks.text


def _sessions_with_tasks(project: Path) -> list[Path]:
    return sorted(p.parent for p in (project / ".mewcode" / "sessions").glob("*/tasks.jsonl"))


def _task_records(project: Path) -> dict[str, dict]:
    """The last record of each task the project's sessions launched."""
    latest: dict[str, dict] = {}
    for folder in _sessions_with_tasks(project):
        for line in (folder / "tasks.jsonl").read_text().splitlines():
            record = json.loads(line)
            latest[record["id"]] = record
    return latest
