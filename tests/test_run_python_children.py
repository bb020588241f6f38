"""run_python's child processes and the OS sandbox, in-process (``run_code``
with a real ``Sandbox``): only the run's thread is confined, everything is
put back after (also on error and timeout), an inactive sandbox changes
nothing. The kernel-level cases are in test_kernel_run_python_sandbox.py."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from magics.kernel_tools.children import confined
from magics.kernel_tools.execution import run_code
from mewcode_kernel.core.config import SandboxSettings
from mewcode_kernel.core.sandbox import Sandbox

from ._sandboxed import needs_bwrap, outside

__all__ = ["outside"]  # the fixture

ORIGINALS = (
    (subprocess.Popen, "_execute_child"),
    (os, "system"),
    (os, "fork"),
    (os, "execv"),
    (os, "posix_spawn"),
    (threading, "_start_new_thread"),
)


def originals() -> list[object]:
    return [getattr(owner, name) for owner, name in ORIGINALS]


def writes(path: Path) -> str:
    return f"import subprocess\nsubprocess.run(['sh', '-c', 'echo x > {path}'])\n"


@needs_bwrap
def test_the_runs_children_are_confined_and_everything_is_put_back(
    tmp_path: Path, outside: Path
) -> None:
    before = originals()
    shell = SimpleNamespace(user_ns={})
    box = Sandbox(tmp_path, SandboxSettings())
    result = run_code(shell, writes(outside / "child") + "1 / 0", timeout=30, sandbox=box)
    assert result.error is not None and "ZeroDivisionError" in result.error
    assert not (outside / "child").exists()
    assert originals() == before  # put back after the code raised
    timed = run_code(
        shell, "import subprocess\nsubprocess.run(['sleep', '30'])", timeout=0.5, sandbox=box
    )
    assert timed.timed_out
    assert originals() == before  # and after a timeout
    subprocess.run(["sh", "-c", f"echo x > {outside / 'after'}"], check=True)
    assert (outside / "after").exists()


@needs_bwrap
def test_other_threads_spawn_unconfined_during_the_run(tmp_path: Path, outside: Path) -> None:
    """An MCP server or a hook started by another thread while run_python runs
    is neither wrapped (again) nor refused; a thread the code starts is confined."""
    box = Sandbox(tmp_path, SandboxSettings())
    started = threading.Event()
    release = threading.Event()
    seen: dict[str, object] = {}

    def background() -> None:
        started.set()
        release.wait(30)
        subprocess.run(["sh", "-c", f"echo x > {outside / 'other-thread'}"], check=True)
        pid = os.fork()  # not refused off the run's thread
        if pid == 0:
            os._exit(0)
        seen["fork"] = os.waitpid(pid, 0)[1]

    worker = threading.Thread(target=background)
    worker.start()
    started.wait(30)
    code = (
        "import subprocess, threading\n"
        f"t = threading.Thread(target=subprocess.run, args=(['sh', '-c', 'echo x > {outside / 'code-thread'}'],))\n"
        "t.start(); t.join()\n"
        "release.set()\n"
        "worker.join(30)\n"
        f"subprocess.run(['sh', '-c', 'echo x > {outside / 'run-thread'}'])\n"
    )
    shell = SimpleNamespace(user_ns={"release": release, "worker": worker})
    result = run_code(shell, code, timeout=60, sandbox=box)
    assert result.error is None, result.error
    assert (outside / "other-thread").exists()
    assert seen["fork"] == 0
    assert not (outside / "code-thread").exists()
    assert not (outside / "run-thread").exists()


def test_without_an_active_sandbox_children_are_not_confined_but_get_the_command_environment(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a sandbox nothing is wrapped or refused, but what the code
    starts gets the environment every child process gets (no secret by any
    name); everything is put back after."""
    monkeypatch.setenv("MY_CLAUDE", "sk-ant-api03-no-sandbox-still-no-key-0123456789")
    before = originals()
    for box in (
        Sandbox.off(tmp_path),
        Sandbox(tmp_path, SandboxSettings(enabled=False)),
    ):
        with confined(box):
            assert originals()[2:5] == before[2:5]  # fork, exec, spawn: not refused
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            assert os.waitpid(pid, 0)[1] == 0
        assert originals() == before
        code = writes(outside / "plain") + (
            f"subprocess.run(['sh', '-c', 'env > {outside / 'env'}'])\n"
            f"os.system('env > {outside / 'system-env'}')\n"
        )
        result = run_code(SimpleNamespace(user_ns={"os": os}), code, timeout=30, sandbox=box)
        assert result.error is None, result.error
        assert (outside / "plain").exists()  # not confined: it can write outside
        for name in ("env", "system-env"):
            env = (outside / name).read_text()
            assert "PATH=" in env and "MY_CLAUDE" not in env and "sk-ant" not in env
            (outside / name).unlink()
        (outside / "plain").unlink()
        assert originals() == before


@needs_bwrap
def test_one_run_at_a_time(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, SandboxSettings())
    before = originals()
    with confined(box), pytest.raises(RuntimeError, match="already in place"), confined(box):
        pass
    assert originals() == before


@needs_bwrap
def test_popen_finds_programs_as_it_does_unconfined(tmp_path: Path) -> None:
    """A missing program raises FileNotFoundError (not bubblewrap's exit
    status); a relative one is found from ``cwd``, ``executable=`` is run."""
    tools = tmp_path / "tools"
    tools.mkdir()
    script = tools / "mark.sh"
    script.write_text('#!/bin/sh\necho "$0 $1" > marked.txt\n')
    script.chmod(0o755)
    code = (
        "import subprocess\n"
        "try:\n"
        "    subprocess.run(['no-such-program-mewcode'])\n"
        "except FileNotFoundError as exc:\n"
        "    print('missing:', exc.filename)\n"
        f"subprocess.run(['./mark.sh', 'relative'], cwd={str(tools)!r}, check=True)\n"
        f"subprocess.run(['ignored', 'exe'], executable={str(script)!r}, cwd={str(tmp_path)!r}, check=True)\n"
    )
    box = Sandbox(tmp_path, SandboxSettings())
    result = run_code(SimpleNamespace(user_ns={}), code, timeout=30, sandbox=box)
    assert result.error is None, result.error
    assert result.output == "missing: no-such-program-mewcode\n"
    assert (tools / "marked.txt").read_text() == "./mark.sh relative\n"
    assert (tmp_path / "marked.txt").read_text() == f"{script} exe\n"
