"""The ``bash`` tool: run a shell command in the project root.

The command runs in its own session and process group. When it times out or
the call is cancelled, the whole group gets SIGTERM, then SIGKILL after a
short grace, so background children die with it. Processes the command left
running in the background are stopped the same way when it exits (otherwise
they would hold the output pipe open); only a process that detaches itself
into a new session (``setsid``) survives. Output is reported as it arrives
(the run context's progress events), so a long command shows what it prints.

The environment is built by ``core.child_env`` under the session's rule: an
allowlist of the kernel's variables (what finds and runs tools, plus the
user's ``env_allowlist``), without provider keys and endpoints, without what
changes how bash starts (``BASH_ENV``, ``ENV``, ``CDPATH``, exported
functions), and without any variable holding a known secret, whatever its
name.

In a session with the OS sandbox active (``ctx.services.sandbox``), the
command runs inside it (see ``core.sandbox``). A command that fails the way
the sandbox makes commands fail (a read-only file system, a hidden path, no
network) may run again without it, but only after a person approves exactly
that; nobody else (no rule, no headless policy) can.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import signal
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ..child_env import ChildEnv
from ..errors import ToolError
from .base import tool
from .context import RunContext

__all__ = ["DEFAULT_TIMEOUT", "MAX_TIMEOUT", "bash", "command_env"]

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
HEAD_BYTES = 10_000
TAIL_BYTES = 20_000
KILL_GRACE = 2.0
DRAIN_TIMEOUT = 2.0
# how a command fails when the sandbox stopped it
_SANDBOX_FAILURE = re.compile(
    r"Read-only file system|Permission denied|Operation not permitted|Network is unreachable"
    # a protected path's stand-in (an empty read-only folder), a pinned folder
    r"|Is a directory|Device or resource busy"
    r"|Temporary failure in name resolution|Could not resolve host|^bwrap: |^mewcode-sandbox: ",
    re.MULTILINE,
)
_background: set[asyncio.Future[None]] = set()


@tool(
    read_only=False,
    kind="exec",
    family="command",
    rule_names=frozenset({"Bash"}),
    aliases=frozenset({"Bash"}),
    subject_arg="command",
    display_key="command",
    background_ok=True,
    sandboxed=True,
)
async def bash(
    ctx: RunContext,
    command: Annotated[str, Field(description="The bash command line to run.")],
    timeout: Annotated[  # noqa: ASYNC109 - the model-facing argument
        float | None,
        Field(
            gt=0,
            description=f"Seconds before the command is killed (default {DEFAULT_TIMEOUT:g}, max {MAX_TIMEOUT:g}).",
        ),
    ] = None,
) -> str:
    """Run a bash command in the project root and return its output.

    - stdout and stderr come back together, followed by `exit code: N`. A
      failing command is not an error of the tool: read the output and the
      exit code.
    - No stdin and no terminal: never run interactive programs (editors,
      pagers, prompts); pass flags like `-y` / `--no-pager`.
    - Default timeout 120 s, at most 600 s. On timeout the command and all
      its child processes are killed. Background processes (`&`) are stopped
      when the command returns.
    - Long output keeps its beginning and end; the middle is cut.
    - Each call starts a fresh shell in the project root: `cd` and variables
      do not carry over; chain with `&&` or use absolute paths.
    - Prefer the dedicated tools: read_file (not cat/head/tail), grep (not
      grep/rg), glob (not find/ls), edit_file / write_file (not sed/echo >).
    - Quote paths that contain spaces.
    """
    if not command.strip():
        raise ToolError("command is empty")
    limit = timeout or DEFAULT_TIMEOUT
    notes: list[str] = []
    if limit > MAX_TIMEOUT:
        notes.append(f"[timeout {limit:g}s is above the maximum; used {MAX_TIMEOUT:g}s]")
        limit = MAX_TIMEOUT
    cwd = ctx.root.expanduser()
    if not cwd.is_dir():
        raise ToolError(f"the project root {cwd} is not a directory")
    argv = ["/bin/bash", "-c", command]
    sandbox = ctx.services.sandbox if ctx.services is not None else None
    if sandbox is None or not sandbox.active:
        text, code = await _run(ctx, argv, cwd, limit, notes)
        return _format(text, code, notes)
    wrapped = sandbox.wrap(argv, cwd=cwd, read_only=ctx.read_only)
    text, code = await _run(ctx, wrapped, cwd, limit, notes)
    if code == 0 or not _SANDBOX_FAILURE.search(text):
        return _format(text, code, notes)
    if ctx.read_only:
        # a read-only role never runs unsandboxed: the read-only file system is its boundary
        notes.append("[read-only role: the file system is read-only for its commands]")
        return _format(text, code, notes)
    assert ctx.services is not None
    why = _SANDBOX_FAILURE.search(text)
    reason = (
        f"The command failed inside the OS sandbox ({why.group(0) if why else 'blocked'}). "
        "Run it again WITHOUT the sandbox? Unsandboxed, it can change files outside the "
        "project and read the paths the deny rules hide."
    )
    if not await ctx.services.ask_person(ctx, reason):
        notes.append(
            "[this may have failed because of the OS sandbox (writes outside the project, "
            "hidden paths or the network are blocked); only a person can let it run unsandboxed]"
        )
        return _format(text, code, notes)
    first = _format(text, code, [])
    retry_notes: list[str] = []
    text, code = await _run(ctx, argv, cwd, limit, retry_notes)
    retry_notes.insert(
        0, "[run again without the sandbox, approved by you; the sandboxed run said:]"
    )
    retry_notes.insert(1, first)
    return _format(text, code, [*notes, *retry_notes])


async def _run(
    ctx: RunContext, argv: Sequence[str], cwd: Path, limit: float, notes: list[str]
) -> tuple[str, int]:
    """Run ``argv`` as its own process group; its output and exit code."""
    loop = asyncio.get_running_loop()
    spawn = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: _Command(loop, lambda text: ctx.progress(output=text)),
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            env=ctx.child_env().build(),
        )
    )
    try:
        transport, proto = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # the command may already run (and have started children): stop it all
        await _finish_anyway(_abandon(spawn))
        raise
    pgid = transport.get_pid()  # the session leader: its pid is the group id
    try:
        try:
            await asyncio.wait_for(asyncio.shield(proto.exited), limit)
        except TimeoutError:
            await _stop(pgid, proto)
            await _drain(proto, notes)
            raise ToolError(
                f"command timed out after {limit:g}s; it was killed with its child processes.\n"
                f"Output so far:\n{proto.capture.text() or '(no output)'}"
            ) from None
        if _group_alive(pgid):
            await _terminate_group(pgid)
            notes.append("[background processes left running by the command were stopped]")
        await _drain(proto, notes)
    except asyncio.CancelledError:
        await _finish_anyway(_stop(pgid, proto))
        raise
    finally:
        transport.close()
    code = transport.get_returncode()
    return proto.capture.text(), -1 if code is None else code


def command_env(environ: Mapping[Any, Any] | None = None) -> dict[Any, Any]:
    """The environment for a command outside a session: ``core.child_env``'s
    default rule over ``environ`` (default ``os.environ``). A session's
    commands use its own rule (``RunContext.child_env``)."""
    return ChildEnv().build(os.environ if environ is None else environ)


def _format(text: str, code: int, notes: list[str]) -> str:
    if code == 0:
        status = "exit code: 0"
    elif code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        status = f"exit code: {code} (FAILED: killed by {name})"
    else:
        status = f"exit code: {code} (FAILED)"
    parts = [text.rstrip("\n") if text else "(no output)", *notes, status]
    return "\n".join(parts)


class _Capture:
    """Keeps the first ``HEAD_BYTES`` and the last ``TAIL_BYTES`` of a stream."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.dropped_lines = 0

    def feed(self, data: bytes) -> None:
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * TAIL_BYTES:
                self._trim()

    def _trim(self) -> None:
        cut = len(self.tail) - TAIL_BYTES
        if cut > 0:
            self.dropped += cut
            self.dropped_lines += self.tail.count(b"\n", 0, cut)
            del self.tail[:cut]

    def text(self) -> str:
        self._trim()
        if not self.dropped:
            return bytes(self.head + self.tail).decode("utf-8", "replace")
        marker = (
            f"\n\n[... {self.dropped} bytes ({self.dropped_lines} lines) of output cut; "
            "showing the beginning and the end ...]\n\n"
        )
        head = bytes(self.head).decode("utf-8", "replace")
        return head + marker + bytes(self.tail).decode("utf-8", "replace")


class _Command(asyncio.SubprocessProtocol):
    """Collects the merged output and notices the exit of the command itself,
    which can come long before its output closes (children may hold it)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, on_output: Callable[[str], None] | None = None
    ) -> None:
        self.capture = _Capture()
        self._on_output = on_output
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.exited: asyncio.Future[None] = loop.create_future()
        self.output_closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        raw = data if isinstance(data, bytes) else data.encode()
        self.capture.feed(raw)
        if self._on_output is not None:
            text = self._decoder.decode(raw)
            if text:
                self._on_output(text)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.output_closed.done():
            self.output_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


async def _drain(proto: _Command, notes: list[str]) -> None:
    """Wait for the end of output; give up if a detached process holds it."""
    done, _ = await asyncio.wait({proto.output_closed}, timeout=DRAIN_TIMEOUT)
    if not done:
        notes.append("[output may be incomplete: a detached process kept it open]")


async def _finish_anyway(cleanup: Coroutine[Any, Any, None]) -> None:
    """Run ``cleanup`` to the end even though the caller is being cancelled."""
    task = asyncio.ensure_future(cleanup)
    _background.add(task)
    task.add_done_callback(_background.discard)
    await asyncio.shield(task)


async def _abandon(spawn: asyncio.Future[tuple[asyncio.SubprocessTransport, _Command]]) -> None:
    try:
        transport, proto = await spawn
    except Exception:
        return
    try:
        await _stop(transport.get_pid(), proto)
    finally:
        transport.close()


async def _stop(pgid: int, proto: _Command) -> None:
    """Kill the command's process group and wait for the command to exit."""
    await _terminate_group(pgid)
    await asyncio.wait({proto.exited}, timeout=KILL_GRACE + 3)


async def _terminate_group(pgid: int) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left after a grace."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + KILL_GRACE
    while loop.time() < deadline:
        if not _group_alive(pgid):
            return
        await asyncio.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in the group."""
    try:
        names = os.listdir("/proc")
    except OSError:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == pgid:
            return True
    return False
