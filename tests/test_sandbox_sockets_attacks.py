"""Security by attack: with ``sandbox.network: off`` a sandboxed command
reaches no host socket: not a unix socket file the host serves (in the
project, in ``$XDG_RUNTIME_DIR``, anywhere), not an abstract one, not the
host through vsock, not by creating the socket through io_uring or a
foreign system-call ABI. Python, ``curl --unix-socket`` and ``nc -U`` (when
installed) are tried. A socket the user lists in ``allow_unix_sockets``
stays reachable (the others stay closed); ``network: on`` is unchanged; on
an architecture without a seccomp filter the socket files are hidden and
``/sandbox`` says so. The setting is read from the user's config only.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mewcode_kernel.core.config import SandboxSettings, load_config
from mewcode_kernel.core.sandbox import Sandbox, sockets
from mewcode_kernel.core.sandbox.seccomp import filter_program, native_arch

from ._sandboxed import SUPPORT, needs_bwrap, run_in_sandbox

REPLY = "PONG-FROM-HOST"


class Server:
    """A unix socket server on the host answering each connection with
    ``REPLY`` (an HTTP response, so curl is happy too)."""

    def __init__(self, address: str | bytes) -> None:
        self.address = address
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(16)
        self.hits = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.hits += 1
                body = REPLY.encode()
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._thread.join(10)


@dataclass
class Hosts:
    root: Path
    runtime: Path
    project_sock: str
    runtime_sock: str
    abstract: bytes
    servers: list[Server]


@pytest.fixture
def hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hosts]:
    base = Path(tempfile.mkdtemp(prefix="mewcode-sock-", dir="/var/tmp"))
    root = base / "proj"
    runtime = base / "run-user"  # a fake $XDG_RUNTIME_DIR
    (runtime / "bus").mkdir(parents=True)
    root.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    project_sock = str(root / "dev.sock")
    runtime_sock = str(runtime / "bus" / "agent.sock")
    abstract = f"\0mewcode-test-{os.getpid()}-{id(base)}".encode()
    servers = [Server(project_sock), Server(runtime_sock), Server(abstract)]
    try:
        yield Hosts(root, runtime, project_sock, runtime_sock, abstract, servers)
    finally:
        for s in servers:
            s.close()
        shutil.rmtree(base, ignore_errors=True)


def _python_connect(address: str) -> str:
    return (
        'python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); '
        "a=sys.argv[1].encode().replace(b'@',b'\\0',1); s.settimeout(5); s.connect(a); "
        f"print(s.recv(200).decode())\" '{address}' 2>&1 | tail -1"
    )


def _routes(h: Hosts) -> dict[str, str]:
    abstract = "@" + h.abstract[1:].decode()
    routes = {
        "python-project": _python_connect(h.project_sock),
        "python-runtime": _python_connect(h.runtime_sock),
        "python-abstract": _python_connect(abstract),
        "python-relative": _python_connect("dev.sock"),
        "python-via-symlink": f"ln -s {h.runtime_sock} l.sock; " + _python_connect("l.sock"),
        "python-via-proc-root": _python_connect(f"/proc/self/root{h.runtime_sock}"),
        "python-socketpair-then-connect": 'python3 -c "import socket; a,b=socket.socketpair(); '
        f"a.connect('{h.project_sock}')\" 2>&1 | tail -1",
        "python-sendto-dgram": 'python3 -c "import socket; s=socket.socket(socket.AF_UNIX, '
        f"socket.SOCK_DGRAM); s.sendto(b'x', '{h.project_sock}')\" 2>&1 | tail -1",
    }
    if shutil.which("curl"):
        routes["curl-unix-socket"] = (
            f"curl -s --max-time 5 --unix-socket {h.runtime_sock} http://x/ 2>&1; "
            f"curl -s --max-time 5 --abstract-unix-socket {abstract[1:]} http://x/ 2>&1"
        )
    if shutil.which("nc"):
        routes["nc-U"] = f"nc -U -w 5 {h.project_sock} < /dev/null 2>&1"
    if shutil.which("socat"):
        routes["socat"] = f"socat - UNIX-CONNECT:{h.runtime_sock} < /dev/null 2>&1"
    return routes


def _box(root: Path, **settings: object) -> Sandbox:
    return Sandbox(root, SandboxSettings(**settings), support=SUPPORT)  # type: ignore[arg-type]


@needs_bwrap
async def test_network_off_reaches_no_host_socket(hosts: Hosts) -> None:
    box = _box(hosts.root, network="off")
    assert box.describe()["unix_socket_mode"] == "blocked"
    for name, command in _routes(hosts).items():
        out = await run_in_sandbox(hosts.root, command, sandbox=box)
        assert REPLY not in out, (name, out)
    assert [s.hits for s in hosts.servers] == [0, 0, 0]


@needs_bwrap
async def test_other_ways_to_a_host_socket_are_closed(hosts: Hosts) -> None:
    """vsock reaches the host past any network namespace; io_uring and the
    x32 and i386 system-call entry points would make sockets behind the
    filter's back."""
    arch = native_arch()
    if arch is None:
        pytest.skip("no seccomp filter on this architecture")
    probe = (
        "import ctypes, errno, socket\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def call(*a):\n"
        "    r = libc.syscall(*a); return r if r >= 0 else -ctypes.get_errno()\n"
        "for fam in (40, 1):\n"
        "    try: socket.socket(fam, socket.SOCK_STREAM); print(fam, 'open')\n"
        "    except OSError as e: print(fam, e.errno)\n"
        f"print('io_uring', call({arch.io_uring[0]}, 1, 0))\n"
        f"print('raw', call({arch.socket}, 1, 1, 0))\n"
        f"print('high-bits', call({arch.socket}, 0x100000001, 1, 0))\n"
        f"print('x32', call({arch.socket} | 0x40000000, 1, 1, 0))\n"
        "print('inet', call(%d, 2, 1, 0) >= 0)\n" % arch.socket
    )
    box = _box(hosts.root, network="off")
    out = await run_in_sandbox(hosts.root, f"python3 - <<'EOF'\n{probe}EOF", sandbox=box)
    lines = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    assert lines["40"] == "13" and lines["1"] == "13", out  # vsock, unix: EACCES
    assert lines["io_uring"] == "-13" and lines["raw"] == "-13", out
    assert lines["high-bits"] == "-13", out
    if arch.x32:
        assert lines["x32"] == "-13", out
    assert lines["inet"] == "True", out  # the empty namespace's loopback still works


@needs_bwrap
async def test_a_listed_socket_stays_reachable_and_the_others_do_not(hosts: Hosts) -> None:
    box = _box(hosts.root, network="off", allow_unix_sockets=(Path(hosts.runtime_sock),))
    info = box.describe()
    assert info["unix_socket_mode"] == "listed" and hosts.runtime_sock in info["allow_unix_sockets"]  # type: ignore[operator]
    allowed = await run_in_sandbox(hosts.root, _python_connect(hosts.runtime_sock), sandbox=box)
    assert REPLY in allowed, allowed
    for name, command in _routes(hosts).items():
        if hosts.runtime_sock in command:
            continue  # those name the listed socket
        out = await run_in_sandbox(hosts.root, command, sandbox=box)
        assert REPLY not in out, (name, out)
    vsock = await run_in_sandbox(
        hosts.root,
        'python3 -c "import socket; socket.socket(40, socket.SOCK_STREAM)" 2>&1 | tail -1',
        sandbox=box,
    )
    assert "Permission denied" in vsock  # the filter still closes the rest
    assert [s.hits for s in hosts.servers] == [0, 1, 0]


@needs_bwrap
async def test_without_a_filter_socket_files_are_hidden_and_it_says_so(
    hosts: Hosts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sockets, "native_arch", lambda machine=None: None)
    box = _box(hosts.root, network="off")
    info = box.describe()
    assert info["unix_socket_mode"] == "hidden"
    assert "no seccomp filter for this architecture" in str(info["unix_sockets"])
    for name in ("python-project", "python-runtime", "python-abstract", "python-via-symlink"):
        out = await run_in_sandbox(hosts.root, _routes(hosts)[name], sandbox=box)
        assert REPLY not in out, (name, out)
    assert [s.hits for s in hosts.servers] == [0, 0, 0]


def test_the_fallback_covers_the_usual_places(hosts: Hosts) -> None:
    found = sockets.find_socket_files()
    assert hosts.project_sock in found and hosts.runtime_sock in found
    policy = sockets.socket_policy(
        "off", [hosts.runtime_sock], machine="riscv64", env={"XDG_RUNTIME_DIR": str(hosts.runtime)}
    )
    assert policy.mode == "hidden" and policy.seccomp is None
    assert hosts.project_sock in policy.hidden and hosts.runtime_sock not in policy.hidden
    assert "riscv64" in policy.note


@needs_bwrap
async def test_network_on_is_unchanged(hosts: Hosts) -> None:
    box = _box(hosts.root)
    assert box.describe()["unix_socket_mode"] == "open"
    out = await run_in_sandbox(hosts.root, _python_connect(hosts.project_sock), sandbox=box)
    assert REPLY in out, out


def test_the_filter_program_is_well_formed() -> None:
    for machine in ("x86_64", "aarch64"):
        arch = native_arch(machine)
        assert arch is not None
        for allow_unix in (True, False):
            program = filter_program(arch, allow_unix=allow_unix)
            assert len(program) % 8 == 0 and 8 < len(program) < 512
    assert native_arch("riscv64") is None and native_arch("amd64") is not None


def test_only_the_users_config_lists_sockets(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "proj"
    (home / ".mewcode").mkdir(parents=True)
    root.mkdir()
    (home / ".mewcode" / "config.yaml").write_text(
        "sandbox:\n  allow_unix_sockets: [~/agent.sock, /run/x.sock]\n"
    )
    (root / ".mewcode.yaml").write_text(
        "sandbox:\n  network: 'off'\n  allow_unix_sockets: [/var/run/docker.sock]\n"
    )
    config = load_config(root, home=home, env={})
    listed = [str(p) for p in config.sandbox.allow_unix_sockets]
    assert "/var/run/docker.sock" not in listed
    assert "/run/x.sock" in listed and any(p.endswith("agent.sock") for p in listed)
    assert any(
        "allow_unix_sockets" in str(w) and str(root / ".mewcode.yaml") in str(w)
        for w in config.warnings
    )
