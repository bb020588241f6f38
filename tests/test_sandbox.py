"""The OS sandbox (bubblewrap) around ``bash``: what a sandboxed command can
and cannot touch, the approved retry without it, and the session's notice
when it is missing. Tests that start bubblewrap skip where it cannot run;
the "missing" path is driven by pointing the resolver elsewhere."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from mewcode_kernel.core import AgentSession
from mewcode_kernel.core.commands import run_command
from mewcode_kernel.core.config import SandboxSettings, load_config
from mewcode_kernel.core.conversation import Conversation
from mewcode_kernel.core.events import ApprovalRequested, Notice
from mewcode_kernel.core.permission import ApprovalAnswer, ApprovalRequest
from mewcode_kernel.core.sandbox import (
    BWRAP_ENV,
    Sandbox,
    SandboxPolicy,
    SandboxSupport,
    bwrap_argv,
    detect,
    find_bwrap,
    probe,
)
from mewcode_kernel.testing import ScriptedModel, collect, reply, tool_call

from ._sandboxed import SUPPORT, needs_bwrap, outside, run_in_sandbox, sandboxed_agent

__all__ = ["outside"]  # the fixture


async def bash_output(agent_of, root: Path, command: str, **kw) -> str:
    model = ScriptedModel([reply(tool_call("bash", {"command": command})), reply("ok")])
    agent = agent_of(root, model, **kw)
    await collect(agent.run(Conversation(), "run it"))
    return model.requests[1].messages[-1].tool_results[0].content


def _exists(path: str) -> bool:
    return os.path.exists(path)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "secrets").mkdir(parents=True)
    (root / "secrets" / "key.txt").write_text("TOP-SECRET-KEY\n")
    (root / "prod.env").write_text("TOKEN=PROD-ENV-SECRET\n")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "notes.txt").write_text("notes\n")
    return root


# ---- the command line ----------------------------------------------------------------


def test_bwrap_argv_mounts_in_order(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / "d").mkdir(parents=True)
    (root / "f.txt").write_text("x")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("")
    policy = SandboxPolicy(
        writable=(str(root),),
        readonly=(str(root / ".git" / "config"), str(root / "missing")),
        hidden=(str(root / "d"), str(root / "f.txt"), str(root / "nope")),
        network="off",
    )
    argv = bwrap_argv("/usr/bin/bwrap", policy, ["/bin/bash", "-c", "true"], cwd=str(root))
    text = " ".join(argv)
    assert argv[:8] == ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    order = [
        "--tmpfs /tmp",
        f"--bind {root} {root}",
        f"--ro-bind {root}/.git/config {root}/.git/config",
        f"--perms 0000 --tmpfs {root}/d --remount-ro {root}/d",
        f"--ro-bind /dev/null {root}/f.txt",
        "--unshare-pid",
        "--cap-drop ALL",
        "--unshare-net",
        f"--chdir {root} -- /bin/bash -c true",
    ]
    positions = [text.index(piece) for piece in order]
    assert positions == sorted(positions)
    assert "missing" not in text and "nope" not in text  # nothing made on the host


def test_network_on_shares_the_network(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", SandboxPolicy(writable=(str(tmp_path),)), ["true"])
    assert "--unshare-net" not in argv


# ---- finding bubblewrap --------------------------------------------------------------


def test_missing_bubblewrap_is_reported(tmp_path: Path) -> None:
    none_on_path = detect({"PATH": str(tmp_path)})
    assert not none_on_path.available and "not installed" in none_on_path.reason
    named = detect({BWRAP_ENV: str(tmp_path / "nope"), "PATH": os.environ["PATH"]})
    assert not named.available and BWRAP_ENV in named.reason
    assert find_bwrap({BWRAP_ENV: ""}) is None


def test_a_bubblewrap_that_cannot_start_is_unavailable(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    support = probe(str(fake))
    assert not support.available
    assert "No permissions to create new namespace" in support.reason
    assert find_bwrap({BWRAP_ENV: str(fake)}) == str(fake)


async def test_without_bubblewrap_commands_run_unsandboxed_and_say_so_once(
    project: Path,
) -> None:
    missing = SandboxSupport(available=False, reason="bubblewrap (bwrap) is not installed")
    model = ScriptedModel(
        [reply(tool_call("bash", {"command": "echo hi > made.txt"})), reply("one"), reply("two")]
    )
    session = AgentSession(
        project,
        config=load_config(project, home=project / "home", env={}),
        provider=model,
        mode="bypassPermissions",
        sandbox=Sandbox(project, SandboxSettings(), support=missing),
        home=project / "home",
    )
    first = await collect(session.run("go"))
    second = await collect(session.run("again"))
    said = [
        e.message
        for e in [*first, *second]
        if isinstance(e, Notice) and "without the OS sandbox" in e.message
    ]
    assert len(said) == 1 and "not installed" in said[0]
    assert (project / "made.txt").read_text() == "hi\n"
    assert not session.gate.sandboxed  # type: ignore[attr-defined]
    shown = await run_command(session, "/sandbox")
    assert "unavailable" in shown.markdown and "not installed" in shown.markdown


async def test_turned_off_by_the_user_no_notice(project: Path) -> None:
    box = Sandbox(project, SandboxSettings(enabled=False))
    assert not box.active and box.notice() is None
    assert box.wrap(["/bin/true"]) == ["/bin/true"]


# ---- what a sandboxed command can touch -----------------------------------------------


@needs_bwrap
async def test_writes_land_only_in_the_root_and_private_tmp(project: Path, outside: Path) -> None:
    home_file = Path.home() / "mewcode-pwned"
    out = await run_in_sandbox(
        project,
        f"echo in > inside.txt; echo out > {outside}/x.txt; echo t > /tmp/mewcode-private.txt;"
        f" cat /tmp/mewcode-private.txt; touch {home_file} 2>&1; echo done",
    )
    assert (project / "inside.txt").read_text() == "in\n"
    assert not (outside / "x.txt").exists()
    assert not _exists("/tmp/mewcode-private.txt")  # the sandbox's /tmp is its own
    assert not home_file.exists()
    assert out.count("Read-only file system") == 2 and "\nt\n" in out and "done" in out


@needs_bwrap
async def test_paths_read_deny_rules_cover_are_hidden(project: Path) -> None:
    out = await run_in_sandbox(
        project,
        "cat secrets/key.txt; ls secrets; cat prod.env; cat notes.txt",
        deny_reads=["./secrets/**", "*.env"],
    )
    assert "TOP-SECRET-KEY" not in out and "PROD-ENV-SECRET" not in out
    assert "notes" in out and out.count("Permission denied") == 3
    assert (project / "secrets" / "key.txt").read_text() == "TOP-SECRET-KEY\n"


@needs_bwrap
async def test_fresh_pid_namespace_and_proc(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-parent-only-0123456789")
    out = await run_in_sandbox(
        project,
        'echo "ppid=$PPID"; tr "\\0" "\\n" < /proc/$PPID/environ | grep -c API_KEY; '
        "ls /proc | grep -c '^[0-9]'",
    )
    assert "sk-ant-parent-only" not in out
    lines = out.splitlines()
    assert lines[0] == "ppid=1" and lines[1] == "0"
    assert int(lines[2]) < 10  # only the sandbox's own processes


@needs_bwrap
async def test_settings_that_run_later_are_read_only(project: Path) -> None:
    out = await run_in_sandbox(
        project,
        "echo '[core] fsmonitor = touch PWNED' >> .git/config; "
        "echo 'touch PWNED' > .git/hooks/pre-commit; echo ok",
    )
    assert (project / ".git" / "config").read_text() == "[core]\n"
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert out.count("Read-only file system") == 2


@needs_bwrap
async def test_network_on_and_off(project: Path) -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"pong\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    probe_cmd = (
        "python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', "
        f'{port}), timeout=5); print(s.recv(5).decode().strip())" 2>&1 | tail -1'
    )
    async with server:
        on = await run_in_sandbox(project, probe_cmd)
        off = await run_in_sandbox(project, probe_cmd, settings=SandboxSettings(network="off"))
    assert on.startswith("pong")
    assert "pong" not in off and "Connection refused" in off


@needs_bwrap
async def test_extra_writable_directories(project: Path, outside: Path) -> None:
    out = await run_in_sandbox(
        project,
        f"echo ok > {outside}/allowed.txt && cat {outside}/allowed.txt",
        settings=SandboxSettings(allow_write=(outside,)),
    )
    assert out.startswith("ok") and (outside / "allowed.txt").read_text() == "ok\n"


@needs_bwrap
async def test_background_processes_die_with_the_sandbox(project: Path) -> None:
    out = await run_in_sandbox(project, "(sleep 3; echo late > late.txt) & echo started")
    assert out.startswith("started")
    assert not (project / "late.txt").exists()


# ---- a command the sandbox stopped ----------------------------------------------------


@needs_bwrap
@pytest.mark.parametrize("answer", [True, False])
async def test_retry_without_the_sandbox_only_with_a_persons_yes(
    project: Path, outside: Path, answer: bool
) -> None:
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer(allow=answer)

    target = outside / "made-by-retry.txt"
    model = ScriptedModel([reply(tool_call("bash", {"command": f"touch {target}"})), reply("ok")])
    agent = sandboxed_agent(project, model, approval_handler=person)
    events = await collect(agent.run(Conversation(), "make it"))
    result = model.requests[1].messages[-1].tool_results[0].content
    [request] = asked
    assert "WITHOUT the sandbox" in request.reason and "Read-only file system" in request.reason
    assert any(isinstance(e, ApprovalRequested) for e in events)
    assert target.exists() is answer
    if answer:
        assert "run again without the sandbox, approved by you" in result
    else:
        assert "only a person can let it run unsandboxed" in result


@needs_bwrap
async def test_headless_never_retries_without_the_sandbox(
    project: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEWCODE_HEADLESS_APPROVAL", "allow")
    target = outside / "headless.txt"
    out = await bash_output(sandboxed_agent, project, f"touch {target}")
    assert not target.exists() and "only a person can let it run unsandboxed" in out


@needs_bwrap
async def test_the_session_reports_the_sandbox(project: Path) -> None:
    (project / ".mewcode.yaml").write_text(
        "permissions:\n  deny: ['Read(./secrets/**)']\nsandbox:\n  network: 'off'\n"
    )
    session = AgentSession(
        project,
        config=load_config(project, home=project / "home", env={}),
        provider=ScriptedModel([]),
        home=project / "home",
    )
    assert session.sandbox.active and session.gate.sandboxed  # type: ignore[attr-defined]
    shown = await run_command(session, "/sandbox")
    assert "**active**" in shown.markdown and SUPPORT.version in shown.markdown
    assert str(project / "secrets") in shown.markdown
    assert "| network | off |" in shown.markdown


@needs_bwrap
def test_a_program_named_under_tmp_runs_read_only_and_other_tmp_stays_private(
    project: Path,
) -> None:
    # A stdio MCP server or hook whose interpreter and script live in a clone
    # under /tmp: the sandbox's own /tmp would hide them, so the top folder of
    # what the command line names is shown read-only, and nothing else of /tmp.
    import subprocess
    import sys

    clone = Path(tempfile.mkdtemp(prefix="mewcode-clone-", dir="/tmp"))
    other = Path(tempfile.mkdtemp(prefix="mewcode-other-", dir="/tmp"))
    try:
        (clone / "pkg").mkdir()
        (clone / "pkg" / "helper.py").write_text("WORD = 'imported'\n")
        script = clone / "pkg" / "server.py"
        script.write_text(
            "import os, sys\n"
            "sys.path.insert(0, os.path.dirname(__file__))\n"
            "import helper\n"
            "print(helper.WORD)\n"
            f"print(os.path.exists({str(other / 'private.txt')!r}))\n"
            "try:\n"
            f"    open({str(script)!r}, 'a').write('x')\n"
            "except OSError as e:\n"
            "    print(type(e).__name__)\n"
            "print(sys.prefix)\n"
        )
        (other / "private.txt").write_text("private\n")
        box = Sandbox(project, SandboxSettings(), support=SUPPORT)
        done = subprocess.run(
            box.wrap([sys.executable, str(script)]), capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["imported", "False", "OSError", sys.prefix]
        assert script.read_text().endswith("sys.prefix)\n")  # not appended to
        # a bash -c string names no path: the clone is not shown to commands
        listed = subprocess.run(
            box.wrap(["bash", "-c", f"ls {clone}/pkg 2>&1; echo end"]),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "server.py" not in listed.stdout and "end" in listed.stdout
    finally:
        shutil.rmtree(clone, ignore_errors=True)
        shutil.rmtree(other, ignore_errors=True)
