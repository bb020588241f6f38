# ruff: noqa: F811  (pytest fixtures imported from tests._kernel are used as arguments)
"""run_python's children in the OS sandbox, in a real ``mewcode`` kernel
driven by a scripted model: every way the code starts a process lands in
bubblewrap (nothing written outside the project, the project write works, no
API key in the child's environment), the ways that cannot are refused, and
the user's own cells afterwards spawn unconfined again."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mewcode_kernel.testing.wire import ScriptedServer, reply
from tests._fifo import Fifo
from tests._kernel import Kernel, jupyter_path, kernel, project, script, server  # noqa: F401
from tests._sandboxed import needs_bwrap, outside
from tests.test_kernel_notebook_tools import BOUND, headless_allow, result_text, tool_result

__all__ = ["headless_allow", "outside"]  # the fixtures

pytestmark = needs_bwrap

KEY = "sk-ant-api03-child-must-not-see-this-0123456789"
WAYS = ("run", "system", "popen", "shell", "asyncio", "bang", "getoutput")


@pytest.fixture
def api_key_in_kernel(kernel: Kernel) -> Iterator[None]:
    kernel.ok(f"import os; os.environ['ANTHROPIC_API_KEY'] = {KEY!r}")
    yield
    kernel.ok("del os.environ['ANTHROPIC_API_KEY']")


def test_every_way_of_starting_a_child_lands_in_the_sandbox(
    kernel: Kernel,
    script: ScriptedServer,
    project: Path,
    outside: Path,
    headless_allow: None,
    api_key_in_kernel: None,
) -> None:
    code = textwrap.dedent(
        f"""\
        import asyncio, os, subprocess, threading
        out = {str(outside)!r}
        subprocess.run(['sh', '-c', f'echo x > {{out}}/run'])
        os.system(f'echo x > {{out}}/system')
        os.popen(f'echo x > {{out}}/popen').read()
        subprocess.run(f'echo x > {{out}}/shell', shell=True)
        async def spawn():
            proc = await asyncio.create_subprocess_exec('sh', '-c', f'echo x > {{out}}/asyncio')
            return await proc.wait()
        # the kernel's loop runs on this thread: asyncio.run needs a thread of its own
        worker = threading.Thread(target=lambda: asyncio.run(spawn()))
        worker.start(); worker.join()
        get_ipython().system(f'echo x > {{out}}/bang; echo from-bang')
        print(get_ipython().getoutput(f'echo x > {{out}}/getoutput; echo from-getoutput'))
        subprocess.run(['sh', '-c', 'echo inside > in_project.txt; env > child_env.txt'])
        print('key in kernel:', 'ANTHROPIC_API_KEY' in os.environ)
        """
    )
    script.add(reply(tool_calls=[("run_python", {"code": code})]), reply(text="Done."))
    kernel.ok("%%agent --new\nSpawn some processes.")
    ran = result_text(script.received[-1])
    assert tool_result(script.received[-1]).get("is_error") is not True, ran
    assert "from-bang" in ran and "'from-getoutput']" in ran  # output captured, as IPython gives it
    assert "key in kernel: True" in ran
    assert sorted(p.name for p in outside.iterdir()) == []  # every way: read-only outside
    assert (project / "in_project.txt").read_text() == "inside\n"
    child_env = (project / "child_env.txt").read_text()
    assert "PATH=" in child_env
    assert "ANTHROPIC_API_KEY" not in child_env and KEY not in child_env
    # the user's own cell afterwards is not wrapped: the restore worked
    kernel.ok(
        "import subprocess, os\n"
        f"subprocess.run(['sh', '-c', 'echo x > {outside}/user-run'], check=True)\n"
        f"os.system('echo x > {outside}/user-system')\n"
    )
    assert sorted(p.name for p in outside.iterdir()) == ["user-run", "user-system"]


def test_what_cannot_be_wrapped_is_refused_and_reload_does_not_escape(
    kernel: Kernel, script: ScriptedServer, outside: Path, headless_allow: None
) -> None:
    code = textwrap.dedent(
        f"""\
        import importlib, os, subprocess, _posixsubprocess
        def fork_and_leave():
            if os.fork() == 0:
                os._exit(0)  # only if the guard failed: the copy of the kernel goes away
        attempts = {{
            'execv': lambda: os.execv('/bin/sh', ['sh', '-c', 'echo x > {outside}/execv']),
            'posix_spawn': lambda: os.posix_spawn('/bin/true', ['true'], {{}}),
            'fork': fork_and_leave,
            'spawnv': lambda: os.spawnv(os.P_WAIT, '/bin/true', ['true']),
            'fork_exec': lambda: _posixsubprocess.fork_exec(),
            'preexec_fn': lambda: subprocess.run(['true'], preexec_fn=lambda: None),
        }}
        importlib.reload(subprocess)
        attempts['reloaded'] = lambda: subprocess.run(['sh', '-c', 'echo x > {outside}/reloaded'])
        for name, attempt in attempts.items():
            try:
                attempt()
                print(name, 'RAN')
            except PermissionError as exc:
                print(name, 'refused:', 'OS sandbox' in str(exc))
        """
    )
    script.add(reply(tool_calls=[("run_python", {"code": code})]), reply(text="Done."))
    kernel.ok("%%agent --new\nTry the low-level ways.")
    ran = result_text(script.received[-1])
    for name in ("execv", "posix_spawn", "fork", "spawnv", "fork_exec", "preexec_fn", "reloaded"):
        assert f"{name} refused: True" in ran, ran
    assert "RAN" not in ran
    assert list(outside.iterdir()) == []
    # the reloaded subprocess works unconfined again in the user's cell
    kernel.ok(f"subprocess.run(['sh', '-c', 'echo x > {outside}/after'], check=True)")
    assert (outside / "after").exists()


def test_a_timed_out_run_puts_everything_back(
    kernel: Kernel, script: ScriptedServer, outside: Path, headless_allow: None
) -> None:
    code = "import subprocess\nsubprocess.run(['sleep', '30'])"
    script.add(
        reply(tool_calls=[("run_python", {"code": code, "timeout": 1})]), reply(text="Too slow.")
    )
    kernel.ok("%%agent --new\nSleep.")
    assert "[stopped after 1 s: the time limit]" in result_text(script.received[-1])
    kernel.ok(f"import os\nos.system('echo x > {outside}/after-timeout')")
    assert (outside / "after-timeout").exists()


def test_an_interrupted_run_puts_everything_back(
    kernel: Kernel, script: ScriptedServer, project: Path, outside: Path, headless_allow: None
) -> None:
    with Fifo(project / "child-started") as started:
        code = (
            f"import subprocess\nsubprocess.run(['sh', '-c', 'echo x > {started.path}; sleep 30'])"
        )
        script.add(reply(tool_calls=[("run_python", {"code": code})]), reply(text="Stopped."))
        msg_id = kernel.execute("%%agent --new\nWait for the child.")
        # written by the sandboxed child, in the project
        assert started.read_to_end(timeout=BOUND) == b"x\n"
    kernel.km.interrupt_kernel()
    cell = kernel.collect(msg_id, timeout=BOUND)
    assert cell.errors[0]["ename"] == "AgentInterrupted"
    kernel.ok(f"import subprocess\nsubprocess.run(['sh', '-c', 'echo x > {outside}/after'])")
    assert (outside / "after").exists()
    kernel.ok("%agent Go on.")  # the scripted reply to the interrupted call
