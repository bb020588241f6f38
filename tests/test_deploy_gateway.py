"""MewCode's kernel started by Jupyter Enterprise Gateway (from PyPI, in
``.deploy-servers/gateway-venv``) on loopback, driven over the kernel's
websocket as a notebook server would: the project is the
``KERNEL_WORKING_DIR`` the client sends (the gateway starts kernels in its
own folder), and provider keys and settings reach the kernel the ways the
deployment guide names: the gateway's client environment (``EG_CLIENT_ENVS``)
and Jupyter Server's ``GatewayClient.allowed_envs``, the kernelspec's
``env``, or ``keys.env`` in the user's MewCode folder. A key that does not
arrive is named, with the setting that forwards it.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._deploy import GATEWAY_BIN, REPO, KernelSocket, Server, free_port, http, require

KEY = "sk-gateway-" + "7" * 24


@dataclass
class Gateway:
    url: str
    token: str
    home: Path  # the kernels' MewCode folder (the kernelspec's env sets it)
    server: Server

    def start_kernel(self, env: dict[str, str]) -> str:
        status, body = http(
            "POST",
            f"{self.url}/api/kernels",
            token=self.token,
            body={"name": "mewcode", "env": {"KERNEL_USERNAME": "tester", **env}},
        )
        assert status == 201, (status, body, self.server.log()[-3000:])
        return body["id"]

    def stop_kernel(self, kernel_id: str) -> None:
        http("DELETE", f"{self.url}/api/kernels/{kernel_id}", token=self.token)

    async def socket(self, kernel_id: str) -> KernelSocket:
        ws = self.url.replace("http://", "ws://")
        return await KernelSocket.connect(f"{ws}/api/kernels/{kernel_id}/channels", self.token)


def _kernelspec(base: Path, home: Path) -> Path:
    """The ``mewcode`` kernelspec as the CLI installs it, with an ``env`` as a
    deployment would give it (the gateway passes a kernel nothing else)."""
    subprocess.run(
        [sys.executable, "-m", "mewcode_kernel", "install", "--prefix", str(base / "prefix")],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    data = base / "prefix" / "share" / "jupyter"
    spec_file = data / "kernels" / "mewcode" / "kernel.json"
    spec = json.loads(spec_file.read_text())
    spec["env"] = {
        "PYTHONPATH": str(REPO),  # this checkout's code
        "MEWCODE_HOME": str(home),
        "MEWCODE_TRUST_PROJECT": "1",  # the tests' projects are the user's own
        "MEWCODE_RENDERER": "text",
    }
    spec_file.write_text(json.dumps(spec))
    return data


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    require(GATEWAY_BIN / "jupyter-enterprisegateway")
    base = tmp_path_factory.mktemp("gateway")
    home = base / "mewcode-home"
    kernels = _kernelspec(base, home)
    token = secrets.token_hex(16)
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(base),
        "JUPYTER_PATH": str(kernels),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTER_DATA_DIR": str(base / "data"),
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        # what a client may pass a kernel besides KERNEL_*: the deployment guide's list
        "EG_CLIENT_ENVS": "ANTHROPIC_API_KEY,ANTHROPIC_BASE_URL,JPY_SESSION_NAME",
    }
    server = Server(
        [
            str(GATEWAY_BIN / "jupyter-enterprisegateway"),
            "--ip=127.0.0.1",
            f"--port={port}",
            "--port_retries=0",
            f"--EnterpriseGatewayApp.auth_token={token}",
        ],
        env=env,
        cwd=base,
        name="Enterprise Gateway",
    )
    try:
        server.wait_for_line(
            lambda line: "Enterprise Gateway" in line and "is available at" in line
        )
        yield Gateway(url=f"http://127.0.0.1:{port}", token=token, home=home, server=server)
    finally:
        server.stop()


async def test_an_agent_cell_runs_in_the_project_the_gateway_names(
    gateway: Gateway, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("gateway notes\n")
    with ScriptedServer([reply(text="The gateway answer is 42.")]) as model:
        kernel_id = gateway.start_kernel(
            {
                "KERNEL_WORKING_DIR": str(project),
                "ANTHROPIC_API_KEY": KEY,
                "ANTHROPIC_BASE_URL": model.base_url,
            }
        )
        ws = await gateway.socket(kernel_id)
        try:
            where = await ws.execute("import os; print(os.getcwd())")
            cell = await ws.execute("%%agent\nWhat is the answer?")
            doctor = await ws.execute("/doctor")
        finally:
            ws.close()
            gateway.stop_kernel(kernel_id)
        assert model.errors == []
    # the gateway started the kernel in its own folder: KERNEL_WORKING_DIR chose the project
    assert where.text.strip() != str(project)
    assert cell.status == "ok", cell.text
    assert "The gateway answer is 42." in cell.text
    headers = {k.lower(): v for k, v in model.received[0].headers.items()}
    # the key the client sent reached the model (the SDK picks the header)
    assert KEY in headers.get("x-api-key", "") + headers.get("authorization", "")
    sessions = list((project / ".mewcode" / "sessions").iterdir())
    assert len(sessions) == 1
    log = (sessions[0] / "conversation.jsonl").read_text()
    assert "What is the answer?" in log and "The gateway answer is 42." in log
    assert KEY not in log
    assert f"{project} (from KERNEL_WORKING_DIR)" in doctor.text
    assert "Jupyter Enterprise Gateway" in doctor.text
    assert "ANTHROPIC_API_KEY (environment)" in doctor.text
    assert KEY not in doctor.text  # names only, never values


async def test_a_key_the_gateway_does_not_pass_is_named_and_keys_env_supplies_it(
    gateway: Gateway, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with ScriptedServer([reply(text="Keyed from keys.env.")]) as model:
        (project / ".mewcode.yaml").write_text(
            "default_provider: claude\n"
            "providers:\n"
            "  claude:\n"
            "    protocol: anthropic\n"
            "    model: claude-sonnet-4-5\n"
            f"    base_url: {model.base_url}\n"
            "    api_key: ${ANTHROPIC_API_KEY}\n"
        )
        keys = gateway.home / "keys.env"
        gateway.home.mkdir(mode=0o700, parents=True, exist_ok=True)

        async def agent_cell() -> str:
            # the client sends no key: only KERNEL_* variables reach the kernel
            kernel_id = gateway.start_kernel({"KERNEL_WORKING_DIR": str(project)})
            ws = await gateway.socket(kernel_id)
            try:
                return (await ws.execute("%%agent\nWhich key?")).text
            finally:
                ws.close()
                gateway.stop_kernel(kernel_id)

        try:
            missing = await agent_cell()
            keys.write_text(f"export ANTHROPIC_API_KEY='{KEY}'\n")
            keys.chmod(0o644)  # others could read it: refused, with the fix
            exposed = await agent_cell()
            keys.chmod(0o600)
            keyed = await agent_cell()
        finally:
            keys.unlink(missing_ok=True)
        assert model.errors == []
    assert "${ANTHROPIC_API_KEY}" in missing and "which is not set" in missing, missing
    assert "EG_CLIENT_ENVS" in missing and "c.GatewayClient.allowed_envs" in missing, missing
    assert "keys.env" in missing, missing
    assert "chmod 600" in exposed and KEY not in exposed, exposed
    assert "Keyed from keys.env." in keyed, keyed
    assert len(model.received) == 1
    headers = {k.lower(): v for k, v in model.received[0].headers.items()}
    assert KEY in headers.get("x-api-key", "") + headers.get("authorization", "")
