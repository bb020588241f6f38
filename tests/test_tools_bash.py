"""bash: output and exit codes, caps, environment, and that timeouts and
cancellation leave no process behind."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from mewcode_kernel.core.errors import ToolError
from mewcode_kernel.core.tools import RunContext, bash

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process checks read /proc"
)


@pytest.fixture
def ctx(tmp_path: Path) -> RunContext:
    return RunContext(root=tmp_path)


async def run(ctx: RunContext, command: str, **args: object) -> str:
    return await bash.call(ctx, {"command": command, **args})


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] != b"Z"


def pids(root: Path, *names: str) -> list[int]:
    return [int((root / n).read_text().split()[0]) for n in names]


async def wait_for_fifo(path: Path, bound: float = 30.0) -> bytes:
    """Wait (bounded, no polling) until a writer puts something into a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(bound):
            while True:
                ready = loop.create_future()
                loop.add_reader(fd, ready.set_result, None)
                try:
                    await ready
                finally:
                    loop.remove_reader(fd)
                data = os.read(fd, 4096)
                if data:
                    return data
    finally:
        os.close(fd)


async def test_output_and_exit_code(ctx: RunContext) -> None:
    assert await run(ctx, "echo hello; echo oops >&2") == "hello\noops\nexit code: 0"
    out = await run(ctx, "echo partial; exit 3")
    assert out == "partial\nexit code: 3 (FAILED)"
    assert await run(ctx, "true") == "(no output)\nexit code: 0"
    assert "killed by SIGKILL" in await run(ctx, "kill -9 $$")


async def test_runs_in_root_without_stdin(ctx: RunContext) -> None:
    out = await run(ctx, "pwd; cat; echo after-cat")
    assert out == f"{ctx.root}\nafter-cat\nexit code: 0"


async def test_secrets_are_not_passed_on(ctx: RunContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("MY_SERVICE_API_KEY", "sk-other")
    monkeypatch.setenv("TZ", "Europe/Paris")
    # only an allowlist passes: a variable no allowlist names stays behind
    monkeypatch.setenv("MEWCODE_HARMLESS", "not-allowlisted")
    out = await run(ctx, "env")
    assert "sk-ant-secret" not in out and "sk-other" not in out
    assert "TZ=Europe/Paris" in out and "MEWCODE_HARMLESS" not in out


async def test_long_output_keeps_head_and_tail(ctx: RunContext) -> None:
    out = await run(ctx, "seq 1 200000")
    lines = out.splitlines()
    assert lines[:3] == ["1", "2", "3"]
    assert lines[-2:] == ["200000", "exit code: 0"]
    assert "of output cut; showing the beginning and the end" in out
    assert len(out) < 32_000


async def test_timeout_kills_the_whole_group(ctx: RunContext) -> None:
    command = "echo $$ > sh.pid; sleep 300 & echo $! > bg.pid; echo started; sleep 300"
    with pytest.raises(ToolError) as exc:
        await run(ctx, command, timeout=1.5)
    assert "timed out after 1.5s" in str(exc.value) and "started" in str(exc.value)
    assert not any(alive(p) for p in pids(ctx.root, "sh.pid", "bg.pid"))


async def test_cancel_kills_the_whole_group(ctx: RunContext) -> None:
    fifo = ctx.root / "ready"
    os.mkfifo(fifo)
    command = (
        "echo $$ > sh.pid; sleep 300 & echo $! > bg.pid; "
        "bash -c 'echo $$ > fg.pid; echo go > ready; exec sleep 300'"
    )
    task = asyncio.create_task(run(ctx, command))
    await wait_for_fifo(fifo)
    started = pids(ctx.root, "sh.pid", "bg.pid", "fg.pid")
    assert all(alive(p) for p in started)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [p for p in started if alive(p)] == []


def running_with_arg(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                args = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if marker.encode() in args and alive(int(name)):
                found.append(int(name))
    return found


async def test_cancel_at_any_point_leaves_nothing(ctx: RunContext) -> None:
    # cancel after 0, 1, 2, ... turns of the event loop: before the spawn,
    # during it, and while the command runs
    for turns in range(15):
        marker = f"{300 + turns / 1000 + os.getpid() / 1e9:.9f}"
        task = asyncio.create_task(run(ctx, f"sleep {marker} & sleep {marker}"))
        for _ in range(turns):
            await asyncio.sleep(0)  # a bare yield to the loop, not a wait
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert running_with_arg(marker) == [], turns


async def test_background_leftovers_are_stopped(ctx: RunContext) -> None:
    out = await run(ctx, "sleep 300 & echo $! > bg.pid; echo done")
    assert out.startswith("done\n") and "background processes" in out
    assert out.endswith("exit code: 0")
    assert not alive(pids(ctx.root, "bg.pid")[0])


async def test_timeout_limits(ctx: RunContext) -> None:
    out = await run(ctx, "echo ok", timeout=5000)
    assert "above the maximum; used 600s" in out and out.endswith("exit code: 0")
    for bad in ({"command": "x", "timeout": 0}, {"command": "x", "timeout": "soon"}, {}):
        with pytest.raises(ToolError, match="invalid arguments for bash"):
            await bash.call(ctx, bad)
    with pytest.raises(ToolError, match="command is empty"):
        await run(ctx, "   ")
