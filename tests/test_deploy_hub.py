"""Two people on one JupyterHub, in one shared project folder.

JupyterHub (from PyPI, in ``.deploy-servers/hub-venv``) runs on loopback with
configurable-http-proxy (npm), the dummy authenticator and the local process
spawner: each user's single-user server and kernels run as that user, two
OS users created here (``useradd``, removed after; this needs root, as CI
has). The project folder belongs to a group both are in (``2770``, as a
team's share is). Each runs an agent cell there; then the test checks what
each can reach of the other's: the session folders and files (modes, and a
real read from the other user's kernel), the MewCode folders, the session
listing, and a cross-user ``--resume`` (refused, naming the owner).
"""

from __future__ import annotations

import contextlib
import grp
import json
import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._deploy import HUB_VENV, PROXY, REPO, KernelSocket, Server, free_port, http, require
from tests._kernel import anthropic_openai_config


@dataclass
class Hub:
    url: str
    token: str
    shared: Path
    users: dict[str, Path]  # name -> home
    server: Server

    def spawn(self, user: str) -> None:
        status, body = http("POST", f"{self.url}/hub/api/users/{user}/server", token=self.token)
        assert status in (201, 202), (status, body, self.server.log()[-3000:])
        # the progress stream ends with the event that says the server is ready
        request = urllib.request.Request(
            f"{self.url}/hub/api/users/{user}/server/progress",
            headers={"Authorization": f"token {self.token}", "Accept": "text/event-stream"},
        )
        with urllib.request.urlopen(request, timeout=120) as stream:
            for raw in stream:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    event = json.loads(line[5:])
                    if event.get("ready"):
                        return
                    if event.get("failed"):
                        raise AssertionError(f"{user}'s server failed: {event}")
        raise AssertionError(f"{user}'s server never became ready:\n{self.server.log()[-3000:]}")

    def start_kernel(self, user: str, notebook: str) -> str:
        status, body = http(
            "POST",
            f"{self.url}/user/{user}/api/sessions",
            token=self.token,
            body={
                "path": notebook,
                "name": notebook,
                "type": "notebook",
                "kernel": {"name": "mewcode"},
            },
        )
        assert status == 201, (status, body, self.server.log()[-3000:])
        return body["kernel"]["id"]

    async def socket(self, user: str, kernel_id: str) -> KernelSocket:
        ws = self.url.replace("http://", "ws://")
        return await KernelSocket.connect(
            f"{ws}/user/{user}/api/kernels/{kernel_id}/channels", self.token
        )


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True)


@pytest.fixture(scope="module")
def people() -> Iterator[tuple[str, str, str, Path]]:
    """Two new OS users in a new group, with homes in a new folder; all removed after."""
    if os.geteuid() != 0:
        pytest.fail("the JupyterHub test creates OS users: run it as root (CI does)")
    tag = secrets.token_hex(3)
    group, names = f"mwt{tag}t", (f"mwt{tag}a", f"mwt{tag}b")
    base = Path(tempfile.mkdtemp(prefix="mewcode-hub-", dir="/tmp"))
    base.chmod(0o755)  # the users' servers read the code and the kernelspec from here
    made: list[str] = []
    try:
        _run("groupadd", group)
        for name in names:
            home = base / f"home-{name}"
            _run(
                "useradd",
                "-m",
                "-d",
                str(home),
                "-G",
                group,
                "-s",
                "/bin/sh",
                "-c",
                "mewcode test",
                name,
            )
            made.append(name)
        yield names[0], names[1], group, base
    finally:
        for name in made:
            # whatever of theirs outlived the hub (this test started it all), by pid
            found = subprocess.run(["ps", "-u", name, "-o", "pid="], capture_output=True, text=True)
            for pid in found.stdout.split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            subprocess.run(["userdel", name], capture_output=True)
        subprocess.run(["groupdel", group], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _code_for_users(base: Path) -> Path:
    """This checkout's packages, where the users can read them (a checkout
    under a private folder would be out of their reach)."""
    code = base / "code"
    for package in ("mewcode_kernel", "magics"):
        shutil.copytree(
            REPO / package, code / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    subprocess.run(["chmod", "-R", "a+rX", str(code)], check=True)
    return code


def _config(
    base: Path, ports: tuple[int, int, int], token: str, users: tuple[str, ...], env: dict[str, str]
) -> Path:
    hub = base / "hub"
    hub.mkdir(mode=0o700)
    config = hub / "jupyterhub_config.py"
    config.write_text(
        "\n".join(
            [
                "c.JupyterHub.ip = '127.0.0.1'",
                f"c.JupyterHub.port = {ports[0]}",
                "c.JupyterHub.hub_ip = '127.0.0.1'",
                f"c.JupyterHub.hub_port = {ports[1]}",
                f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{ports[2]}'",
                f"c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]",
                f"c.JupyterHub.db_url = 'sqlite:///{hub}/jupyterhub.sqlite'",
                f"c.JupyterHub.cookie_secret_file = {str(hub / 'cookie_secret')!r}",
                "c.JupyterHub.authenticator_class = 'dummy'",
                f"c.Authenticator.allowed_users = {set(users)!r}",
                "c.JupyterHub.spawner_class = 'jupyterhub.spawner.LocalProcessSpawner'",
                f"c.Spawner.cmd = [{str(HUB_VENV / 'bin' / 'jupyterhub-singleuser')!r}]",
                f"c.Spawner.notebook_dir = {str(base / 'shared')!r}",
                f"c.Spawner.environment = {env!r}",
                "c.Spawner.start_timeout = 120",
                "c.Spawner.http_timeout = 120",
                f"c.JupyterHub.services = [{{'name': 'mewcode-test', 'api_token': {token!r}}}]",
                "c.JupyterHub.load_roles = [{'name': 'mewcode-test', 'services': ['mewcode-test'],"
                " 'scopes': ['admin:users', 'admin:servers', 'access:servers', 'read:servers',"
                " 'list:users', 'read:users']}]",
            ]
        )
        + "\n"
    )
    return config


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def hub(people: tuple[str, str, str, Path], model: ScriptedServer) -> Iterator[Hub]:
    require(HUB_VENV / "bin" / "jupyterhub", HUB_VENV / "bin" / "python", PROXY)
    alice, bob, group, base = people
    denied = subprocess.run(
        ["runuser", "-u", alice, "--", str(HUB_VENV / "bin" / "python"), "-c", "pass"],
        capture_output=True,
        text=True,
    )
    if denied.returncode != 0:
        pytest.fail(
            f"the test's users cannot run {HUB_VENV}/bin/python ({denied.stderr.strip()}): "
            "tests/deploy_reference/install makes it from a Python every user can run",
            pytrace=False,
        )
    code = _code_for_users(base)
    subprocess.run(
        [
            str(HUB_VENV / "bin" / "python"),
            "-m",
            "mewcode_kernel",
            "install",
            "--prefix",
            str(base / "kernels"),
        ],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(code)},
    )
    subprocess.run(["chmod", "-R", "a+rX", str(base / "kernels")], check=True)
    shared = base / "shared"
    shared.mkdir()
    (shared / ".mewcode.yaml").write_text(
        anthropic_openai_config(model.base_url, model.openai_base_url)
    )
    os.chown(shared, 0, grp.getgrnam(group).gr_gid)
    shared.chmod(0o2770)  # a team's folder: the group writes, new files keep the group
    (shared / ".mewcode.yaml").chmod(0o644)
    env = {
        "PATH": f"{HUB_VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": str(code),
        "JUPYTER_PATH": str(base / "kernels" / "share" / "jupyter"),
        "MEWCODE_TRUST_PROJECT": "1",  # the team's own project
        "MEWCODE_HEADLESS_APPROVAL": "allow",  # nobody to ask over this websocket
        "MEWCODE_RENDERER": "text",
    }
    token = secrets.token_hex(24)
    ports = (free_port(), free_port(), free_port())
    config = _config(base, ports, token, (alice, bob), env)
    server = Server(
        [str(HUB_VENV / "bin" / "jupyterhub"), "-f", str(config)],
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(base / "hub")},
        cwd=base / "hub",
        name="JupyterHub",
    )
    try:
        server.wait_for_line(lambda line: "JupyterHub is now running at" in line, timeout=120)
        server.wait_listening(ports[0])
        yield Hub(
            url=f"http://127.0.0.1:{ports[0]}",
            token=token,
            shared=shared,
            users={alice: base / f"home-{alice}", bob: base / f"home-{bob}"},
            server=server,
        )
    finally:
        server.stop(timeout=60)


def _modes(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): stat.S_IMODE(p.lstat().st_mode)
        for p in [folder, *folder.rglob("*")]
    }


def _owned(path: Path) -> str:
    return pwd.getpwuid(path.lstat().st_uid).pw_name


async def test_two_users_in_one_shared_project_keep_their_sessions_apart(
    hub: Hub, model: ScriptedServer
) -> None:
    alice, bob = list(hub.users)
    for user in (alice, bob):
        model.add(
            reply(
                tool_calls=[
                    ("write_file", {"path": f"{user}-note.txt", "content": f"from {user}\n"})
                ]
            ),
            reply(text=f"{user} wrote a note."),
        )
    sessions: dict[str, Path] = {}
    sockets: dict[str, KernelSocket] = {}
    try:
        for user in (alice, bob):
            hub.spawn(user)
            kernel_id = hub.start_kernel(user, f"{user}.ipynb")
            sockets[user] = await hub.socket(user, kernel_id)
            cell = await sockets[user].execute(f"%%agent\nWrite a note for {user}.")
            assert cell.status == "ok", cell.text
            assert f"{user} wrote a note." in cell.text
            mine = [
                p for p in (hub.shared / ".mewcode" / "sessions").iterdir() if _owned(p) == user
            ]
            assert len(mine) == 1, [(p.name, _owned(p)) for p in mine]
            sessions[user] = mine[0]
        assert model.errors == [] and model.remaining == 0

        # bob, in his own kernel (as his own user), reaches for alice's things
        a_session, a_home = sessions[alice], hub.users[alice] / ".mewcode"
        probe = await sockets[bob].execute(
            "import os\n"
            f"for p in [{str(a_session / 'conversation.jsonl')!r}, {str(a_session / '.lock')!r}, "
            f"{str(a_home)!r}, {str(a_home / 'checkpoint.key')!r}]:\n"
            "    try:\n"
            "        (os.listdir if os.path.isdir(p) else lambda q: open(q).read())(p)\n"
            "        print('READ', p)\n"
            "    except PermissionError:\n"
            "        print('DENIED', p)\n"
        )
        assert "READ" not in probe.text and probe.text.count("DENIED") == 4, probe.text
        listing = await sockets[bob].execute("/sessions")
        resume = await sockets[bob].execute(f"%%agent --resume {a_session.name}\nGo on.")
        fork = await sockets[bob].execute(f"/resume {a_session.name} --fork")
    finally:
        for ws in sockets.values():
            ws.close()
    assert sessions[bob].name in listing.text and a_session.name not in listing.text
    assert f"belongs to another user ({alice})" in resume.text, resume.text
    assert resume.status == "error"
    assert f"belongs to another user ({alice})" in fork.text, fork.text

    # what each left on disk: theirs alone
    container = hub.shared / ".mewcode"
    for folder in (container, container / "sessions"):
        mode = stat.S_IMODE(folder.stat().st_mode)
        assert mode == 0o3770, f"{folder}: {mode:o}"  # the group's, sticky, the group kept
    for user, folder in sessions.items():
        assert _owned(folder) == user
        modes = _modes(folder)
        assert modes["."] == 0o700, modes
        assert all(not m & 0o077 for m in modes.values()), modes
        assert {_owned(p) for p in folder.rglob("*")} == {user}
        assert (hub.shared / f"{user}-note.txt").read_text() == f"from {user}\n"
        home = hub.users[user] / ".mewcode"
        home_modes = _modes(home)
        assert home_modes["."] == 0o700, home_modes
        assert "checkpoint.key" in home_modes and home_modes["checkpoint.key"] == 0o600
        assert all(not m & 0o077 for m in home_modes.values()), home_modes
        log = (folder / "conversation.jsonl").read_text()
        assert f"Write a note for {user}." in log
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["notebook"] == f"{user}.ipynb"  # JPY_SESSION_NAME, relative to the project
